"""Model calls that must return structure (simulated users, generators, attackers): ask for a JSON
schema (``response_format: json_schema``); a server that refuses that (a 400) is asked again
without it, and the answer is parsed either way, JSON found wherever it sits in the text."""

from __future__ import annotations

import json
import re
from typing import Any

from assay.llm.model import Completion, Model, ModelError

FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


async def ask_structured(
    model: Model, messages: list[dict[str, Any]], name: str, schema: dict[str, Any], **params: Any
) -> tuple[dict[str, Any] | None, Completion]:
    """(the answer's JSON object, or None when it holds none; the completion)."""
    response_format = {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    try:
        completion = await model.generate(messages, response_format=response_format, **params)
    except ModelError as exc:
        if exc.status != 400:
            raise
        completion = await model.generate(messages, **params)  # a server without structured output
    return json_object(completion.text), completion


def json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (whole, fenced, or embedded), else None."""
    candidates = [text.strip(), *(m.group(1).strip() for m in FENCE.finditer(text))]
    start = text.find("{")
    if start >= 0:
        candidates.append(text[start : text.rfind("}") + 1])  # prose around one object
    decoder = json.JSONDecoder()
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None
