"""Endpoint evaluators: an HTTP endpoint you run scores each item (Foundry's endpoint-based evaluators).

    {"url": "https://evals.example.com/score", "headers": {"Authorization": "Bearer ..."},
     "timeout": 30, "max_retries": 3, "threshold": 0.5}

Each item's inputs (query, response, context, ground_truth, messages, tool calls and definitions,
as mapped) are POSTed as a JSON object; the endpoint answers with a JSON object holding ``score``
(or a number under the evaluator's name), and optionally ``passed`` (or ``result``: pass/fail),
``reason`` and ``properties``. Timeouts, connection errors, 429s and 5xx are retried with backoff
like model calls; anything else is that item's error. From ``assay serve`` and ``assay worker``
only hosts the operator allows are called (``assay.outbound``).
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import aiohttp
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.errors import ConfigError, ItemError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score
from assay.outbound import OutboundRefused, PinnedResolver, check_url

INPUTS = ["query", "response", "context", "ground_truth", "messages", "tool_calls", "tool_definitions"]
RETRIED = {408, 409, 429, 500, 502, 503, 504}


class EndpointDefinition(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(default=30.0, gt=0, le=600)
    max_retries: int = Field(default=3, ge=0, le=10)
    threshold: float | None = None
    """The pass mark on ``score`` when the endpoint does not say whether the item passed."""


def parse_endpoint(content: str, where: str) -> EndpointDefinition:
    try:
        definition = EndpointDefinition.model_validate_json(content)
    except ValidationError as exc:
        problem = exc.errors()[0]
        field = ".".join(str(p) for p in problem["loc"]) or "definition"
        hint = 'e.g. {"url": "https://...", "headers": {}}'
        raise ConfigError(f"{where}: {field}: {problem['msg']}", hint=hint) from None
    if not definition.url.startswith(("http://", "https://")):
        raise ConfigError(f"{where}: url: {definition.url!r} is not an http(s) URL")
    return definition


def endpoint_factory(name: str, definition: EndpointDefinition) -> Any:
    metric = name.split(".")[-1]

    def endpoint() -> Evaluator:
        async def evaluate(inputs: dict[str, Any]) -> Score:
            purpose = f"evaluator {name}"
            try:  # the policy of the process that runs it, when it runs it
                check_url(definition.url, purpose)
                answer = await _post(definition, {k: v for k, v in inputs.items() if v is not None}, purpose)
            except OutboundRefused as exc:
                raise ItemError(f"{exc.message} ({exc.hint})" if exc.hint else exc.message) from None
            return _score(answer, metric, definition.threshold)

        return evaluate

    return endpoint


async def _post(definition: EndpointDefinition, body: dict[str, Any], purpose: str) -> dict[str, Any]:
    """The endpoint's answer; each connection made to an address the policy checked, no redirect followed."""
    delay, problem = 0.5, ""
    timeout = aiohttp.ClientTimeout(total=definition.timeout)
    connector = aiohttp.TCPConnector(resolver=PinnedResolver(purpose), use_dns_cache=False)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        for attempt in range(definition.max_retries + 1):
            if attempt:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
            try:
                async with session.post(
                    definition.url, json=body, headers=definition.headers, allow_redirects=False
                ) as response:
                    status, text = response.status, await response.text()
            except TimeoutError:
                problem = f"no answer within {definition.timeout:g} s"
                continue
            except aiohttp.ClientError as exc:
                problem = f"cannot reach the endpoint ({type(exc).__name__})"
                continue
            if status in RETRIED:
                problem = f"the endpoint answered {status}"
                continue
            if status >= 400:
                raise ItemError(f"the endpoint answered {status}: {text[:300]}")
            if status >= 300:
                raise ItemError(f"the endpoint answered {status}, a redirect; assay follows none (give its final URL)")
            try:
                answer = json.loads(text)
            except ValueError:
                raise ItemError(f"the endpoint's answer is not JSON: {text[:200]!r}") from None
            if not isinstance(answer, dict):
                raise ItemError("the endpoint's answer must be a JSON object with a score")
            return answer
    raise ItemError(f"{problem} (after {definition.max_retries + 1} attempts)")


def _score(answer: dict[str, Any], metric: str, threshold: float | None) -> Score:
    value = answer.get("score", answer.get(metric))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ItemError(f"the endpoint's answer has no numeric score: {json.dumps(answer)[:200]}")
    passed = answer.get("passed")
    if not isinstance(passed, bool):
        result = answer.get("result", answer.get(f"{metric}_result"))
        passed = {"pass": True, "fail": False}.get(str(result).lower()) if result is not None else None
    if passed is None and threshold is not None:
        passed = value >= threshold
    reason = answer.get("reason", answer.get(f"{metric}_reason"))
    known = {"score", metric, "passed", "result", f"{metric}_result", "reason", f"{metric}_reason", "properties"}
    properties = dict(answer["properties"]) if isinstance(answer.get("properties"), dict) else {}
    properties.update({k: v for k, v in answer.items() if k not in known})
    return Score(float(value), passed=passed, reason=None if reason is None else str(reason), properties=properties)


def endpoint_spec(name: str, version: str, content: str, where: str) -> EvaluatorSpec:
    definition = parse_endpoint(content, where)
    return EvaluatorSpec(
        name=name,
        version=version,
        evaluator_type="custom",
        category="endpoint",
        description=f"Scored by the endpoint at {definition.url}.",
        required_inputs=[],
        optional_inputs=INPUTS,
        supported_evaluation_levels=["turn", "conversation"],
        metrics=[Metric(name=name.split(".")[-1], type="continuous", min_value=0, max_value=1, threshold=None)],
        init_parameters={},
        factory=endpoint_factory(name, definition),
    )
