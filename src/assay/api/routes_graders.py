"""OpenAI's grader test, ``/fine_tuning/alpha/graders/run`` and ``/validate`` (Azure OpenAI serves
both under ``/openai/v1`` too): one grader, as an eval's testing criterion is written, on one model
sample and one item.

A grader is run as any criterion is: a run of one item through the one door (``run_criteria``),
its sample the model's text. The run is kept in a scratch store of the server's (``ApiContext.scratch``),
so a project's evals, runs, rules and alerts never see it. What OpenAI reports of a grader's trouble
(``metadata.errors``) is read from the result's error: a python grader that raised, a judge's answer
that could not be read, a judge that could not be reached, a template naming a field that is not there.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from fastapi import APIRouter, Request

from assay.api.context import ApiContext, JsonBody, Owner, context
from assay.api.ratelimit import limited
from assay.dataset.readers import parse_json
from assay.errors import ConfigError, ModelUnreachable
from assay.evaluation import run_criteria
from assay.results import Result
from assay.results.criterion import Criterion, as_criterion
from assay.run.criteria import bind_criteria
from assay.store import DEFAULT_PROJECT

router = APIRouter()

GRADER_TYPES = ("string_check", "text_similarity", "python", "score_model", "label_model", "multi")
"""OpenAI's union of graders here, and ``label_model``, which its evals take (assay's runs do too)."""
MODEL_GRADERS = ("score_model", "label_model")
ERROR_FLAGS = (
    "formula_parse_error",
    "sample_parse_error",
    "truncated_observation_error",
    "unresponsive_reward_error",
    "invalid_variable_error",
    "other_error",
    "python_grader_server_error",
    "python_grader_runtime_error",
    "model_grader_server_error",
    "model_grader_refusal_error",
    "model_grader_parse_error",
)
ERROR_DETAILS = (
    "python_grader_server_error_type",
    "python_grader_runtime_error_details",
    "model_grader_server_error_details",
)


@router.post("/fine_tuning/alpha/graders/validate")
def validate_grader(request: Request, body: JsonBody, owner: Owner) -> dict[str, Any]:
    """The grader as given when a run could execute it; else a 400 saying what is wrong."""
    grader = _grader(body)
    _check(context(request), owner, grader)
    return {"grader": grader}


@router.post("/fine_tuning/alpha/graders/run", dependencies=[limited("runs")])  # a run, as any other
def run_grader(request: Request, body: JsonBody, owner: Owner) -> dict[str, Any]:
    """The grader's reward for ``model_sample`` (the sample's ``output_text``; its ``output_json``
    too when it is JSON) and ``item``, with OpenAI's metadata."""
    ctx = context(request)
    grader = _grader(body)
    sample_text = body.get("model_sample")
    if not isinstance(sample_text, str):
        raise ConfigError(
            "model_sample must be a string: the model's output the grader reads as {{sample.output_text}}"
        )
    item = body.get("item")
    if item is None:
        item = {}
    if not isinstance(item, dict):
        raise ConfigError(f"item must be an object (the dataset row of {{{{item.*}}}}), got {type(item).__name__}")
    _check(ctx, owner, grader)
    # A name of its own, by which its eval is found and deleted however the run ends.
    label = f"grader {grader['name']} {secrets.token_hex(6)}"
    started = time.perf_counter()
    try:
        _, items = run_criteria(
            [{"item": item, "sample": sample_of(sample_text)}],
            [_runnable(grader)],
            ctx.catalog(owner),
            models=ctx.models(),
            name=label,
            store=ctx.scratch(),
        )
    except ModelUnreachable as exc:
        seconds = time.perf_counter() - started
        return grader_run_object(grader, None, seconds, trouble="model_grader_server_error", why=exc.message)
    except ConfigError:  # the grader is sound (checked above): its templates name what the item lacks
        return grader_run_object(grader, None, time.perf_counter() - started, trouble="invalid_variable_error")
    finally:
        scratch = ctx.scratch()
        for made in scratch.evals_named(DEFAULT_PROJECT, label):  # read: nobody asks for it again
            scratch.delete_eval(DEFAULT_PROJECT, made.id)
    seconds = time.perf_counter() - started
    (result,) = items[0].results
    return grader_run_object(grader, result, seconds)


def _grader(body: dict[str, Any]) -> dict[str, Any]:
    grader = body.get("grader")
    if not isinstance(grader, dict):
        raise ConfigError("grader must be an object: a grader as an eval's testing_criteria take it")
    if grader.get("type") not in GRADER_TYPES:
        raise ConfigError(f"grader.type must be one of {', '.join(GRADER_TYPES)}, got {grader.get('type')!r}")
    if not isinstance(grader.get("name"), str) or not grader["name"].strip():
        raise ConfigError("grader.name must be a non-empty string")
    return grader


def _runnable(grader: dict[str, Any]) -> Criterion:
    """The grader as a run's criterion: OpenAI's ``text_similarity`` grader has no ``pass_threshold``
    here (the reward is the score), where an eval's criterion must have one; any mark will do."""
    if grader["type"] == "text_similarity" and "pass_threshold" not in grader:
        return as_criterion({**grader, "pass_threshold": 0.0})
    return as_criterion(grader)


def _check(ctx: ApiContext, owner: str, grader: dict[str, Any]) -> None:
    """Refuse what no run could execute, as an eval's creation refuses it (the grader's fields, its
    templates, its model, a multi grader's formula)."""
    bind_criteria([_runnable(grader)], ctx.catalog(owner), item_fields=None, has_sample=True, models=ctx.models())


def sample_of(text: str) -> dict[str, Any]:
    """The ``sample`` namespace of a model's text: as a chat completion's sample is written."""
    parsed, problem = parse_json(text)
    return {
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "output_text": text,
        "output_json": parsed if problem is None else None,
        "output_tools": [],
    }


def grader_run_object(
    grader: dict[str, Any], result: Result | None, seconds: float, *, trouble: str | None = None, why: str = ""
) -> dict[str, Any]:
    """OpenAI's ``GraderRunResponse`` for ``result``; None when the run did not get as far as a result,
    for the reason ``trouble`` flags (and ``why`` details, where OpenAI has a field for it)."""
    errors: dict[str, Any] = {flag: False for flag in ERROR_FLAGS} | {field: None for field in ERROR_DETAILS}
    usage = result.properties.get("usage") if result is not None else None
    usage = usage if isinstance(usage, dict) else None
    if trouble is not None:
        errors[trouble] = True
        if trouble == "model_grader_server_error":
            errors["model_grader_server_error_details"] = why or None
    elif result is not None and (result.status != "completed" or result.score is None):
        _flag(errors, grader, result)
    graded = result.properties.get("graders") if result is not None and grader["type"] == "multi" else None
    scores = dict(graded) if isinstance(graded, dict) else {}  # a multi grader's, by its graders' names
    reward = result.score if result is not None and result.status == "completed" and result.score is not None else 0.0
    model = usage.get("model") if usage is not None else None
    tokens = _tokens(usage) if usage is not None else None
    return {
        "reward": float(reward),
        "metadata": {
            "name": grader["name"],
            "type": grader["type"],
            "errors": errors,
            "execution_time": seconds,
            "scores": scores,
            "token_usage": tokens,
            "sampled_model_name": model if isinstance(model, str) else None,
        },
        "sub_rewards": dict(scores),
        "model_grader_token_usage_per_model": {model: tokens} if isinstance(model, str) and tokens else {},
    }


def _flag(errors: dict[str, Any], grader: dict[str, Any], result: Result) -> None:
    """The flag OpenAI raises for why ``result`` has no score."""
    error = result.properties.get("error")
    code = error.get("code") if isinstance(error, dict) else result.status
    reason = result.reason or result.status
    if code == "missing_input":  # a template named a field the item or the sample does not have
        errors["invalid_variable_error"] = True
    elif grader["type"] == "python":
        errors["python_grader_runtime_error"], errors["python_grader_runtime_error_details"] = True, reason
    elif grader["type"] in MODEL_GRADERS and result.status == "filtered":
        errors["model_grader_refusal_error"] = True
    elif grader["type"] in MODEL_GRADERS:
        errors["model_grader_parse_error"] = True
    else:
        errors["other_error"] = True


def _tokens(usage: dict[str, Any]) -> dict[str, int] | None:
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    cached = usage.get("cached_tokens")
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cached_tokens": cached if isinstance(cached, int) else 0,
    }
