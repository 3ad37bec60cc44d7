"""promptfoo's trajectory assertions: ``trajectory:tool-used``, ``-tool-sequence``,
``-tool-args-match`` and ``-step-count``, and the trajectory summary ``trajectory:goal-success``
shows its grader, read as promptfoo 0.123.1 reads them.

A trajectory is a trace's spans in time order, each read as a step: a tool call (a span with a tool
name among its attributes), a command, a search, reasoning, a message, or a plain span; the
assertions match steps by type and by name patterns (``*`` and ``?``, case-insensitive).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from assay.errors import ItemError
from assay.evaluators.promptfoo.assertion import Assertion
from assay.evaluators.promptfoo.checks import Seen, Verdict
from assay.evaluators.promptfoo.trace import expected_range, is_number, js, matches_pattern, spans_of

ABSENT: Any = object()
"""A key not given, told apart from one given as null (JavaScript's ``undefined`` and ``null``)."""

_TOOL_FAMILIES: list[tuple[str, list[str], list[str], list[str], list[str]]] = [
    # (prefix, name suffixes, argument suffixes, more name keys, more argument keys)
    ("tool", [".name", "_name"], [".args", ".arguments", ".input", "_args", "_arguments", "_input"], ["tool"], []),
    ("function", [".name", "_name"], [".args", ".arguments", ".input", "_args", "_arguments"], [], []),
    ("ai.toolCall", [".name"], [".args", ".arguments", ".input"], [], []),
    (
        "gen_ai.tool",
        [".name"],
        [".args", ".arguments", ".input"],
        [],
        ["gen_ai.tool.call.args", "gen_ai.tool.call.arguments"],
    ),  # noqa: E501
    ("agent.tool", ["_name"], [".args", ".arguments", ".input"], ["agent.tool", "agent.toolName"], []),
    ("codex.mcp", [], [".args", ".arguments", ".input"], ["codex.mcp.tool"], []),
]
TOOL_NAME_KEYS = [key for p, names, _, more, _ in _TOOL_FAMILIES for key in [*(p + s for s in names), *more]]
TOOL_ARGUMENT_KEYS = [
    *(key for p, _, args, _, more in _TOOL_FAMILIES for key in [*(p + s for s in args), *more]),
    "args",
    "arguments",
    "input",
]
COMMAND_KEYS = ["codex.command", "command", "command.name", "command_name"]
SEARCH_KEYS = ["codex.search.query", "search.query", "search_query"]
COMMAND_TOOLS = {"exec_command", "local_shell", "shell"}
_SEARCH_NAME = re.compile(r"(^|[\s._:/-])(search|find|lookup|retriev(?:e|al))($|[\s._:/-])", re.IGNORECASE)
_SEARCH_KEY = re.compile(r"(^|[._])(search|lookup|retriev(?:e|al))($|[._])", re.IGNORECASE)


# trajectories ---------------------------------------------------------------------------------


def structured(value: Any) -> Any:
    """An attribute's value as promptfoo reads arguments: JSON text parsed, other text trimmed,
    ``ABSENT`` for nothing."""
    if value is None:
        return ABSENT
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return ABSENT
        try:
            return json.loads(text, parse_constant=_no_constant)
        except ValueError:
            return text
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity are not JSON to JavaScript


def _first_text(attributes: dict[str, Any], keys: list[str]) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def tool_name(span: dict[str, Any]) -> str | None:
    attributes = span.get("attributes") or {}
    direct = _first_text(attributes, TOOL_NAME_KEYS)
    if direct:
        return direct
    for key, value in attributes.items():
        if not isinstance(value, str) or not value.strip():
            continue
        text = value.strip()
        if text.startswith(("[", "{")):
            try:
                if isinstance(json.loads(text), (dict, list)):
                    continue
            except ValueError:
                pass
        if re.search(r"tool.?name|function.?name", key, re.IGNORECASE):
            return text
        if re.search(r"(^|[._])tool($|[._])", key, re.IGNORECASE) and not re.search(
            r"result|output|definition", key, re.IGNORECASE
        ):
            return text
    name = str(span.get("name") or "")
    if name.startswith("mcp "):
        slash = name.rfind("/")
        if slash != -1 and slash < len(name) - 1:
            return name[slash + 1 :].strip()
    return None


def tool_arguments(span: dict[str, Any]) -> Any:
    attributes = span.get("attributes") or {}
    for key in TOOL_ARGUMENT_KEYS:
        value = structured(attributes.get(key))
        if value is not ABSENT:
            return value
    for key, raw in attributes.items():
        if re.search(r"result|output|error|status", key, re.IGNORECASE):
            continue
        if not re.search(r"(^|[._])(arguments|args|input)($|[._])", key, re.IGNORECASE):
            continue
        value = structured(raw)
        if value is not ABSENT:
            return value
    return ABSENT


def js_string(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js(value)
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def command_of(span: dict[str, Any], name: str | None, arguments: Any, command_tools: set[str]) -> str | None:
    attributes = span.get("attributes") or {}
    direct = _first_text(attributes, COMMAND_KEYS)
    if direct:
        return direct
    for key, value in attributes.items():
        if isinstance(value, str) and value.strip():
            if re.search("command", key, re.IGNORECASE) and not re.search("output|result", key, re.IGNORECASE):
                return value.strip()
    if name and name.strip().lower() in command_tools and isinstance(arguments, dict):
        for key, separator in (("cmd", " "), ("command", " "), ("commands", "; ")):
            if key in arguments:
                command = arguments[key]
                if isinstance(command, str) and command.strip():
                    return command.strip()
                if isinstance(command, list):
                    joined = separator.join(part for part in (js_string(p).strip() for p in command) if part)
                    if joined:
                        return joined
                break
    span_name = str(span.get("name") or "")
    return span_name[5:].strip() if span_name.startswith("exec ") else None


def _search_like(span: dict[str, Any]) -> bool:
    name = str(span.get("name") or "")
    if _SEARCH_NAME.search(name) or name.startswith("search "):
        return True
    return any(key != "query" and _SEARCH_KEY.search(key) for key in (span.get("attributes") or {}))


def search_query(span: dict[str, Any]) -> str | None:
    attributes = span.get("attributes") or {}
    direct = _first_text(attributes, SEARCH_KEYS)
    if direct:
        return direct
    generic = _first_text(attributes, ["query"])
    if generic and _search_like(span):
        return generic
    name = str(span.get("name") or "")
    if name.startswith("search "):
        return re.sub(r'^"|"$', "", name[7:]).strip()
    return None


def _reasoning(span: dict[str, Any]) -> bool:
    name = str(span.get("name") or "")
    if (span.get("attributes") or {}).get("codex.item.type") == "reasoning":
        return True
    return re.match(r"reasoning([_\s]|$)", name, re.IGNORECASE) is not None


def _message(span: dict[str, Any]) -> bool:
    if (span.get("attributes") or {}).get("codex.item.type") == "agent_message":
        return True
    return span.get("name") in ("agent response", "send input")


def trajectory_steps(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The trace's spans as steps, in the order they started (then ended, then were listed)."""
    extra = (trace.get("metadata") or {}).get("commandToolNames")
    named = [name for name in (extra if isinstance(extra, list) else []) if isinstance(name, str) and name.strip()]
    command_tools = set(COMMAND_TOOLS) | {name.strip().lower() for name in named}

    def when(entry: tuple[int, dict[str, Any]]) -> tuple[float, float, int]:
        index, span = entry
        start = float(span["startTime"]) if is_number(span.get("startTime")) else 0.0
        end = float(span["endTime"]) if is_number(span.get("endTime")) else start
        return (start, end, index)

    steps = []
    for _, span in sorted(enumerate(trace.get("spans") or []), key=when):
        name = tool_name(span)
        arguments = tool_arguments(span) if name else ABSENT
        command = command_of(span, name, arguments, command_tools)
        query = search_query(span)
        kind, shown, aliases = "span", span["name"], [span["name"]]
        args: Any = ABSENT
        if command and name and name.strip().lower() in command_tools:
            kind, shown, args = "command", command, arguments
            aliases += [command, name]
            aliases += [command.split()[0]] if command.split() else []
        elif name:
            kind, shown, args = "tool", name, arguments
            aliases.append(name)
        elif command:
            kind, shown = "command", command
            aliases += [command, *command.split()[:1]]
        elif query:
            kind, shown = "search", query
            aliases.append(query)
        elif _reasoning(span):
            kind = "reasoning"
            aliases.append("reasoning")
        elif _message(span):
            kind = "message"
            aliases.append("message")
        step = {
            "type": kind,
            "name": shown,
            "aliases": list(dict.fromkeys(aliases)),
            "spanName": span["name"],
            "statusCode": span.get("statusCode"),
            "statusMessage": span.get("statusMessage"),
        }
        if args is not ABSENT:
            step["args"] = args
        steps.append(step)
    return steps


def _matcher(value: Any, default_type: str | None = None) -> dict[str, Any]:
    if isinstance(value, str):
        return {"pattern": value, **({"type": default_type} if default_type else {})}
    matcher = dict(value)
    if not matcher.get("type") and default_type:
        matcher["type"] = default_type
    return matcher


def _label(matcher: dict[str, Any]) -> str:
    return str(matcher.get("pattern") or matcher.get("name") or "*")


def step_matches(step: dict[str, Any], matcher: dict[str, Any]) -> bool:
    kind = matcher.get("type")
    if (kind or isinstance(kind, list)) and step["type"] not in (kind if isinstance(kind, list) else [kind]):
        return False
    pattern = matcher.get("pattern") or matcher.get("name")
    if not pattern:
        return True
    return any(matches_pattern(alias, str(pattern)) for alias in step["aliases"])


def _labels(matchers: list[dict[str, Any]]) -> str:
    return ", ".join(_label(m) for m in matchers)


def _shown(step: dict[str, Any]) -> str:
    return f"{step['type']}:{step['name']}"


def _listed(labels: list[str]) -> str:
    return ", ".join(labels) if labels else "(none)"


def _args_text(args: Any) -> str:
    if args is ABSENT:
        return "(none)"
    return json.dumps(args, separators=(",", ":"), ensure_ascii=False)


def _named(matcher: dict[str, Any], kind: str, step: int | None = None) -> None:
    if not (matcher.get("pattern") or matcher.get("name")):
        where = "object" if step is None else f"step {step + 1}"
        raise ItemError(f"{kind} assertion {where} must include a name or pattern property")


def _verdict(passed: bool, reason: str) -> Verdict:
    return Verdict(passed, 1.0 if passed else 0.0, reason)


def _tool_steps(seen: Seen, kind: str) -> list[dict[str, Any]]:
    spans_of(seen, kind)
    assert seen.trace is not None
    return [step for step in trajectory_steps(seen.trace) if step["type"] == "tool"]


def tool_used(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    steps = _tool_steps(seen, "trajectory:tool-used")
    value = assertion.get("value")
    actual = [_shown(step) for step in steps]
    if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        matchers = [_matcher(v, "tool") for v in ([value] if isinstance(value, str) else value)]
        if not matchers:
            raise ItemError("trajectory:tool-used assertion requires at least one expected tool")
        missing = [m for m in matchers if not any(step_matches(step, m) for step in steps)]
        found = [m for m in matchers if any(step_matches(step, m) for step in steps)]
        passed = not found if inverse else not missing
        expected = _labels(matchers)
        if inverse:
            reason = (
                f"Forbidden tool(s) were not used: {expected}"
                if passed
                else f"Forbidden tool(s) were used: {_labels(found)}. Actual tools: {_listed(actual)}"
            )
        elif passed:
            reason = f"Observed required tool(s): {expected}. Actual tools: {_listed(actual)}"
        else:
            reason = f"Missing required tool(s): {_labels(missing)}. Actual tools: {_listed(actual)}"
        return _verdict(passed, reason)
    if not isinstance(value, dict):
        raise ItemError("trajectory:tool-used assertion must have a string, string array, or object value")
    matcher = _matcher(value, "tool")
    low = value["min"] if is_number(value.get("min")) else 1
    high = value["max"] if is_number(value.get("max")) else None
    if not (matcher.get("pattern") or matcher.get("name")):
        raise ItemError("trajectory:tool-used assertion object must include a name or pattern property")
    matching = [step for step in steps if step_matches(step, matcher)]
    count = len(matching)
    satisfied = count >= low and (high is None or count <= high)
    label = _label(matcher)
    if inverse:
        reason = (
            f'Tool "{label}" matched {count} time(s), which violates the inverse assertion'
            if satisfied
            else f'Tool "{label}" did not satisfy the forbidden match condition'
        )
    else:
        reason = f'Matched tool "{label}" {count} time(s)'
        reason += f" (expected at least {js(low)})" if high is None else f" (expected {js(low)}-{js(high)})"
        if matching:
            reason += ". Matches: " + ", ".join(_shown(step) for step in matching)
    return _verdict(satisfied != inverse, reason)


def tool_sequence(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    steps = _tool_steps(seen, "trajectory:tool-sequence")
    value = assertion.get("value")
    if isinstance(value, list):
        mode, expected_steps = "in_order", value
    elif isinstance(value, dict):
        mode, expected_steps = value.get("mode") or "in_order", value.get("steps") or []
    else:
        raise ItemError("trajectory:tool-sequence assertion must have an array or object value")
    matchers = []
    for index, entry in enumerate(expected_steps):
        matcher = _matcher(entry, "tool")
        _named(matcher, "trajectory:tool-sequence", index)
        matchers.append(matcher)
    if not matchers:
        raise ItemError("trajectory:tool-sequence assertion requires at least one expected step")
    actual = [_shown(step) for step in steps]
    if mode == "exact":
        observed = len(steps) == len(matchers) and all(map(step_matches, steps, matchers))
        if observed:
            reason = f"Observed exact tool sequence: {_listed(actual)}"
        else:
            reason = f"Expected exact tool sequence of {_labels(matchers)}, but actual tools were {_listed(actual)}"
    else:
        at, matched = 0, []
        for step in steps:
            if at >= len(matchers):
                break
            if step_matches(step, matchers[at]):
                matched.append(_shown(step))
                at += 1
        observed = at == len(matchers)
        if observed:
            reason = f"Observed tool sequence in order: {', '.join(matched)}. Actual tools: {_listed(actual)}"
        else:
            missed = _label(matchers[at])
            reason = f'Expected tool "{missed}" was not observed in order. Actual tools: {_listed(actual)}'
    if inverse:
        reason = (
            f"Forbidden tool sequence was observed. Actual tools: {_listed(actual)}"
            if observed
            else "Forbidden tool sequence was not observed"
        )
    return _verdict(observed != inverse, reason)


def same(left: Any, right: Any) -> bool:
    """Node's ``isDeepStrictEqual`` on JSON values: one number type, booleans apart from numbers."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if is_number(left) and is_number(right):
        if left == 0 and right == 0:
            return math.copysign(1, left) == math.copysign(1, right)
        return bool(left == right or (left != left and right != right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right


def _partly(actual: Any, expected: Any) -> bool:
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_partly(a, e) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and _partly(actual[k], v) for k, v in expected.items())
    return same(actual, expected)


def _ignored(key: str, entry: str) -> bool:
    return entry == key or (("*" in entry or "?" in entry) and matches_pattern(key, entry))


def _without_ignored(value: Any, ignore: list[str]) -> tuple[Any, list[str]]:
    if not ignore or not isinstance(value, dict):
        return value, []
    dropped = [key for key in value if any(_ignored(key, entry) for entry in ignore)]
    return {k: v for k, v in value.items() if k not in dropped}, dropped


def _without_defaults(value: Any, defaults: dict[str, Any] | None) -> tuple[Any, list[str]]:
    if not defaults or not isinstance(value, dict):
        return value, []
    dropped = [key for key, v in value.items() if key in defaults and same(v, defaults[key])]
    return {k: v for k, v in value.items() if k not in dropped}, dropped


def args_match(actual: Any, expected: Any, mode: str, defaults: dict[str, Any] | None, ignore: list[str]) -> bool:
    cleaned = _without_defaults(_without_ignored(actual, ignore)[0], defaults)[0]
    wanted = _without_ignored(expected, ignore)[0]
    return same(cleaned, wanted) if mode == "exact" else _partly(cleaned, wanted)


def tool_args_match(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    steps = _tool_steps(seen, "trajectory:tool-args-match")
    value = assertion.get("value")
    if not isinstance(value, dict):
        raise ItemError("trajectory:tool-args-match assertion must have an object value")
    matcher = _matcher(value, "tool")
    _named(matcher, "trajectory:tool-args-match")
    expected = value["args"] if "args" in value else value.get("arguments", ABSENT)
    if expected is ABSENT:
        raise ItemError("trajectory:tool-args-match assertion must include an args or arguments property")
    mode = value.get("mode", "partial") if "mode" in value else "partial"
    if mode not in ("partial", "exact"):
        raise ItemError('trajectory:tool-args-match assertion mode must be "partial" or "exact"')
    defaults = value.get("defaults") if "defaults" in value else None
    if "defaults" in value and not isinstance(defaults, dict):
        raise ItemError(
            "trajectory:tool-args-match assertion defaults must be an object mapping argument names to default values"
        )
    ignore_value = value.get("ignore") if "ignore" in value else []
    ignoring = ignore_value if isinstance(ignore_value, list) else [ignore_value]
    if any(not isinstance(entry, str) or not entry.strip() for entry in ignoring):
        raise ItemError(
            "trajectory:tool-args-match assertion ignore must be a non-empty string or an array of non-empty strings"
        )
    ignore = [str(entry) for entry in ignoring]
    label, actual = _label(matcher), [_shown(step) for step in steps]
    matching = [step for step in steps if step_matches(step, matcher)]
    with_args = [step for step in matching if "args" in step]
    hit = next((s for s in with_args if args_match(s["args"], expected, mode, defaults, ignore)), None)
    observed = ", ".join(_args_text(s["args"]) for s in with_args) if with_args else "(none)"
    if inverse:
        if hit is not None:
            reason = f'Forbidden argument match for tool "{label}" was observed on {_shown(hit)}. '
            reason += f"Args: {_args_text(hit['args'])}"
        elif not matching:
            reason = f'Forbidden argument match for tool "{label}" was not observed because no tool call matched it'
        else:
            reason = f'Forbidden argument match for tool "{label}" was not observed. Observed args: {observed}'
    elif hit is not None:
        without, ignored = _without_ignored(hit["args"], ignore)
        defaulted = _without_defaults(without, defaults)[1]
        reason = f'Tool "{label}" matched expected arguments ({mode}) on {_shown(hit)}. Args: {_args_text(hit["args"])}'
        reason += f". Ignored argument(s): {', '.join(ignored)}" if ignored else ""
        reason += f". Ignored default argument(s): {', '.join(defaulted)}" if defaulted else ""
    elif not matching:
        reason = f'No tool call matched "{label}". Actual tools: {_listed(actual)}'
    elif not with_args:
        reason = f'Tool "{label}" was observed but no arguments were captured. Actual tools: {_listed(actual)}'
    else:
        reason = f'No call to tool "{label}" matched expected arguments ({mode}): {_args_text(expected)}. '
        reason += f"Observed args: {observed}"
    return _verdict((hit is not None) != inverse, reason)


def step_count(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    spans_of(seen, "trajectory:step-count")
    assert seen.trace is not None
    steps = trajectory_steps(seen.trace)
    value = assertion.get("value")
    if not isinstance(value, dict):
        raise ItemError("trajectory:step-count assertion must have an object value")
    matcher = _matcher(value)
    low = value["min"] if is_number(value.get("min")) else None
    high = value["max"] if is_number(value.get("max")) else None
    if low is None and high is None:
        raise ItemError("trajectory:step-count assertion must include a min or max property")
    matching = [step for step in steps if step_matches(step, matcher)]
    count = len(matching)
    satisfied = (low is None or count >= low) and (high is None or count <= high)
    if inverse:
        reason = (
            "Trajectory step count satisfied the forbidden range"
            if satisfied
            else "Trajectory step count did not satisfy the forbidden range"
        )
        return _verdict(not satisfied, reason)
    filters = []
    if matcher.get("type"):
        kinds = matcher["type"] if isinstance(matcher["type"], list) else [matcher["type"]]
        filters.append(f"type={'|'.join(map(str, kinds))}")
    if matcher.get("pattern") or matcher.get("name"):
        filters.append(f"pattern={matcher.get('pattern') or matcher.get('name')}")
    reason = f"Matched {count} trajectory step(s)" + (f" for {', '.join(filters)}" if filters else "")
    reason += expected_range(low, high)
    if matching:
        reason += ". Matches: " + ", ".join(_shown(step) for step in matching)
    return _verdict(satisfied, reason)


# trajectory:goal-success ------------------------------------------------------------------------

JUDGE_STEPS, JUDGE_HEAD_STEPS, JUDGE_TAIL_STEPS = 24, 12, 12


def judge_summary(trace: dict[str, Any]) -> str:
    """The trajectory as promptfoo shows it to a grader: numbered steps with their status, runs of
    the same step folded into one (``collapsedCount``), the middle of a long one left out."""
    raw = []
    for index, step in enumerate(trajectory_steps(trace), 1):
        entry: dict[str, Any] = {"index": index, "type": step["type"], "name": step["name"]}
        if step["spanName"] != step["name"]:
            entry["spanName"] = step["spanName"]
        if step.get("statusCode"):
            message = step.get("statusMessage")
            entry["status"] = {"code": step["statusCode"], **({"message": message} if message else {})}
        raw.append(entry)
    folded: list[dict[str, Any]] = []
    for entry in raw:
        last = folded[-1] if folded else None
        if last is not None and all(last.get(key) == entry.get(key) for key in ("type", "name", "spanName", "status")):
            last["collapsedCount"] = last.get("collapsedCount", 1) + 1
            continue
        folded.append(entry)
    steps = folded
    if len(folded) > JUDGE_STEPS:
        steps = [*folded[:JUDGE_HEAD_STEPS], {"omittedCount": len(folded) - JUDGE_STEPS}, *folded[-JUDGE_TAIL_STEPS:]]
    summary = {"traceId": trace.get("traceId"), "stepCount": len(raw), "compactedStepCount": len(folded)}
    return json.dumps({**summary, "steps": steps}, indent=2, ensure_ascii=False)


TRAJECTORY_CHECKS = {
    "trajectory:tool-used": tool_used,
    "trajectory:tool-sequence": tool_sequence,
    "trajectory:tool-args-match": tool_args_match,
    "trajectory:step-count": step_count,
}
