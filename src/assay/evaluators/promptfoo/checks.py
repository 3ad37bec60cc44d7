"""promptfoo's deterministic assertions, with the verdicts its documentation gives.

Each check sees the output text, the assertion and what the target reported (latency, cost, tool
calls) and returns a ``Verdict``; a ``not-`` assertion inverts the pass (and a graded score).
"""

from __future__ import annotations

import functools
import json
import math
import re
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import yaml
from rapidfuzz.distance import Levenshtein

from assay.dataset.schema import check_patterns, linear_time
from assay.errors import ConfigError, ItemError
from assay.evaluators.promptfoo import markup
from assay.evaluators.promptfoo.assertion import Assertion
from assay.outbound import serving
from assay.regexes import UnsupportedPattern, search


@dataclass
class Verdict:
    passed: bool
    score: float
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Seen:
    """What one assertion judges: the output and what the target reported with it."""

    output: str
    sample: dict[str, Any]
    vars: dict[str, Any]
    prompt: str
    trace: dict[str, Any] | None = None
    """The item's trace as promptfoo's trace assertions read it (``trace.trace_of``); None when the
    config does not trace (promptfoo then has no trace data for them)."""


Check = Callable[[Assertion, Seen, bool], Verdict]


def boolean(passed: bool, inverse: bool, failure: str) -> Verdict:
    """A pass/fail check's verdict; ``failure`` says what was expected (``not`` is added when inverted)."""
    ok = passed != inverse
    reason = "Assertion passed" if ok else failure.replace("{not}", "not " if inverse else "")
    return Verdict(ok, 1.0 if ok else 0.0, reason)


def graded(score: float, threshold: float, inverse: bool, name: str) -> Verdict:
    """A score against a threshold; inverted, the score is 1 − score."""
    ok = (score >= threshold) != inverse
    comparison = "at least" if score >= threshold else "below"
    return Verdict(ok, 1 - score if inverse else score, f"{name} {score:.2f} is {comparison} threshold {threshold}")


def _value(assertion: Assertion) -> Any:
    value = assertion.get("value")
    if value is None or value == "":
        raise ItemError(f"a {assertion['type']!r} assertion needs a value")
    return value


def _listed(assertion: Assertion) -> list[str]:
    """contains-any/-all take a list, or a comma-separated string (quotes keep a comma inside)."""
    value = _value(assertion)
    if isinstance(value, str):
        return [part.strip().strip('"') for part in re.findall(r'"[^"]*"|[^,]+', value) if part.strip()]
    if isinstance(value, list):
        return [str(v) for v in value]
    raise ItemError(f"a {assertion['type']!r} assertion needs a list of strings")


def equals(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    value = assertion.get("value")
    if isinstance(value, (dict, list)):
        try:
            same = json.loads(seen.output) == value
        except ValueError:
            same = False
        return boolean(same, inverse, f"Expected output to {{not}}equal {json.dumps(value)}")
    return boolean(seen.output == str(value), inverse, f'Expected output "{seen.output}" to {{not}}equal "{value}"')


def _contains(fold: bool) -> Check:
    def check(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
        value = str(_value(assertion))
        output = seen.output.lower() if fold else seen.output
        found = (value.lower() if fold else value) in output
        return boolean(found, inverse, f'Expected output to {{not}}contain "{value}"')

    return check


def _contains_many(fold: bool, every: bool) -> Check:
    def check(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
        values = _listed(assertion)
        output = seen.output.lower() if fold else seen.output
        present = [v for v in values if (v.lower() if fold else v) in output]
        found = len(present) == len(values) if every else bool(present)
        if every:
            missing = [v for v in values if v not in present]
            failure = f"Expected output to {{not}}contain all of [{', '.join(values)}]. Missing: [{', '.join(missing)}]"
        else:
            failure = f'Expected output to {{not}}contain one of "{", ".join(values)}"'
        return boolean(found, inverse, failure)

    return check


def starts_with(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    value = str(_value(assertion))
    return boolean(seen.output.startswith(value), inverse, f'Expected output to {{not}}start with "{value}"')


def regex(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    pattern = str(_value(assertion))
    try:  # linear time; Python's engine only for the user's own files in a local process
        found = search(pattern, seen.output, fallback=not serving())
    except re.error as exc:
        raise ItemError(f"regex {pattern!r} is not a valid regular expression: {exc}") from None
    except UnsupportedPattern as exc:
        raise ItemError(f"regex: {exc.message} ({exc.hint})") from None
    return boolean(found, inverse, f'Expected output to {{not}}match regex "{pattern}"')


def _schema_validator(assertion: Assertion) -> jsonschema.protocols.Validator | None:
    schema: Any = assertion.get("value")
    if schema is None or schema == "":
        return None
    if isinstance(schema, str):
        try:
            schema = yaml.safe_load(schema)
        except yaml.YAMLError as exc:
            raise ItemError(f"{assertion['type']}: the JSON schema is not valid YAML or JSON: {exc}") from None
    if isinstance(schema, bool):  # true accepts anything, false nothing
        schema = {} if schema else {"not": {}}
    if not isinstance(schema, dict):
        raise ItemError(f"{assertion['type']}: the value must be a JSON schema (an object)")
    try:
        validator_class = jsonschema.validators.validator_for(schema)
        validator_class.check_schema(schema)
        check_patterns(schema, "schema")
    except jsonschema.SchemaError as exc:
        raise ItemError(f"{assertion['type']}: invalid JSON schema: {exc.message}") from None
    except ConfigError as exc:
        raise ItemError(f"{assertion['type']}: {exc.message}") from None
    validator: jsonschema.protocols.Validator = linear_time(validator_class)(schema)
    return validator


def _schema_problem(validator: jsonschema.protocols.Validator, value: Any) -> str | None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    return None if error is None else f"{'/'.join(str(p) for p in error.absolute_path) or 'value'}: {error.message}"


def is_json(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    try:
        parsed = json.loads(seen.output)
    except ValueError:
        return boolean(False, inverse, "Expected output to {not}be valid JSON")
    validator = _schema_validator(assertion)
    problem = _schema_problem(validator, parsed) if validator is not None else None
    failure = f"JSON does not conform to the provided schema: {problem}" if problem else "output is JSON"
    if inverse and problem is None and validator is not None:
        failure = "Output is JSON that conforms to the provided schema"
    return boolean(problem is None, inverse, failure)


def json_values_in(text: str) -> list[Any]:
    """Every JSON object or array found in the text, outermost first (an answer's code block, say)."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    position = 0
    while True:
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not starts:
            return found
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        found.append(value)
        position = end


def contains_json(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    values = json_values_in(seen.output)
    validator = _schema_validator(assertion) if values else None
    if validator is None:
        return boolean(bool(values), inverse, "Expected output to {not}contain valid JSON")
    problems = [_schema_problem(validator, value) for value in values]
    conforming = any(problem is None for problem in problems)
    failure = (
        "Output contains JSON conforming to the provided schema"
        if inverse
        else f"JSON does not conform to the provided schema: {problems[-1]}"
    )
    return boolean(conforming, inverse, failure)


def _tool_calls(seen: Seen) -> Any:
    calls = seen.sample.get("output_tools")
    if calls:
        return calls
    try:  # a provider that answers in text (echo) gives the calls as JSON
        parsed = json.loads(seen.output)
    except ValueError:
        return None
    return parsed.get("tool_calls") if isinstance(parsed, dict) else parsed


def valid_tools_call(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    calls = _tool_calls(seen)
    looks_right = (
        isinstance(calls, list)
        and calls
        and all(isinstance(c, dict) and isinstance(c.get("function"), dict) for c in calls)
        and isinstance(calls[0]["function"].get("name"), str)
        and isinstance(calls[0]["function"].get("arguments"), str)
    )
    if not looks_right:
        return boolean(False, inverse, f"The output is not a valid-looking tools call: {json.dumps(calls)}")
    functions = {
        t["function"]["name"]: t["function"]
        for t in assertion.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict) and t["function"].get("name")
    }
    if not functions:
        raise ItemError("is-valid-openai-tools-call: the provider's config declares no tools to check against")
    for call in calls:
        name = call["function"]["name"]
        if name not in functions:
            return boolean(False, inverse, f"Called {name!r}, which is not among the tools: {', '.join(functions)}")
        try:
            arguments = json.loads(call["function"]["arguments"] or "{}")
        except ValueError:
            return boolean(False, inverse, f"The arguments of {name!r} are not JSON")
        schema = functions[name].get("parameters")
        if schema:
            problem = _schema_problem(linear_time(jsonschema.validators.validator_for(schema))(schema), arguments)
            if problem is not None:
                return boolean(False, inverse, f"The call to {name!r} does not match its schema: {problem}")
    return boolean(True, inverse, "Every tool call matched its schema")


def valid_function_call(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    """The legacy functions API's call checked against the provider's ``functions`` (promptfoo's
    OpenAI and Azure chat providers; others cannot check one). promptfoo ignores ``not-`` here."""
    functions = assertion.get("functions")
    if not isinstance(functions, list):
        return Verdict(False, 0.0, "Provider does not have functionality for checking function call.")
    call = seen.sample.get("function_call") if isinstance(seen.sample.get("function_call"), dict) else seen.output
    if not (isinstance(call, dict) and isinstance(call.get("name"), str) and isinstance(call.get("arguments"), str)):
        shown = json.dumps(call, separators=(",", ":"), ensure_ascii=False)
        return Verdict(False, 0.0, f"OpenAI did not return a valid-looking function call: {shown}")
    name = call["name"]
    try:
        arguments = json.loads(call["arguments"])
    except ValueError as exc:
        return Verdict(False, 0.0, f"the arguments of {name!r} are not JSON: {exc}")
    schema = next((f.get("parameters") for f in functions if isinstance(f, dict) and f.get("name") == name), None)
    if not schema:
        return Verdict(False, 0.0, f'Called "{name}", but there is no function with that name')
    problem = _schema_problem(linear_time(jsonschema.validators.validator_for(schema))(schema), arguments)
    if problem is not None:
        return Verdict(False, 0.0, f'Call to "{name}" does not match schema: {problem}')
    return Verdict(True, 1.0, "Assertion passed")


def tool_call_f1(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    """F1 of the tools called against the tools expected, as sets of names (Ragas' tool call F1)."""
    value = assertion.get("value")
    if isinstance(value, list):
        names = [str(name).strip() for name in value]
    elif isinstance(value, str):
        names = [name.strip() for name in value.split(",")]
    else:
        raise ItemError("a 'tool-call-f1' assertion needs a value: a list of tool names or a comma-separated string")
    expected = {name for name in names if name}
    if not expected:
        raise ItemError("a 'tool-call-f1' assertion needs at least one expected tool name")
    calls = seen.sample.get("output_tools")
    actual = tool_names(calls if calls else seen.output)
    common = len(expected & actual)
    precision = common / len(actual) if actual else 0.0
    recall = common / len(expected)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    threshold = assertion.get("threshold")
    threshold = 1 if threshold is None else threshold
    ok = (f1 >= threshold) != inverse
    wanted, called = ", ".join(sorted(expected)), ", ".join(sorted(actual)) or "(none)"
    if ok:
        figures = f"precision={precision:.3f}, recall={recall:.3f}"
        reason = f"Tool Call F1: {f1:.3f} ({figures}). Expected: [{wanted}], Called: [{called}]"
    else:
        side = "above" if inverse else "below"
        reason = (
            f"Tool Call F1 score {f1:.3f} is {side} threshold {threshold}. Expected: [{wanted}], Called: [{called}]. "
            f"Precision={precision:.3f}, Recall={recall:.3f}"
        )
    return Verdict(ok, f1, reason)


def tool_names(output: Any) -> set[str]:
    """The names of the tools an output called, in any provider's shape promptfoo reads: OpenAI's
    ``tool_calls`` and Responses' ``function_call``, Anthropic's ``tool_use``, Google's
    ``functionCall``; text gives the JSON objects that stand on lines of their own (outside code fences)."""
    names: set[str] = set()
    if isinstance(output, str):
        try:
            return tool_names(json.loads(output))
        except ValueError:
            for value in _json_lines(output):
                names |= tool_names(value)
            return names
    if isinstance(output, dict):
        if isinstance(output.get("tool_calls"), list):
            for call in output["tool_calls"]:
                if isinstance(call, dict):
                    function = call.get("function")
                    if isinstance(function, dict) and isinstance(function.get("name"), str):
                        names.add(function["name"])
                    if isinstance(call.get("name"), str):
                        names.add(call["name"])
        elif output.get("type") in ("tool_use", "function_call") and isinstance(output.get("name"), str):
            names.add(output["name"])
        elif isinstance(output.get("functionCall"), dict):
            if isinstance(output["functionCall"].get("name"), str):
                names.add(output["functionCall"]["name"])
        elif isinstance(output.get("toolCall"), dict):
            for call in output["toolCall"].get("functionCalls") or []:
                if isinstance(call, dict) and isinstance(call.get("name"), str):
                    names.add(call["name"])
        return names
    if isinstance(output, list):
        for block in output:
            if not isinstance(block, dict):
                continue
            function = block.get("functionCall") or block.get("function")
            if block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                names.add(block["name"])
            elif isinstance(function, dict):
                if isinstance(function.get("name"), str):
                    names.add(function["name"])
            elif isinstance(block.get("name"), str):
                names.add(block["name"])
    return names


def _json_lines(text: str) -> list[Any]:
    """JSON values that begin a line and end one, outside fenced code blocks."""
    found: list[Any] = []
    decoder = json.JSONDecoder()
    fence = ""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for number, line in enumerate(lines):
        stripped = line.strip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if fence:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = ""
            continue
        if marker:
            fence = marker.group(1)
            continue
        if not stripped or stripped[0] not in "{[":
            continue
        start = offsets[number] + len(line) - len(line.lstrip())
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if text[end:].split("\n", 1)[0].strip() == "":
            found.append(value)
    return found


def _mean_logprob(seen: Seen, kind: str) -> float:
    """The mean of the output tokens' log probabilities (the provider's ``logprobs: true``)."""
    logprobs = seen.sample.get("logprobs")
    if not isinstance(logprobs, list) or not logprobs:
        raise ItemError(f"{kind} assertion does not support providers that do not return logProbs")
    return sum(float(value) for value in logprobs) / len(logprobs)


def perplexity(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    """exp(−mean log probability); passing at or under ``threshold`` (any, without one)."""
    value = math.exp(-_mean_logprob(seen, "Perplexity"))
    threshold = assertion.get("threshold")
    ok = True if threshold is None else (value <= threshold) != inverse
    side = "less than or equal to" if inverse else "greater than"
    reason = "Assertion passed" if ok else f"Perplexity {value:.2f} is {side} threshold {threshold}"
    return Verdict(ok, 1.0 if ok else 0.0, reason)


def perplexity_score(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    """The mean log probability squashed to 0–1 (a logistic); passing at ``threshold`` (any, without one)."""
    value = 1 / (1 + math.exp(-_mean_logprob(seen, "perplexity-score")))
    threshold = assertion.get("threshold")
    ok = True if threshold is None else (value >= threshold) != inverse
    side = "greater than or equal to" if inverse else "less than"
    reason = "Assertion passed" if ok else f"Perplexity score {value:.2f} is {side} threshold {threshold}"
    return Verdict(ok, 1 - value if inverse else value, reason)


def meteor(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    """promptfoo's METEOR: words split on whitespace, trailing dots dropped, the best score over the
    references; passing at ``threshold`` (default 0.5)."""
    value = assertion.get("value")
    references = [value] if isinstance(value, str) else value
    if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
        raise ItemError('"meteor" assertion must have a string or array of strings value')
    if not seen.output or not references:
        raise ItemError("Invalid inputs")
    given = (assertion.get("alpha"), assertion.get("beta"), assertion.get("gamma"))
    for name, number in zip(("alpha", "beta", "gamma"), given, strict=True):
        if number is not None and (not isinstance(number, (int, float)) or isinstance(number, bool)):
            raise ItemError(f"a 'meteor' assertion's {name} must be a number, not {number!r}")
    alpha, beta, gamma = (
        default if number is None else number for number, default in zip(given, (0.9, 3.0, 0.5), strict=True)
    )

    def words(text: str) -> list[str]:
        return [re.sub(r"\.+$", "", word) for word in re.split(r"\s+", text)]

    from assay.evaluators.nlp.scores import natural_meteor  # NLTK: loaded by the first METEOR only

    score = max(natural_meteor(words(reference), words(seen.output), alpha, beta, gamma) for reference in references)
    threshold = assertion.get("threshold")
    threshold = 0.5 if threshold is None else threshold
    ok = score < threshold if inverse else score >= threshold
    reason = "METEOR assertion passed" if ok else f"METEOR score {score:.4f} did not meet threshold {threshold}"
    return Verdict(ok, 1 - score if inverse else score, reason)


def levenshtein(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    value = _value(assertion)
    if not isinstance(value, str):
        raise ItemError("a 'levenshtein' assertion needs a string value")
    threshold = assertion.get("threshold") or 5
    distance = Levenshtein.distance(seen.output, value)
    failure = f"Levenshtein distance {distance} is greater than threshold {threshold}"
    if inverse:
        failure = f"Levenshtein distance {distance} is within threshold {threshold}"
    return boolean(distance <= threshold, inverse, failure)


@functools.cache
def _treebank() -> Any:
    """NLTK's Treebank tokenizer, imported on first use: NLTK adds about 45 MB to a process (numpy
    among it), which every process that loads the catalog would otherwise carry, and copy when it forks."""
    from nltk.tokenize import TreebankWordTokenizer

    return TreebankWordTokenizer()


def rouge_n(candidate: str, reference: str, n: int = 1) -> float:
    """ROUGE-N as promptfoo computes it: the share of the reference's n-grams (Treebank tokens,
    case kept) that the candidate has."""

    def grams(text: str) -> Counter[tuple[str, ...]]:
        tokens = _treebank().tokenize(text)
        return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))

    reference_grams = grams(reference)
    total = sum(reference_grams.values())
    return sum((grams(candidate) & reference_grams).values()) / total if total else 0.0


def rouge(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    value = _value(assertion)
    if not isinstance(value, str):
        raise ItemError("a 'rouge-n' assertion needs a string value")
    if not seen.output:
        raise ItemError("rouge-n: the output is empty")
    return graded(rouge_n(seen.output, value), assertion.get("threshold", 0.75), inverse, "ROUGE-N score")


def _ngrams(words: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def bleu_score(candidate: str, references: list[str]) -> float:
    """Sentence BLEU as promptfoo computes it: lower-cased whitespace words, 1- to 4-gram
    precisions clipped by the best reference, a zero precision smoothed to 1e-7, and the brevity
    penalty of the reference closest in length."""
    words = candidate.lower().split()
    reference_words = [r.lower().split() for r in references]
    closest = min((len(r) for r in reference_words), key=lambda length: (abs(length - len(words)), length))
    log_sum = 0.0
    for n in range(1, 5):
        grams = _ngrams(words, n)
        total = sum(grams.values())
        clipped = max(sum((grams & _ngrams(r, n)).values()) for r in reference_words)
        precision = clipped / total if total else 0.0
        log_sum += 0.25 * math.log(precision or 1e-7)
    penalty = 1.0 if len(words) > closest else math.exp(1 - len(words) / closest) if closest else 1.0
    return penalty * math.exp(log_sum)


def bleu(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    value = _value(assertion)
    references = value if isinstance(value, list) else [value]
    if not all(isinstance(r, str) for r in references):
        raise ItemError("a 'bleu' assertion needs a string or a list of strings")
    if not seen.output:
        raise ItemError("bleu: the output is empty")
    return graded(bleu_score(seen.output, references), assertion.get("threshold", 0.5), inverse, "BLEU score")


def _measured(assertion: Assertion, seen: Seen, inverse: bool, key: str, unit: str) -> Verdict:
    threshold = assertion.get("threshold")
    if threshold is None:
        raise ItemError(f"a {assertion['type']!r} assertion needs a threshold")
    measured = seen.sample.get(key)
    if not isinstance(measured, (int, float)):
        raise ItemError(f"the target reported no {key.replace('_ms', '')} for this output")
    within = measured <= threshold
    state = "at most" if within else "above"
    return boolean(within, inverse, f"{unit} {measured:g} is {state} the threshold {threshold}")


def latency(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    return _measured(assertion, seen, inverse, "latency_ms", "Latency (ms)")


def cost(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    return _measured(assertion, seen, inverse, "cost", "Cost (USD)")


def word_count(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    """Words split on whitespace; ``value`` a count, or ``{min, max}`` (either may be left out)."""
    value = _value(assertion)
    count = len(seen.output.split())
    if isinstance(value, dict):
        low, high = value.get("min"), value.get("max")
        if low is None and high is None:
            raise ItemError("a 'word-count' assertion object needs min and/or max")
        if low is not None and high is not None and low > high:
            raise ItemError(f"word-count: min ({low}) must be at most max ({high})")
        within = (low is None or count >= low) and (high is None or count <= high)
        wanted = (
            f"between {low} and {high}"
            if low is not None and high is not None
            else (f"at least {low}" if low is not None else f"at most {high}")
        )
        return boolean(within, inverse, f"Expected a word count {{not}}{wanted}, got {count}")
    try:
        expected = float(value)
    except (TypeError, ValueError):
        raise ItemError("a 'word-count' value is a number or {min, max}") from None
    return boolean(count == expected, inverse, f"Expected a word count {{not}}equal to {value}, got {count}")


def gleu_score(candidate: str, references: list[str]) -> float:
    """promptfoo's sentence GLEU: per reference, min(precision, recall) of its 1- to 4-grams
    (lowercased, split on whitespace, trailing dots dropped); the best reference's."""

    def words(text: str) -> list[str]:
        found = [word.rstrip(".") for word in text.lower().split()]
        return found if any(found) else []

    said = words(candidate)
    if not said:
        return 0.0
    scores = []
    for reference in references:
        expected = words(reference)
        if said == expected:
            scores.append(1.0)
            continue
        matched = said_total = expected_total = 0
        for n in range(1, 5):
            ours, theirs = _ngrams(said, n), _ngrams(expected, n)
            matched += sum(min(count, theirs[gram]) for gram, count in ours.items())
            said_total += max(0, len(said) - n + 1)
            expected_total += max(0, len(expected) - n + 1)
        scores.append(
            0.0 if not said_total or not expected_total else min(matched / said_total, matched / expected_total)
        )
    return max(scores)


def gleu(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    value = _value(assertion)
    references = value if isinstance(value, list) else [value]
    if not all(isinstance(r, str) for r in references):
        raise ItemError("a 'gleu' assertion needs a string or a list of strings")
    return graded(gleu_score(seen.output, references), assertion.get("threshold", 0.5), inverse, "GLEU score")


def finish_reason(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    """The provider's finish reason, compared without case; a provider that gave none fails it."""
    value = _value(assertion)
    if not isinstance(value, str):
        raise ItemError("a 'finish-reason' assertion needs a string value")
    given = seen.sample.get("finish_reason")
    if not given:
        return boolean(False, inverse, "Provider did not supply stop/finish reason")
    return boolean(
        value.lower() == str(given).lower(), inverse, f'Expected finish reason {{not}}"{value}" but got "{given}"'
    )


def _required_elements(assertion: Assertion) -> list[str]:
    value = assertion.get("value")
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",")]
    if isinstance(value, list):
        return [str(part) for part in value]
    if isinstance(value, dict) and isinstance(value.get("requiredElements"), list):
        return [str(part) for part in value["requiredElements"]]
    raise ItemError("an xml assertion's value is a string, a list, or {requiredElements: [...]}")


def _xml_problem(text: str, required: list[str]) -> str | None:
    """Why ``text`` is not one well-formed XML document holding every dotted element path, or None.
    A DTD's internal subset is refused (entities are where XML bombs live)."""
    if re.search(r"<!DOCTYPE[^>]*\[", text, re.IGNORECASE):
        return "DTD internal subsets are not supported by is-xml validation"
    try:
        root = ElementTree.fromstring(text)  # noqa: S314 - expat, no DTD subset: no entity expansion
    except ElementTree.ParseError as exc:
        return f"XML parsing failed: {exc}"
    missing = [path for path in required if not _has_path(root, path.split("."))]
    return f"XML is missing required elements: {', '.join(missing)}" if missing else None


def _has_path(root: ElementTree.Element, steps: list[str]) -> bool:
    if not steps or steps[0] != root.tag:
        return False
    level = [root]
    for step in steps[1:]:
        level = [child for element in level for child in element if child.tag == step]
        if not level:
            return False
    return True


TAG = re.compile(r"<(/?)([A-Za-z_:][\w:.\-]*)(?:\s[^<>]*?)?(/?)>")


def _xml_candidates(text: str) -> list[tuple[int, int]]:
    """(start, end) of each balanced element in ``text``, outermost first."""
    found, stack = [], []
    for tag in TAG.finditer(text):
        closing, name, empty = tag.groups()
        if empty:
            found.append((tag.start(), tag.end()))
        elif not closing:
            stack.append((name, tag.start()))
        elif stack and stack[-1][0] == name:
            found.append((stack.pop()[1], tag.end()))
    return sorted(found, key=lambda span: (span[0], -span[1]))


def is_xml(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    problem = _xml_problem(seen.output, _required_elements(assertion))
    return boolean(problem is None, inverse, problem or "XML was {not}expected")


def contains_xml(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    required = _required_elements(assertion)
    candidates = _xml_candidates(seen.output)
    problem = "No XML content found in the output" if not candidates else None
    for start, end in candidates:
        problem = _xml_problem(seen.output[start:end], required)
        if problem is None:
            break
    return boolean(problem is None, inverse, problem or "XML was {not}expected")


def is_html(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    problem = markup.html_problem(seen.output)
    ok = (problem is None) != inverse
    return Verdict(ok, 1.0 if ok else 0.0, "Assertion passed" if ok else problem or "Output is valid HTML")


def contains_html(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    return boolean(markup.contains_html(seen.output), inverse, "Expected output to {not}contain HTML content")


def is_refusal(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    if not seen.output.strip():  # promptfoo: an empty answer is a refusal, scored 0 either way
        ok = not inverse
        return Verdict(ok, 0.0, "Empty response treated as refusal" if ok else "Expected output to not be a refusal")
    return boolean(markup.is_refusal(seen.output), inverse, "Expected output to {not}be a refusal")


CHECKS: dict[str, Check] = {
    "equals": equals,
    "contains": _contains(fold=False),
    "icontains": _contains(fold=True),
    "contains-any": _contains_many(fold=False, every=False),
    "contains-all": _contains_many(fold=False, every=True),
    "icontains-any": _contains_many(fold=True, every=False),
    "icontains-all": _contains_many(fold=True, every=True),
    "starts-with": starts_with,
    "regex": regex,
    "is-json": is_json,
    "contains-json": contains_json,
    "is-valid-openai-tools-call": valid_tools_call,
    "is-valid-function-call": valid_function_call,
    "is-valid-openai-function-call": valid_function_call,
    "levenshtein": levenshtein,
    "rouge-n": rouge,
    "bleu": bleu,
    "latency": latency,
    "cost": cost,
    "word-count": word_count,
    "gleu": gleu,
    "finish-reason": finish_reason,
    "is-xml": is_xml,
    "contains-xml": contains_xml,
    "is-html": is_html,
    "contains-html": contains_html,
    "is-refusal": is_refusal,
    "tool-call-f1": tool_call_f1,
    "meteor": meteor,
    "perplexity": perplexity,
    "perplexity-score": perplexity_score,
}
