"""Read a judge's answer: JSON (bare, fenced or inside prose), the legacy ``<S1>``/``<S2>`` tags, or
a bare number (the answer of the peer's older prompts, its similarity judge's among them)."""

from __future__ import annotations

import re
from typing import Any

from assay.llm.structured import json_object

LEGACY_SCORE = re.compile(r"<S2>\D*?(\d+(?:\.\d+)?)\D*?</S2>", re.DOTALL)
LEGACY_REASON = re.compile(r"<S1>(.*?)</S1>", re.DOTALL)
BARE_NUMBER = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*")


class JudgeAnswerError(ValueError):
    """The answer has no usable verdict; the message says what was wrong."""


def answer_object(text: str) -> dict[str, Any]:
    """The JSON object in a judge's answer, wherever it sits; legacy tags become an object too."""
    found = json_object(text)
    if found is not None:
        return found
    bare = BARE_NUMBER.fullmatch(text)
    if bare:
        return {"score": float(bare.group(1)), "reason": ""}
    legacy = LEGACY_SCORE.search(text)
    if legacy:
        reason = LEGACY_REASON.search(text)
        return {"score": float(legacy.group(1)), "reason": reason.group(1).strip() if reason else ""}
    raise JudgeAnswerError("the answer holds no JSON object")


def number_in_range(value: Any, low: float, high: float, field: str = "score") -> float:
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise JudgeAnswerError(f"{field} {value!r} is not a number") from None
    if not isinstance(value, (int, float)):
        raise JudgeAnswerError(f"{field} is missing or not a number ({value!r})")
    if not low <= value <= high:
        raise JudgeAnswerError(f"{field} {value:g} is outside {low:g}..{high:g}")
    return float(value)


def flag(value: Any, field: str = "label") -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        return value.strip().lower() in ("true", "yes")
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise JudgeAnswerError(f"{field} must be true or false, got {value!r}")
