"""OpenAI's model graders: ``label_model`` picks one of ``labels``; ``score_model`` gives a number.

Both render their ``input`` message templates per item and ask the configured model for JSON.
An answer that cannot be used after one repair is an error result with the raw answer kept.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from assay.errors import ConfigError, ItemError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score
from assay.evaluators.judges.judge import CallLog, ask_json
from assay.evaluators.judges.parse import JudgeAnswerError, answer_object, number_in_range
from assay.llm import Model
from assay.messages import MessageFormatError, OtherPart, normalize

MEDIA: dict[str, Literal["image", "audio"]] = {"input_image": "image", "image_url": "image", "input_audio": "audio"}


def _messages(rendered: Any, model: Model) -> list[dict[str, Any]]:
    """The rendered ``input`` as chat messages: text parts joined, image and audio parts passed on as
    chat parts to a model that takes them (and refused, naming the model, for one that does not)."""
    try:
        messages = normalize(rendered, where="input")
    except MessageFormatError as exc:
        raise ItemError(str(exc)) from None
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.role if message.role != "tool" else "user"
        media = [part.raw for part in message.content if isinstance(part, OtherPart) and part.raw.get("type") in MEDIA]
        if not media:
            out.append({"role": role, "content": message.text})
            continue
        parts: list[dict[str, Any]] = [{"type": "text", "text": message.text}] if message.text else []
        for raw in media:
            modality = MEDIA[raw["type"]]
            if not model.config.takes(modality):
                raise ItemError(
                    f"the grader model {model.name!r} ({model.config.model}) does not take {modality} input",
                    details={"hint": f"use a model that does, or set modalities: [text, {modality}] in its entry"},
                )
            parts.append(_chat_part(raw))
        out.append({"role": role, "content": parts})
    return out


def _chat_part(raw: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's grader input parts as chat-completions content parts."""
    if raw["type"] == "input_image":
        image = raw.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if not isinstance(url, str) or not url:
            raise ItemError("an input_image part needs an image_url (a URL or a data: URL)")
        return {"type": "image_url", "image_url": {"url": url, "detail": raw.get("detail") or "auto"}}
    if raw["type"] == "input_audio":
        audio = raw.get("input_audio")
        if not isinstance(audio, dict) or not audio.get("data"):
            raise ItemError("an input_audio part needs input_audio: {data: <base64>, format: wav|mp3}")
        return {"type": "input_audio", "input_audio": {"data": audio["data"], "format": audio.get("format", "wav")}}
    return raw


def _schema(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    """A grader's answer as a strict JSON schema (``response_format``), as OpenAI's graders ask for it."""
    schema = {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


async def _ask_json(
    model: Model, messages: list[dict[str, Any]], instruction: str, **params: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    def read(text: str, spent: CallLog) -> tuple[dict[str, Any], dict[str, Any]]:
        return answer_object(text), spent.usage()

    prompt = [*messages, {"role": "user", "content": instruction}]
    return await ask_json(model, prompt, read, instruction, **params)


def label_model(model: Model, labels: list[str], passing_labels: list[str]) -> Evaluator:
    if not labels or not all(isinstance(label, str) for label in labels):
        raise ConfigError("label_model needs 'labels': a list of label strings")
    if not passing_labels or not set(passing_labels) <= set(labels):
        raise ConfigError("label_model 'passing_labels' must be a non-empty subset of 'labels'")
    instruction = f'Answer with only a JSON object {{"label": <one of {json.dumps(labels)}>}}.'
    shape = _schema("label", {"label": {"type": "string", "enum": list(labels)}})

    async def evaluate(inputs: dict[str, Any]) -> Score:
        messages = _messages(inputs["input"], model)
        answer, usage = await _ask_json(model, messages, instruction, temperature=0, response_format=shape)
        label = answer.get("label")
        if label not in labels:
            raise ItemError(f"the grader model chose {label!r}, not one of {labels}", details={"usage": usage})
        passed = label in passing_labels
        return Score(1.0 if passed else 0.0, passed=passed, label=str(label), properties={"usage": usage})

    return evaluate


def score_model(
    model: Model,
    range: list[float] | None = None,
    pass_threshold: float | None = None,  # noqa: A002 - OpenAI's name
    sampling_params: dict[str, Any] | None = None,
) -> Evaluator:
    if range is not None and len(range) != 2:
        raise ConfigError(f"score_model range {range!r} must be two numbers, [low, high]")
    low, high = (range or [0.0, 1.0])[:2]
    if not low < high:
        raise ConfigError(f"score_model range {range!r} must be [low, high] with low < high")
    params = dict(sampling_params or {})
    params.setdefault("temperature", 0)
    if "max_completions_tokens" in params:  # OpenAI's grader spells it so
        params["max_tokens"] = params.pop("max_completions_tokens")
    params = {
        k: v for k, v in params.items() if k in ("temperature", "top_p", "seed", "max_tokens", "reasoning_effort")
    }
    instruction = (
        f'Answer with only a JSON object {{"steps": [{{"description": "...", "conclusion": "..."}}], '
        f'"result": <a number from {low:g} to {high:g}>}}.'
    )

    step = {
        "type": "object",
        "properties": {"description": {"type": "string"}, "conclusion": {"type": "string"}},
        "required": ["description", "conclusion"],
        "additionalProperties": False,
    }
    shape = _schema(
        "score",
        {"steps": {"type": "array", "items": step}, "result": {"type": "number", "minimum": low, "maximum": high}},
    )

    async def evaluate(inputs: dict[str, Any]) -> Score:
        messages = _messages(inputs["input"], model)
        answer, usage = await _ask_json(model, messages, instruction, response_format=shape, **params)
        try:
            value = number_in_range(answer.get("result"), low, high, field="result")
        except JudgeAnswerError as exc:
            raise ItemError(f"the grader model's result is unusable: {exc}", details={"usage": usage}) from None
        passed = None if pass_threshold is None else value >= pass_threshold
        steps = answer.get("steps") if isinstance(answer.get("steps"), list) else []
        return Score(value, passed=passed, properties={"usage": usage, "steps": steps})

    return evaluate


LABEL_MODEL = EvaluatorSpec(
    name="label_model",
    description="OpenAI grader: the model picks a label; passes when it is a passing label.",
    category="graders",
    required_inputs=["input"],
    metrics=[Metric(name="label_model", type="boolean", min_value=0, max_value=1, threshold=1.0)],
    init_parameters={"model": {"type": "string"}, "labels": {"type": "array"}, "passing_labels": {"type": "array"}},
    factory=label_model,
)
SCORE_MODEL = EvaluatorSpec(
    name="score_model",
    description="OpenAI grader: the model gives a number in range; passes at pass_threshold.",
    category="graders",
    required_inputs=["input"],
    metrics=[Metric(name="score_model", type="continuous", min_value=0, max_value=1, threshold=None)],
    init_parameters={
        "model": {"type": "string"},
        "range": {"type": "array"},
        "pass_threshold": {"type": "number"},
        "sampling_params": {"type": "object"},
    },
    factory=score_model,
)
