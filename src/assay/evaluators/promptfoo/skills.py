"""promptfoo's ``skill-used``: which Agent Skills the target invoked, as promptfoo 0.123.1 judges it.

promptfoo reads the skill calls its Claude Agent SDK provider reports: each call of the ``Skill``
tool, named by its ``skill`` argument, the failed ones left out. assay reads them from the sample:
a ``skill_calls`` list a target reported (``{name, source, path, is_error}``), else the calls of a
``Skill`` tool among the sample's ``output_items`` (a call whose output is an error is a failed one).
"""

from __future__ import annotations

import json
import math
from typing import Any

from assay.errors import ItemError
from assay.evaluators.promptfoo.assertion import Assertion
from assay.evaluators.promptfoo.checks import Seen, Verdict
from assay.evaluators.promptfoo.trace import matches_pattern

SKILL_TOOL = "Skill"


def skill_calls(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """The skills the sample's target invoked, in order, failed calls left out."""
    reported = sample.get("skill_calls")
    if isinstance(reported, list):
        calls = reported
    else:
        items = [item for item in sample.get("output_items") or [] if isinstance(item, dict)]
        failed = {
            item.get("call_id")
            for item in items
            if item.get("type") == "function_call_output" and item.get("error") is not None
        }
        calls = []
        for item in items:
            if item.get("type") != "function_call" or item.get("name") != SKILL_TOOL:
                continue
            try:
                arguments = json.loads(item.get("arguments") or "{}")
            except ValueError:
                continue
            skill = arguments.get("skill") if isinstance(arguments, dict) else None
            if isinstance(skill, str) and skill.strip():
                calls.append(
                    {
                        "name": skill.strip(),
                        "input": arguments,
                        "is_error": item.get("call_id") in failed,
                        "source": "tool",
                    }
                )
    return [
        c for c in calls if isinstance(c, dict) and isinstance(c.get("name"), str) and c.get("is_error") is not True
    ]


def _shown(call: dict[str, Any]) -> str:
    details = ", ".join(str(part) for part in (call.get("source"), call.get("path")) if part)
    return f"{call['name']} ({details})" if details else str(call["name"])


def _matches(call: dict[str, Any], matcher: dict[str, Any]) -> bool:
    if matcher.get("name") and call["name"] != matcher["name"]:
        return False
    return not (matcher.get("pattern") and not matches_pattern(call["name"], matcher["pattern"]))


def _count(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ItemError(f"skill-used assertion object {field} must be a finite non-negative integer")
    if value != int(value) or value < 0:
        raise ItemError(f"skill-used assertion object {field} must be a finite non-negative integer")
    return int(value)


def skill_used(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    calls = skill_calls(seen.sample)
    actual = ", ".join(_shown(call) for call in calls) or "(none)"
    value = assertion.get("value")
    names: list[str] | None = None
    if isinstance(value, str) and value.strip():
        names = [value.strip()]
    elif isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        names = [v.strip() for v in value]
    if names is not None:
        missing = [name for name in names if not any(_matches(call, {"name": name}) for call in calls)]
        found = [name for name in names if any(_matches(call, {"name": name}) for call in calls)]
        passed = not found if inverse else not missing
        if inverse:
            reason = (
                f"Forbidden skill(s) were not used: {', '.join(names)}"
                if passed
                else f"Forbidden skill(s) were used: {', '.join(found)}. Actual skills: {actual}"
            )
        elif passed:
            reason = f"Observed required skill(s): {', '.join(names)}. Actual skills: {actual}"
        else:
            reason = f"Missing required skill(s): {', '.join(missing)}. Actual skills: {actual}"
        return Verdict(passed, 1.0 if passed else 0.0, reason)
    if not isinstance(value, dict):
        raise ItemError("skill-used assertion must have a string, string array, or object value")
    name = value["name"].strip() if isinstance(value.get("name"), str) else None
    pattern = value["pattern"].strip() if isinstance(value.get("pattern"), str) else None
    if not name and not pattern:
        raise ItemError("skill-used assertion object must include a name or pattern property")
    low = _count("min", value["min"]) if "min" in value else None
    high = _count("max", value["max"]) if "max" in value else None
    if low is not None and high is not None and high < low:
        raise ItemError("skill-used assertion object max must be greater than or equal to min")
    matcher = {"name": name, "pattern": pattern}
    matching = [call for call in calls if _matches(call, matcher)]
    label = pattern or name or "*"
    if inverse:
        if low is not None or (high is not None and high != 0):
            raise ItemError(
                "not-skill-used object assertions only support name/pattern with no count bounds, or max: 0"
            )
        passed = not matching
        reason = (
            f'Forbidden skill "{label}" was not used. Actual skills: {actual}'
            if passed
            else f'Forbidden skill "{label}" was used {len(matching)} time(s). '
            f"Matches: {', '.join(_shown(call) for call in matching)}"
        )
        return Verdict(passed, 1.0 if passed else 0.0, reason)
    least = low if low is not None else 0 if high is not None else 1
    passed = len(matching) >= least and (high is None or len(matching) <= high)
    reason = f'Matched skill "{label}" {len(matching)} time(s)'
    reason += f" (expected at least {least})" if high is None else f" (expected {least}-{high})"
    if matching:
        reason += f". Matches: {', '.join(_shown(call) for call in matching)}"
    return Verdict(passed, 1.0 if passed else 0.0, reason)
