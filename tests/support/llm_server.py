"""A local OpenAI-compatible server for tests: a real HTTP process whose answers tests script.

Run as ``python -m tests.support.llm_server PORT`` (0: any free port; it prints the one it holds).
It serves ``POST /v1/chat/completions`` (and the same under ``/openai/deployments/<name>/chat/completions`` for Azure clients) and
``POST /v1/responses``; with ``"stream": true`` both answer as server-sent events, the way
OpenAI streams them. ``POST /v1/embeddings`` answers each text's letter counts as its vector;
``POST /v1/moderations`` flags the categories a text names in brackets (``[violence]``). Tests control it over HTTP:

- ``POST /_script`` with ``{"rules": [...], "default": {...}, "faults": {...}, "latency_ms": N}``:
  a rule ``{"match": "text", "reply": {...}}`` answers requests whose messages (or Responses ``instructions``) contain ``text``
  (with ``"chance": p`` and ``"otherwise": {...}`` it answers ``reply`` to a share p of requests,
  decided by a hash of the request: the same request always gets the same answer);
  a reply is ``{"content": "..."}``, ``{"tool_calls": [...]}`` (with ``"hosted": [...]``, Responses
  output items put before them: reasoning, a hosted tool's call), ``{"function_call": {...}}``, ``{"status": 500}``,
  ``{"status": 429, "retry_after": 1, "code": "rate_limit_exceeded"}``, ``{"drop": true}`` or
  ``{"raw": "<html>..."}`` (a 200 whose body is not JSON, as a misconfigured proxy sends),
  ``{"refusal": "..."}`` (structured outputs' refusal: chat's ``refusal`` beside no content, a
  Responses ``refusal`` part),
  ``{"content_filter": "prompt", "categories": {"violence": "medium"}}`` (Azure's 400 for a filtered
  prompt) or ``{"content_filter": "completion", "content": "partial", ...}`` (``finish_reason: content_filter``).
  ``faults`` ``{"rate_429": 0.3, "rate_500": 0.05, "retry_after": 1, "seed": 1}`` injects errors at
  random; ``hold_after: N`` answers N requests, then holds every later one unanswered until the
  script is replaced (the new script answers them) or reset (a provider that stops answering, for
  tests that must interrupt a run mid-way without racing it); ``fill_schemas: true`` answers a request asking for a JSON schema (that no rule answers) with a small
  instance of it; ``refuse_json_schema: true`` answers 400 to any request asking for
  ``response_format: json_schema`` (a server without structured output); ``rpm`` enforces a requests-per-minute budget (smoothly, one second of burst) with 429s;
  ``tpm`` a tokens-per-minute budget the same way, charging each request its prompt tokens and its
  ``max_tokens`` at arrival (or, without one, the completion's tokens once written), as OpenAI counts;
  ``limit_headers: true`` states the budgets in OpenAI's ``x-ratelimit-*`` headers on every answer;
  ``chars_per_token`` (default 4) is the server's tokenizer: its ``usage`` counts and its charges.
- ``"entra": {"audience": "https://cognitiveservices.azure.com", "lifetime": 4}`` in the script turns on
  Entra ID mode: model calls need a bearer token minted for that audience, not yet expired and not
  in ``"revoked": [...]`` (else Azure's 401); ``GET /msi/token`` mints them as App Service's managed
  identity endpoint does.
- ``GET /_stats`` returns ``{"requests": N, "completions": N, "by_status": {...}, "arrivals": [t, ...], "last": {...}, "auth_refused": N, "tokens_seen": N, "minted": N, "charged": [[t, tokens], ...],
  "last_request": {path, query, headers, api_key, authorization}}``.
- The Batch API (``tests.support.llm_batches``): files, batches, their output; ``batch_hold: true``
  in the script keeps batches in progress; ``/_stats`` counts ``batches_created`` and ``batched_requests`` and gives ``batch_statuses`` and
  ``batch_endpoints``.
- ``POST /_reset`` clears the script and the counters; a request still waiting then (held, or in
  its latency) is dropped unanswered and uncounted: it was an earlier test's.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import sys
import threading
import time
import urllib.parse
from collections import Counter
from http import HTTPStatus
from typing import Any

from tests.support.llm_batches import Batches


class State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.resets = 0
        """How many resets there have been: a request held across one is dropped, not answered."""
        self.reset()

    def reset(self) -> None:
        self.resets += 1
        self.script: dict[str, Any] = {}
        self.random = random.Random(1)
        self.requests = 0
        self.completions = 0
        self.by_status: Counter[int] = Counter()
        self.arrivals: list[float] = []
        """When each request arrived (monotonic seconds): rates as the provider sees them."""
        self.last: dict[str, Any] = {}
        self.last_request: dict[str, Any] = {}
        self.tokens = 0.0
        self.refilled = time.monotonic()
        self.token_level = 0.0
        """The tokens-per-minute bucket (``tpm``); ``tokens`` above is the requests bucket."""
        self.token_refilled = time.monotonic()
        self.budgets_open = False
        self.charged: list[tuple[float, float]] = []
        """(arrival, tokens) of each request the token budget let through, final charges included."""
        self.auth_refused = 0
        """Model calls answered 401 in Entra ID mode."""
        self.tokens_seen: set[str] = set()
        """The distinct bearer tokens model calls carried in Entra ID mode."""
        self.minted = 0

    def choose(self, body: dict[str, Any]) -> dict[str, Any]:
        """The reply for this request: a fault, an over-budget 429, a matching rule or the default."""
        with self.lock:
            self.requests += 1
            self.arrivals.append(time.monotonic())
            self.last = body
            if self.requests > self.script.get("hold_after", self.requests):
                return {"hold": self.script}
            if (
                self.script.get("refuse_json_schema")
                and (body.get("response_format") or {}).get("type") == "json_schema"
            ):
                return {"status": 400}  # a server without structured output
            faults = self.script.get("faults") or {}
            roll = self.random.random()
            if roll < faults.get("rate_429", 0):
                return {"status": 429, "retry_after": faults.get("retry_after", 1)}
            if roll < faults.get("rate_429", 0) + faults.get("rate_500", 0):
                return {"status": 500}
            refused = self._over_budget(body)
            if refused is not None:
                return refused
        text = json.dumps(body.get("messages") or body.get("input") or body, ensure_ascii=False)
        if isinstance(body.get("instructions"), str):  # the Responses API's system prompt is matched too
            text = body["instructions"] + "\n" + text
        with self.lock:
            for rule in self.script.get("rules", []):
                if rule.get("match", "") in text and rule.get("times", 1) != 0:
                    if "times" in rule:  # a rule with "times": N answers N requests, then stands aside
                        rule["times"] -= 1
                    if "chance" in rule:  # {"chance": p, "reply": ..., "otherwise": ...}: decided by the request
                        roll = int(hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:8], 16)
                        return dict(rule["reply"] if roll / 0xFFFFFFFF < rule["chance"] else rule["otherwise"])
                    return dict(rule["reply"])
        schema = _asked_schema(body)
        if self.script.get("fill_schemas") and schema is not None:
            return {"content": json.dumps(instance_of(schema))}
        return dict(self.script.get("default") or {"content": '{"reason": "default reply", "score": 3}'})

    def _refill(self) -> None:
        now = time.monotonic()
        if not self.budgets_open:  # an idle provider's budgets are whole
            self.budgets_open = True
            self.refilled = self.token_refilled = now - 1.0
        if self.script.get("rpm"):
            rate = self.script["rpm"] / 60.0
            self.tokens = min(rate, self.tokens + (now - self.refilled) * rate)
        if self.script.get("tpm"):
            rate = self.script["tpm"] / 60.0
            self.token_level = min(rate, self.token_level + (now - self.token_refilled) * rate)
        self.refilled = self.token_refilled = now

    def _over_budget(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """A 429 when this request exceeds a budget (each a bucket refilled at rate/60 per second
        holding one second's worth), else None, having charged it."""
        rpm, tpm = self.script.get("rpm"), self.script.get("tpm")
        if not rpm and not tpm:
            return None
        self._refill()
        if rpm and self.tokens < 1:
            return {"status": 429, "retry_after_ms": int((1 - self.tokens) / (rpm / 60.0) * 1000) + 1}
        charge = prompt_tokens_of(body) + capped_completion(body)
        if tpm and self.token_level < charge:
            return {"status": 429, "retry_after_ms": int((charge - self.token_level) / (tpm / 60.0) * 1000) + 1}
        if rpm:
            self.tokens -= 1
        if tpm:
            self.token_level -= charge
            self.charged.append((time.monotonic(), charge))
        return None

    def charge_completion(self, tokens: int) -> None:
        """An uncapped completion's tokens, charged once written."""
        if self.script.get("tpm"):
            with self.lock:
                self._refill()
                self.token_level -= tokens
                self.charged.append((time.monotonic(), tokens))

    def limit_headers(self) -> dict[str, str]:
        """OpenAI's ``x-ratelimit-*`` headers for the budgets, when the script states them."""
        if not self.script.get("limit_headers"):
            return {}
        headers = {}
        with self.lock:
            self._refill()
            for kind, per_minute, level in (
                ("requests", self.script.get("rpm"), self.tokens),
                ("tokens", self.script.get("tpm"), self.token_level),
            ):
                if per_minute:
                    rate = per_minute / 60.0
                    headers[f"x-ratelimit-limit-{kind}"] = str(per_minute)
                    headers[f"x-ratelimit-remaining-{kind}"] = str(max(0, int(level)))
                    headers[f"x-ratelimit-reset-{kind}"] = f"{max(0, int((rate - level) / rate * 1000))}ms"
        return headers


def chars_per_token() -> float:
    return float(STATE.script.get("chars_per_token", 4))


def prompt_tokens_of(body: dict[str, Any]) -> int:
    """The server's count of a request's prompt tokens (its ``usage.prompt_tokens``)."""
    return max(1, int(len(json.dumps(body.get("messages") or body.get("input") or "")) / chars_per_token()))


def capped_completion(body: dict[str, Any]) -> int:
    return int(body.get("max_tokens") or body.get("max_completion_tokens") or body.get("max_output_tokens") or 0)


def _asked_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks its answer to follow (chat's ``response_format`` or the
    Responses API's ``text.format``), if any."""
    chat = body.get("response_format") or {}
    if chat.get("type") == "json_schema":
        return (chat.get("json_schema") or {}).get("schema")
    responses = (body.get("text") or {}).get("format") or {}
    return responses.get("schema") if responses.get("type") == "json_schema" else None


def instance_of(schema: dict[str, Any]) -> Any:
    """A small value that follows ``schema``: a generator, attacker or simulated user scripted to
    answer in the shape it asked for, with words that say they are scripted."""
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for union in ("anyOf", "oneOf"):
        if schema.get(union):
            return instance_of(schema[union][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return {name: instance_of(sub) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        items = schema.get("items") or {"type": "string"}
        keyed = next((n for n, sub in (items.get("properties") or {}).items() if "enum" in sub), None)
        if keyed is not None:  # one entry per value of the key: a score for every rubric dimension
            return [{**instance_of(items), keyed: value} for value in items["properties"][keyed]["enum"]]
        return [instance_of(items) for _ in range(max(1, schema.get("minItems", 1)))]
    if kind in ("integer", "number"):
        return schema.get("maximum", schema.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "a scripted answer"


STATE = State()
BATCHES = Batches()


def batch_held() -> bool:
    return bool(STATE.script.get("batch_hold"))


Reply = tuple[int, Any, dict[str, str]]
"""Status, a JSON payload (or the bytes of an event stream, or raw text) and extra headers."""


def route(method: str, path: str, body: dict[str, Any]) -> Reply | None:
    """The response for one request, or None to drop the connection."""
    if method == "GET" and path == "/_stats":
        with STATE.lock:
            stats = {
                "requests": STATE.requests,
                "completions": STATE.completions,
                "by_status": {str(k): v for k, v in STATE.by_status.items()},
                "last": STATE.last,
                "last_request": STATE.last_request,
                "arrivals": STATE.arrivals,
                "auth_refused": STATE.auth_refused,
                "tokens_seen": len(STATE.tokens_seen),
                "minted": STATE.minted,
                "charged": STATE.charged,
                "batches_created": BATCHES.created,
                "batched_requests": BATCHES.batched_requests,
                "batch_statuses": {batch_id: batch["status"] for batch_id, batch in BATCHES.batches.items()},
                "batch_endpoints": {batch_id: batch["endpoint"] for batch_id, batch in BATCHES.batches.items()},
            }
        return 200, stats, {}
    if method == "POST" and path == "/_script":
        with STATE.lock:
            STATE.script = body
            STATE.random = random.Random((body.get("faults") or {}).get("seed", 1))
        return 200, {"ok": True}, {}
    if method == "POST" and path.endswith("/embeddings"):
        return embeddings(body)
    if method == "POST" and path.endswith("/moderations"):
        return moderations(body)
    if method == "POST" and path == "/_reset":
        with STATE.lock:
            STATE.reset()
            BATCHES.reset()
        return 200, {"ok": True}, {}
    return None


TOKEN_MARK = "entra~"
"""Tokens this server accepts in Entra ID mode: ``entra~<resource>~<expires_on>~<nonce>``
(refused once expired, or when the script's ``revoked`` lists it), minted by
its ``/msi/token`` (an App Service managed identity endpoint) or by ``tests.support.entra``'s fake ``az``."""


def mint(resource: str, lifetime: float) -> tuple[str, int]:
    expires_on = int(time.time() + lifetime)
    return f"{TOKEN_MARK}{resource}~{expires_on}~{random.getrandbits(48):x}", expires_on


def entra_refusal(path: str, headers: dict[str, str]) -> Reply | None:
    """In Entra ID mode (``"entra": {"audience": ...}`` in the script), a 401 as Azure answers it for
    a model call without a bearer token this server minted, for another audience, or expired."""
    entra = STATE.script.get("entra")
    if entra is None or path.startswith("/_") or path == "/msi/token":
        return None
    scheme, _, token = headers.get("authorization", "").partition(" ")
    parts = token.removeprefix(TOKEN_MARK).split("~") if token.startswith(TOKEN_MARK) else []
    valid = (
        scheme.lower() == "bearer"
        and len(parts) == 3
        and parts[0] == entra.get("audience", parts[0])
        and parts[1].isdigit()
        and int(parts[1]) > time.time()
        and token not in entra.get("revoked", ())
    )
    with STATE.lock:
        if valid:
            STATE.tokens_seen.add(token)
            return None
        STATE.auth_refused += 1
    message = "Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired."
    return 401, {"error": {"code": "401", "message": message}}, {}


def managed_identity_token(query: str, headers: dict[str, str]) -> Reply:
    """App Service's managed identity endpoint (``IDENTITY_ENDPOINT``): a token for ``resource``
    living ``entra.lifetime`` seconds (default an hour), for the secret ``IDENTITY_HEADER`` names."""
    params = dict(urllib.parse.parse_qsl(query))
    if headers.get("x-identity-header") != (STATE.script.get("entra") or {}).get("identity_header", "local-identity"):
        return 401, {"error": "invalid identity header"}, {}
    resource = params.get("resource", "")
    token, expires_on = mint(resource, float((STATE.script.get("entra") or {}).get("lifetime", 3600)))
    with STATE.lock:
        STATE.minted += 1
    payload = {"access_token": token, "expires_on": str(expires_on), "resource": resource, "token_type": "Bearer"}
    return 200, payload, {}


def filter_verdicts(flagged: dict[str, str] | None) -> dict[str, Any]:
    """Azure's content filter verdicts: every category, ``flagged`` ones (category: severity) filtered."""
    flagged = flagged if flagged is not None else {"violence": "medium"}
    verdicts: dict[str, Any] = {
        name: {"filtered": name in flagged, "severity": flagged.get(name, "safe")}
        for name in ("hate", "self_harm", "sexual", "violence")
    }
    verdicts["jailbreak"] = {"filtered": "jailbreak" in flagged, "detected": "jailbreak" in flagged}
    return verdicts


def prompt_filtered(flagged: dict[str, str] | None) -> dict[str, Any]:
    """Azure OpenAI's 400 for a prompt its content filter stopped, as the service words it."""
    return {
        "error": {
            "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management "
            "policy. Please modify your prompt and retry. To learn more about our content filtering policies "
            "please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
            "type": None,
            "param": "prompt",
            "code": "content_filter",
            "status": 400,
            "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": filter_verdicts(flagged)},
        }
    }


def embeddings(body: dict[str, Any]) -> Reply:
    """Deterministic embeddings: each text's letter counts (a-z), so cosine similarity is computable."""
    texts = body.get("input")
    texts = [texts] if isinstance(texts, str) else list(texts or [])
    with STATE.lock:
        STATE.requests += 1
        STATE.last = body
    vectors = [[float(str(text).lower().count(chr(97 + i))) for i in range(26)] for text in texts]
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    tokens = sum(len(str(t).split()) for t in texts)
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return 200, {"object": "list", "data": data, "model": body.get("model", "embed"), "usage": usage}, {}


MODERATION_CATEGORIES = ("harassment", "hate", "self-harm", "sexual", "violence")


def moderations(body: dict[str, Any]) -> Reply:
    """Deterministic moderation: a text flags each category it names in brackets (``[violence]``),
    scored 0.9; the input as a string, a list of strings or of ``{type: text, text}`` parts."""
    given = body.get("input")
    parts = [given] if isinstance(given, str) else list(given or [])
    texts = [part.get("text", "") if isinstance(part, dict) else str(part) for part in parts]
    with STATE.lock:
        STATE.requests += 1
        STATE.last = body
    results = []
    for text in texts:
        named = {c: f"[{c}]" in text for c in MODERATION_CATEGORIES}
        scores = {c: 0.9 if flagged else 0.01 for c, flagged in named.items()}
        results.append({"flagged": any(named.values()), "categories": named, "category_scores": scores})
    return 200, {"id": f"modr-{STATE.requests}", "model": body.get("model", "moderation"), "results": results}, {}


async def completion(path: str, body: dict[str, Any]) -> Reply | None:
    resets = STATE.resets
    reply = STATE.choose(body)
    while "hold" in reply and STATE.resets == resets:
        await asyncio.sleep(0.05)
        if STATE.script is not reply["hold"]:
            reply = STATE.choose(body)
    latency = reply.get("latency_ms", STATE.script.get("latency_ms", 0))
    if latency:
        await asyncio.sleep(latency / 1000)
    if reply.get("drop") or STATE.resets != resets:
        # A reset came while this request waited: it is an earlier test's (whose client may be long
        # gone, killed mid-run), and answered it would count among the next test's completions.
        return None
    if "raw" in reply:
        return 200, str(reply["raw"]), {}
    if reply.get("content_filter") == "prompt":
        return 400, prompt_filtered(reply.get("categories")), {}
    status = reply.get("status", 200)
    if status == 429:
        headers = {}
        if "retry_after_ms" in reply:
            headers["retry-after-ms"] = str(reply["retry_after_ms"])
        if "retry_after" in reply:
            headers["retry-after"] = str(reply["retry_after"])
        code = reply.get("code", "rate_limit_exceeded")
        error = {
            "message": "Rate limit reached",
            "type": "requests" if code != "insufficient_quota" else code,
            "param": None,
            "code": code,
        }
        return 429, {"error": error}, headers
    if status >= 400:
        return (
            status,
            {"error": {"message": "scripted failure", "type": "server_error", "param": None, "code": None}},
            {},
        )
    with STATE.lock:
        STATE.completions += 1
    prompt_tokens = prompt_tokens_of(body)
    content = reply.get("content")
    completion_tokens = max(1, int(len(content or "") / chars_per_token()))
    if not capped_completion(body):
        STATE.charge_completion(completion_tokens)
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    model = body.get("model", "test-model")
    if path.endswith("/chat/completions"):
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reply.get("refusal"):  # structured outputs' refusal: no content, the refusal beside it
            message.update(content=None, refusal=reply["refusal"])
        if reply.get("tool_calls"):
            message["tool_calls"] = reply["tool_calls"]
        if reply.get("function_call"):  # the legacy functions API's one call
            message["function_call"] = reply["function_call"]
        finish = "tool_calls" if reply.get("tool_calls") else "function_call" if reply.get("function_call") else "stop"
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
        if body.get("logprobs") and reply.get("logprobs"):  # the token log probabilities the rule gives
            tokens = [
                {"token": f"t{i}", "logprob": value, "bytes": None, "top_logprobs": []}
                for i, value in enumerate(reply["logprobs"])
            ]
            choice["logprobs"] = {"content": tokens}
        if reply.get("content_filter") == "completion":  # Azure cut the answer: what it wrote so far, and why
            choice.update(
                finish_reason="content_filter", content_filter_results=filter_verdicts(reply.get("categories"))
            )
        answer = {
            "id": f"chatcmpl-{STATE.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [choice],
            "usage": usage,
        }
        return 200, (chat_events(answer) if body.get("stream") else answer), {}
    if path.endswith("/invocations"):  # an agent on the invocations protocol: free-form JSON in and out
        return 200, {"output_text": content or "", "session_id": f"s{STATE.requests}"}, {}
    calls = [
        {
            "type": "function_call",
            "call_id": c.get("id"),
            "name": c["function"]["name"],
            "arguments": c["function"].get("arguments", "{}"),
        }
        for c in reply.get("tool_calls") or []
    ]
    output = [
        *(reply.get("hosted") or []),  # items a hosted agent adds: reasoning, a file search's call
        *calls,
        {
            "type": "message",
            "id": f"msg_{STATE.requests}",
            "role": "assistant",
            "status": "completed",
            "content": (
                [{"type": "refusal", "refusal": reply["refusal"]}]
                if reply.get("refusal")
                else [{"type": "output_text", "text": content or "", "annotations": []}]
            ),
        },
    ]
    response = {
        "id": f"resp_{STATE.requests}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": prompt_tokens,
            "output_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return 200, (response_events(response) if body.get("stream") else response), {}


def chat_events(answer: dict[str, Any]) -> bytes:
    """A chat completion as ``chat.completion.chunk`` events: the text in pieces, then the finish."""
    message = answer["choices"][0]["message"]
    base = {
        "id": answer["id"],
        "object": "chat.completion.chunk",
        "created": answer["created"],
        "model": answer["model"],
    }
    text = message.get("content") or ""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": text[i : i + 8]} for i in range(0, len(text), 8)]
    for index, call in enumerate(message.get("tool_calls") or []):
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        deltas.append({"tool_calls": [{"index": index, "function": {"arguments": call["function"]["arguments"]}}]})
    chunks = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append(
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": answer["choices"][0]["finish_reason"]}]}
    )
    chunks.append({**base, "choices": [], "usage": answer["usage"]})
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def response_events(response: dict[str, Any]) -> bytes:
    """A Responses API answer as its event stream: created, each output item with its text in
    deltas, completed; numbered as OpenAI numbers them."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}}
    ]
    for index, item in enumerate(response["output"]):
        where = {"output_index": index, "item_id": item.get("id", f"fc_{index}")}
        if item["type"] != "message":
            events += [
                {"type": "response.output_item.added", "output_index": index, "item": item},
                {"type": "response.output_item.done", "output_index": index, "item": item},
            ]
            continue
        text = "".join(part["text"] for part in item["content"])
        empty = {"type": "output_text", "text": "", "annotations": []}
        events.append(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "status": "in_progress", "content": []},
            }
        )
        events.append({"type": "response.content_part.added", **where, "content_index": 0, "part": empty})
        events += [
            {
                "type": "response.output_text.delta",
                **where,
                "content_index": 0,
                "delta": text[i : i + 8],
                "logprobs": [],
            }
            for i in range(0, len(text), 8)
        ]
        events.append({"type": "response.output_text.done", **where, "content_index": 0, "text": text, "logprobs": []})
        events.append(
            {"type": "response.content_part.done", **where, "content_index": 0, "part": {**empty, "text": text}}
        )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": response})
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n".encode()
        for n, e in enumerate(events)
    )


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """HTTP/1.1 with keep-alive and Content-Length bodies: all an OpenAI client sends."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {
                k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)
            }
            raw = await reader.readexactly(int(headers.get("content-length") or 0))
            content_type = headers.get("content-type", "")
            if content_type.startswith("multipart/"):  # a file upload (the Batch API's input)
                body = {"__multipart__": raw, "__content_type__": content_type}
            else:
                body = json.loads(raw or b"{}")
            path, _, query = target.partition("?")
            if not path.startswith("/_"):
                with STATE.lock:
                    STATE.last_request = {
                        "path": path,
                        "query": query,
                        "headers": headers,
                        "api_key": headers.get("api-key"),
                        "authorization": headers.get("authorization"),
                    }
            refused = entra_refusal(path, headers) if method == "POST" else None
            if refused is not None:
                reply = refused
            elif path.endswith(("/chat/completions", "/responses", "/invocations")) and method == "POST":
                reply = await completion(path, body)
                if reply is not None:
                    reply = (reply[0], reply[1], {**reply[2], **STATE.limit_headers()})
            elif method == "GET" and path == "/msi/token":
                reply = managed_identity_token(query, headers)
            elif (batched := BATCHES.route(method, path, body, completion, batch_held)) is not None:
                reply = batched
            else:
                reply = route(method, path, body) or (404, {"error": {"message": f"no route {path}"}}, {})
            if reply is None:
                break
            status, payload, extra = reply
            events, raw = isinstance(payload, bytes), isinstance(payload, str)
            data = payload if events else payload.encode() if raw else json.dumps(payload).encode()
            kind = "text/event-stream" if events else "text/html" if raw else "application/json"
            lines_out = [
                f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
                f"Content-Type: {kind}",
                f"Content-Length: {len(data)}",
                *(f"{k}: {v}" for k, v in extra.items()),
            ]
            writer.write(("\r\n".join(lines_out) + "\r\n\r\n").encode() + data)
            await writer.drain()
            with STATE.lock:
                STATE.by_status[status] += 1
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(port: int) -> None:
    server = await asyncio.start_server(serve_connection, "127.0.0.1", port, backlog=1024)
    # The port it holds (0: the system chose one), so whoever started it reaches this server only.
    sys.stdout.write(f"listening on {server.sockets[0].getsockname()[1]}\n")
    sys.stdout.flush()
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
