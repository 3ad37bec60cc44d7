"""promptfoo's trace assertions: ``trace-span-count``, ``trace-span-duration`` and
``trace-error-spans``, read as promptfoo 0.123.1 reads a test's trace (the ``trajectory:*`` checks,
which read its spans as steps, are ``assay.evaluators.promptfoo.trajectory``).

promptfoo judges the spans its tracing collected for the test: one span for the provider call
(named after the provider's label or id) and whatever the provider reported under it. assay's
trace of an item is the same shape: a root span named after the target (``trace_root``), over the
spans the target kept in its sample (``assay.targets.spans``: each model call, each tool it ran).
Span names match patterns with ``*`` and ``?``, case-insensitive.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from assay.errors import ItemError
from assay.evaluators.promptfoo.assertion import Assertion
from assay.evaluators.promptfoo.checks import Seen, Verdict

_ERROR_MESSAGE = re.compile(r"error|failed|failure|exception|timeout|abort", re.IGNORECASE)


# the trace ------------------------------------------------------------------------------------


def trace_of(sample: dict[str, Any], root: str) -> dict[str, Any]:
    """The item's trace as promptfoo's assertions see one: ``{traceId, spans}``, each span
    ``{spanId, parentSpanId, name, startTime, endTime, statusCode, statusMessage, attributes}``
    (times in milliseconds); the root span, named ``root``, lasts the target's whole call."""
    kept = [span for span in sample.get("spans") or [] if isinstance(span, dict) and span.get("name")]
    root_id = "0" * 15 + "1"
    spans: list[dict[str, Any]] = [
        {
            "spanId": str(span.get("span_id") or ""),
            "parentSpanId": root_id,
            "name": str(span["name"]),
            "startTime": span.get("start_ms"),
            "endTime": span.get("end_ms"),
            "statusCode": span.get("status_code") or 0,
            "statusMessage": span.get("status_message") or None,
            "attributes": span.get("attributes") if isinstance(span.get("attributes"), dict) else {},
        }
        for span in kept
    ]
    latency = sample.get("latency_ms")
    latency = float(latency) if isinstance(latency, (int, float)) and not isinstance(latency, bool) else 0.0
    starts = [s["startTime"] for s in spans if isinstance(s["startTime"], (int, float))]
    ends = [s["endTime"] for s in spans if isinstance(s["endTime"], (int, float))]
    start = min(starts) if starts else 0.0
    end = max([*ends, start + latency])
    whole: dict[str, Any] = {
        "spanId": root_id,
        "name": root,
        "startTime": start,
        "endTime": end,
        "statusCode": 1,
        "attributes": {},
    }
    # An id of its own, the same for the same spans (a grader's prompt that quotes it stays cacheable).
    trace_id = sample.get("trace_id") or hashlib.sha256("/".join(s["spanId"] for s in spans).encode()).hexdigest()[:32]
    return {"traceId": str(trace_id), "spans": [whole, *spans]}


def spans_of(seen: Seen, kind: str) -> list[dict[str, Any]]:
    if seen.trace is None:
        raise ItemError(f"No trace data available for {kind} assertion")
    spans: list[dict[str, Any]] = seen.trace["spans"]
    return spans


def matches_pattern(name: str, pattern: str) -> bool:
    """promptfoo's span-name glob: ``*`` any run of characters, ``?`` one; case-insensitive."""
    escaped = re.sub(r"[.+^${}()|\[\]\\]", lambda m: "\\" + m.group(0), pattern)
    return re.fullmatch(escaped.replace("*", ".*").replace("?", "."), name, re.IGNORECASE | re.DOTALL) is not None


def is_number(value: Any) -> bool:
    """A JavaScript number (not a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def js(value: Any) -> str:
    """A number as JavaScript prints it (``12``, not ``12.0``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# trace-span-count, trace-span-duration, trace-error-spans ----------------------------------


def expected_range(low: Any, high: Any) -> str:
    """How promptfoo's counting assertions say the range they wanted."""
    if low is not None and high is not None:
        return f" (expected {js(low)}-{js(high)})"
    if low is not None:
        return f" (expected at least {js(low)})"
    return "" if high is None else f" (expected at most {js(high)})"


def _bound(value: Any) -> float | None:
    """A min or max as JavaScript compares it (a numeric string as its number)."""
    return None if value is None else value if is_number(value) else as_number(value)


def span_count(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    spans = spans_of(seen, "trace-span-count")
    value = assertion.get("value")
    if not isinstance(value, dict) or not value.get("pattern"):
        raise ItemError("trace-span-count assertion must have a value object with pattern property")
    pattern, low, high = str(value["pattern"]), _bound(value.get("min")), _bound(value.get("max"))
    matching = [span for span in spans if matches_pattern(span["name"], pattern)]
    count, passed = len(matching), True
    if low is not None and count < low:
        passed, reason = False, f'Found {count} spans matching pattern "{pattern}", expected at least {js(low)}'
    elif high is not None and count > high:
        passed, reason = False, f'Found {count} spans matching pattern "{pattern}", expected at most {js(high)}'
    else:
        reason = f'Found {count} spans matching pattern "{pattern}"' + expected_range(low, high)
    if matching:
        reason += ". Matched spans: " + ", ".join(dict.fromkeys(span["name"] for span in matching))
    return Verdict(passed, 1.0 if passed else 0.0, reason)


def span_duration(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    spans = spans_of(seen, "trace-span-duration")
    value = assertion.get("value")
    if not isinstance(value, dict) or not is_number(value.get("max")):
        raise ItemError("trace-span-duration assertion must have a value object with max property")
    pattern, limit, percentile = str(value.get("pattern") or "*"), value["max"], value.get("percentile")
    if percentile is not None and not (is_number(percentile) and math.isfinite(percentile) and 0 <= percentile <= 100):
        raise ItemError("trace-span-duration assertion percentile must be a number between 0 and 100")
    timed = [
        (span["name"], span["endTime"] - span["startTime"])
        for span in spans
        if matches_pattern(span["name"], pattern)
        and is_number(span.get("startTime"))
        and is_number(span.get("endTime"))
    ]
    if not timed:
        return Verdict(True, 1.0, f'No spans found matching pattern "{pattern}" with complete timing data')
    if percentile is None:
        slow = sorted((entry for entry in timed if entry[1] > limit), key=lambda entry: -entry[1])
        if slow:
            shown = ", ".join(f"{name} ({js(duration)}ms)" for name, duration in slow[:3])
            reason = f"{len(slow)} span(s) exceed duration threshold {js(limit)}ms. Slowest: {shown}"
            return Verdict(False, 0.0, reason)
        longest = max(duration for _, duration in timed)
        reason = f'All {len(timed)} spans matching pattern "{pattern}" completed within {js(limit)}ms'
        reason += f" (max: {js(longest)}ms)"
        return Verdict(True, 1.0, reason)
    ordered = sorted(duration for _, duration in timed)
    at = ordered[max(0, math.ceil(percentile / 100 * len(ordered)) - 1)]
    if at > limit:
        slowest = sorted((entry for entry in timed if entry[1] >= at), key=lambda entry: -entry[1])[:3]
        shown = ", ".join(f"{name} ({js(duration)}ms)" for name, duration in slowest)
        reason = f"{js(percentile)}th percentile duration ({js(at)}ms) exceeds threshold {js(limit)}ms. "
        reason += f"Slowest spans: {shown}"
        return Verdict(False, 0.0, reason)
    return Verdict(True, 1.0, f"{js(percentile)}th percentile duration ({js(at)}ms) is within threshold {js(limit)}ms")


def is_error_span(span: dict[str, Any]) -> bool:
    """promptfoo's test: an error status, an HTTP status of 400 or more, an error flag among the
    attributes, or a status message that speaks of one."""
    code: Any = span.get("statusCode")
    if code == 2 or (is_number(code) and code >= 400):
        return True
    attributes = span.get("attributes") or {}
    for key in ("error", "exception", "failed", "failure"):
        flag = attributes.get(key)
        if flag is True or flag == "true" or isinstance(flag, (dict, list)):
            return True
    status = attributes.get("http.status_code")
    if status is not None and as_number(status) >= 400:
        return True
    if attributes.get("otel.status_code") == "ERROR" or attributes.get("status.code") == "ERROR":
        return True
    message = span.get("statusMessage")
    return bool(message) and _ERROR_MESSAGE.search(str(message)) is not None


def _error_detail(span: dict[str, Any]) -> str:
    if span.get("statusMessage"):
        return f"{span['name']} ({span['statusMessage']})"
    if span.get("statusCode"):
        return f"{span['name']} (status: {span['statusCode']})"
    return str(span["name"])


def as_number(value: Any) -> float:
    """JavaScript's ``Number(value)`` where it matters here (NaN compares false)."""
    if isinstance(value, bool):
        return float(value)
    if is_number(value):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return 0.0
        try:
            return float(text)
        except ValueError:
            return math.nan
    return math.nan


def error_spans(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    spans = spans_of(seen, "trace-error-spans")
    value = assertion.get("value")
    most: Any = None
    share: Any = None
    pattern = "*"
    if is_number(value):
        most = value
    elif isinstance(value, dict):
        most, share, pattern = value.get("max_count"), value.get("max_percentage"), value.get("pattern") or "*"
    if most is None and share is None:
        most = 0
    matching = [span for span in spans if matches_pattern(span["name"], str(pattern))]
    if not matching:
        return Verdict(True, 1.0, f'No spans found matching pattern "{pattern}"')
    errors = [span for span in matching if is_error_span(span)]
    count, percentage = len(errors), len(errors) / len(matching) * 100
    if most is not None and count > most:
        details = [_error_detail(span) for span in errors[:3]]
        reason = f"Found {count} error spans, expected at most {js(most)}. Errors: {', '.join(details)}"
        if len(errors) > 3:
            reason += f" and {len(errors) - 3} more"
        return Verdict(False, 0.0, reason)
    if share is not None and percentage > share:
        reason = f"Error rate {percentage:.1f}% exceeds threshold {js(share)}% "
        reason += f"({count} errors out of {len(matching)} spans)"
        return Verdict(False, 0.0, reason)
    if count == 0:
        return Verdict(True, 1.0, f'No errors found in {len(matching)} spans matching pattern "{pattern}"')
    reason = f"Found {count} error(s) in {len(matching)} spans ({percentage:.1f}%)"
    if most is not None:
        reason += f", within threshold of {js(most)}"
    if share is not None:
        reason += f", within threshold of {js(share)}%"
    return Verdict(True, 1.0, reason)


SPAN_CHECKS = {
    "trace-span-count": span_count,
    "trace-span-duration": span_duration,
    "trace-error-spans": error_spans,
}
