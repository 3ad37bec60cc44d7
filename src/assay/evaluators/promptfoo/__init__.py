"""promptfoo's assertions as one evaluator: a test's ``assert`` list judged on one output.

The result is promptfoo's test verdict: without a test ``threshold`` it passes when every
assertion passes; with one, when the weighted mean of the assertions' scores reaches it. Each
assertion's own verdict is kept in ``properties.assertions`` (promptfoo's component results) and
named metrics in ``properties.named_scores``. ``python`` assertions run in the sandbox, model-graded
ones ask the criterion's model (``assay.evaluators.promptfoo.graded``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import replace
from typing import Any

from assay.errors import ConfigError, ItemError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score, judges_filtered
from assay.evaluators.promptfoo.assertion import TEST_TRANSFORM, Assertion
from assay.evaluators.promptfoo.checks import CHECKS, Seen, Verdict
from assay.evaluators.promptfoo.graded import GRADED, WorkspaceAgent, agent_rubric
from assay.evaluators.promptfoo.safety import guardrails, moderation
from assay.evaluators.promptfoo.similar import METRICS, similar
from assay.evaluators.promptfoo.skills import skill_used
from assay.evaluators.promptfoo.sql import contains_sql, is_sql
from assay.evaluators.promptfoo.trace import SPAN_CHECKS, trace_of
from assay.evaluators.promptfoo.trajectory import TRAJECTORY_CHECKS
from assay.evaluators.promptfoo.webhook import webhook
from assay.llm import Model
from assay.sandbox import Sandbox, asked

CONTEXT_KINDS = {"context-faithfulness", "context-recall", "context-relevance"}
"""The assertions that judge against a context: the test's ``context`` var, or ``contextTransform``'s."""
PYTHON_TIME_LIMIT = 60.0
PYTHON_MEMORY_MB = 1024
TRACE_CHECKS = {**SPAN_CHECKS, **TRAJECTORY_CHECKS}
DETERMINISTIC = {
    **CHECKS,
    **TRACE_CHECKS,
    "is-sql": is_sql,
    "contains-sql": contains_sql,
    "skill-used": skill_used,
    "guardrails": guardrails,
}
TRACE_READERS = {*TRACE_CHECKS, "trajectory:goal-success"}
"""The assertions that read the test's trace."""
GRADER_KINDS = {*GRADED, "agent-rubric"}
"""The assertions a grading model judges."""
KNOWN = {*DETERMINISTIC, *GRADER_KINDS, *METRICS, "python", "ruby", "javascript", "assert-set", "webhook", "moderation"}
FILTERED_OUTPUT = "Content filtered by provider"
"""The output promptfoo's OpenAI and Azure providers give a call their content filter stopped."""


def base_type(kind: str) -> tuple[str, bool]:
    """(the assertion's type without ``not-``, whether it is inverted)."""
    return (kind[4:], True) if kind.startswith("not-") else (kind, False)


def is_known(kind: str) -> bool:
    return base_type(kind)[0] in KNOWN


def needs_model(assertions: list[Assertion]) -> bool:
    """Whether any assertion (in a set too) is graded by a model."""
    return _any_of(assertions, GRADER_KINDS)


def needs_embeddings(assertions: list[Assertion]) -> bool:
    """Whether any assertion (in a set too) compares embeddings (``similar``)."""
    return _any_of(assertions, set(METRICS))


def needs_moderation(assertions: list[Assertion]) -> bool:
    """Whether any assertion (in a set too) asks a moderation model."""
    return _any_of(assertions, {"moderation"})


def _any_of(assertions: list[Assertion], kinds: set[str]) -> bool:
    for assertion in assertions:
        kind = base_type(str(assertion.get("type")))[0]
        if kind in kinds or (kind == "assert-set" and _any_of(assertion.get("assert") or [], kinds)):
            return True
    return False


def uses_trace(assertions: list[Assertion]) -> bool:
    """Whether any assertion (in a set too) reads the test's trace."""
    return _any_of(assertions, TRACE_READERS)


class _Judge:
    def __init__(
        self,
        model: Model | None,
        tools: list[dict[str, Any]],
        functions: list[dict[str, Any]] | None,
        embeddings: Model | None = None,
        moderator: Model | None = None,
        in_workspace: WorkspaceAgent | None = None,
    ) -> None:
        self.model = model
        self.in_workspace = in_workspace
        self.embeddings = embeddings
        self.moderator = moderator
        self.tools = tools
        self.functions = functions
        self.sandbox: Sandbox | None = None
        self.transforms: dict[tuple[str, str], Any] = {}
        """Each transform's result for an input, worked out once per item."""

    async def one(self, assertion: Assertion, seen: Seen) -> Verdict:
        if assertion.get("contextTransform") and base_type(str(assertion.get("type")))[0] in CONTEXT_KINDS:
            context = await self.context(str(assertion["contextTransform"]), seen)
            seen = dataclasses.replace(seen, vars={**seen.vars, "context": context})
        transforms = [code for code in (assertion.get(TEST_TRANSFORM), assertion.get("transform")) if code]
        if transforms:
            seen = dataclasses.replace(seen, output=await self.transformed(transforms, seen))
        kind, inverse = base_type(str(assertion.get("type")))
        if kind == "assert-set":
            return await self.all(assertion.get("assert") or [], seen, assertion.get("threshold"))
        if kind in DETERMINISTIC:
            if kind == "is-valid-openai-tools-call" and "tools" not in assertion:
                assertion = {**assertion, "tools": self.tools}
            if kind in ("is-valid-function-call", "is-valid-openai-function-call") and "functions" not in assertion:
                assertion = {**assertion, "functions": self.functions}
            return DETERMINISTIC[kind](assertion, seen, inverse)
        if kind == "agent-rubric":
            if self.model is None:
                raise ItemError("an 'agent-rubric' assertion needs a grading model: name one in the criterion's model")
            return await agent_rubric(assertion, seen, inverse, self.model, self.in_workspace)
        if kind in GRADED:
            if self.model is None:
                raise ItemError(f"a {kind!r} assertion needs a grading model: name one in the criterion's model")
            return await GRADED[kind](assertion, seen, inverse, self.model)
        if kind == "python":
            return await self.python(assertion, seen, inverse)
        if kind == "ruby":
            return await self.ruby(assertion, seen, inverse)
        if kind == "javascript":
            return await self.javascript(assertion, seen, inverse)
        if kind == "webhook":
            return await webhook(assertion, seen, inverse)
        if kind in METRICS:
            return await similar(kind, assertion, seen, inverse, self.embeddings)
        if kind == "moderation":
            return await moderation(assertion, seen, inverse, self.moderator)
        raise ItemError(f"unknown assertion type {assertion.get('type')!r}")

    async def all(self, assertions: list[Assertion], seen: Seen, threshold: float | None) -> Verdict:
        """promptfoo's aggregation: the weighted mean score; pass when all pass, or, given a
        threshold, when the mean reaches it."""
        total = weight_sum = 0.0
        failed: str | None = None
        components: list[dict[str, Any]] = []
        named: dict[str, list[float]] = {}
        for assertion in assertions:
            try:
                verdict = await self.one(assertion, seen)
            except ItemError as exc:
                verdict = Verdict(False, 0.0, str(exc), {"error": True})
            weight = float(assertion.get("weight", 1))
            total += verdict.score * weight
            weight_sum += weight
            if not verdict.passed:
                failed = verdict.reason
            metric = assertion.get("metric")
            if metric:
                named.setdefault(str(metric), [0.0, 0.0])
                named[str(metric)][0] += verdict.score * weight
                named[str(metric)][1] += weight
            components.append(
                {
                    "type": assertion.get("type"),
                    "pass": verdict.passed,
                    "score": verdict.score,
                    "reason": verdict.reason,
                    **({"metric": metric} if metric else {}),
                    **({"weight": weight} if weight != 1 else {}),
                    **verdict.details,
                }
            )
        score = total / weight_sum if weight_sum > 0 else 0.0
        passed, reason = failed is None, failed or "All assertions passed"
        if isinstance(threshold, (int, float)) and not math.isnan(threshold):
            passed = score >= threshold
            reason = f"Aggregate score {score:.2f} {'≥' if passed else '<'} {threshold} threshold"
        named_scores = {name: (s / w if w else 0.0) for name, (s, w) in named.items()}
        return Verdict(passed, score, reason, {"assertions": components, "named_scores": named_scores})

    def _sandbox(self, what: str) -> Sandbox:
        if self.sandbox is None:
            sandbox = Sandbox.configured()
            try:
                sandbox.check(what)
            except ConfigError as exc:  # refused for this item, as each of its assertions is judged
                raise ItemError(f"{exc.message} ({exc.hint})") from None
            self.sandbox = sandbox
        return self.sandbox

    def _script(self, assertion: Assertion, seen: Seen, language: str) -> tuple[Sandbox, str, str, dict[str, Any]]:
        """What a python or ruby assertion runs with: the sandbox, its code, its function, its context."""
        source, function = assertion.get("source"), assertion.get("function", "main")
        if not isinstance(source, str):
            raise ItemError(f"a {language} assertion carries no code (import the config with assay import promptfoo)")
        context = {"vars": seen.vars, "prompt": seen.prompt, "config": assertion.get("config") or {}}
        return self._sandbox(f"a promptfoo {language} assertion"), source, str(function), context

    async def python(self, assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
        sandbox, source, function, context = self._script(assertion, seen, "python")
        limits = asked(PYTHON_TIME_LIMIT, PYTHON_MEMORY_MB, "python assertion")
        returned = await sandbox.call(source, function, {"output": seen.output, "context": context}, limits)
        return python_verdict(returned, assertion.get("threshold"), inverse)

    async def ruby(self, assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
        """promptfoo's ``ruby`` assertion: its code run by Ruby inside the sandbox."""
        sandbox, source, function, context = self._script(assertion, seen, "ruby")
        limits = replace(asked(PYTHON_TIME_LIMIT, PYTHON_MEMORY_MB, "ruby assertion"), processes=RUBY_PROCESSES)
        arguments = {"script": source, "function": function, "output": seen.output, "context": context}
        returned = await sandbox.call(RUBY_RUNNER, "run", arguments, limits)
        if isinstance(returned, dict) and set(returned) == {"ruby_error"}:
            return Verdict(False, 0.0, f"Ruby code execution failed: {returned['ruby_error']}")
        return python_verdict(returned, assertion.get("threshold"), inverse, language="Ruby")

    async def context(self, code: str, seen: Seen) -> str | list[str]:
        """The context a RAG assertion judges against, from the output (before the test's transform):
        promptfoo's ``contextTransform``, a JavaScript expression or body like a transform's."""
        body = code if "\n" in code else f"return {code}"
        returned = await self._run_javascript(body, seen.output, seen, "contextTransform")
        value = returned.get("value")
        if "error" in returned:
            raise ItemError(f"Failed to transform context using expression '{code}': {returned['error']}")
        if not (isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            raise ItemError(
                f"contextTransform must return a string or array of strings. Got {returned.get('kind')}. "
                f"Check your transform expression: {code}"
            )
        return value

    async def transformed(self, transforms: list[str], seen: Seen) -> str:
        """The output through each transform in turn (promptfoo: ``return CODE`` for one line, the
        code as a function body otherwise), as the string its assertions read."""
        value: Any = seen.output
        for code in transforms:
            key = (code, json.dumps(value, sort_keys=True))
            if key not in self.transforms:
                body = code if "\n" in code else f"return {code}"
                returned = await self._run_javascript(body, value, seen, "transform")
                if "error" in returned:
                    raise ItemError(f"Transform failed: {returned['error']}")
                if returned.get("value") is None:
                    raise ItemError("Transform function did not return a value")
                self.transforms[key] = returned["value"]
            value = self.transforms[key]
        return javascript_string(value)

    async def _run_javascript(self, body: str, output: Any, seen: Seen, what: str) -> dict[str, Any]:
        sandbox = self._sandbox(f"a promptfoo {what}")
        context = {"vars": seen.vars, "prompt": seen.prompt}
        limits = asked(PYTHON_TIME_LIMIT, PYTHON_MEMORY_MB, what)
        limits = replace(limits, reserves_address_space=True)
        returned = await sandbox.call(
            JAVASCRIPT_RUNNER, "run", {"body": body, "output": output, "context": context}, limits
        )
        if not isinstance(returned, dict):
            raise ItemError(f"the {what} returned nothing readable")
        return returned

    async def javascript(self, assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
        """promptfoo's ``javascript`` assertion, run in V8 (mini-racer) inside the sandbox."""
        code = assertion.get("value")
        if not isinstance(code, str) or not code.strip():
            raise ItemError("a javascript assertion needs its code as a string value")
        if code.startswith("file://"):
            raise ItemError("a javascript assertion from a file is not supported here; write its code inline")
        returned = await self._run_javascript(javascript_body(code), seen.output, seen, "javascript assertion")
        return javascript_verdict(returned, assertion.get("threshold"), inverse)


RUBY_PROCESSES = 8
"""The sandboxed runner and the Ruby it starts (Ruby runs a timer thread of its own)."""
RUBY_RUNNER = """
import json
import os
import subprocess
import tempfile

WRAPPER = (
    "require 'json'\\n"
    "script, method, input, output = ARGV\\n"
    "load script\\n"
    "result = send(method, *JSON.parse(File.read(input, encoding: 'utf-8')))\\n"
    "File.write(output, JSON.generate({ 'data' => result }), encoding: 'utf-8')\\n"
)


def run(script, function, output, context):
    folder = tempfile.mkdtemp()
    paths = {name: os.path.join(folder, name) for name in ("script.rb", "wrapper.rb", "input.json", "output.json")}
    for name, text in (("script.rb", script), ("wrapper.rb", WRAPPER), ("input.json", json.dumps([output, context]))):
        with open(paths[name], "w", encoding="utf-8") as handle:
            handle.write(text)
    command = ["ruby", paths["wrapper.rb"], paths["script.rb"], function, paths["input.json"], paths["output.json"]]
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return {"ruby_error": " ".join(lines[:3])[:500] or f"ruby exited with code {done.returncode}"}
    with open(paths["output.json"], encoding="utf-8") as handle:
        return json.load(handle)["data"]
"""
"""Run in the sandbox: the assertion's Ruby, its method called with the output and the context as
JSON and its return value sent back as JSON (promptfoo's Ruby wrapper does the same)."""

JAVASCRIPT_RUNNER = """
import json


def run(body, output, context):
    from py_mini_racer import MiniRacer

    script = (
        "(function () { try {"
        " const f = new Function('output', 'context', 'process', " + json.dumps(body) + ");"
        " const r = f(" + json.dumps(output) + ", " + json.dumps(context) + ", {env: {}});"
        " if (r !== null && typeof r === 'object' && typeof r.then === 'function')"
        "   return JSON.stringify({error: 'an async function is not supported here; return the verdict'});"
        " return JSON.stringify({kind: typeof r, value: r === undefined ? null : r});"
        " } catch (e) { return JSON.stringify({error: String(e && e.message ? e.message : e)}); } })()"
    )
    return json.loads(MiniRacer().eval(script))
"""
"""Run in the sandbox: the assertion's code as promptfoo runs it, ``new Function('output',
'context', 'process', body)``, its return value sent back as JSON with its JavaScript type."""


def javascript_string(value: Any) -> str:
    """A transform's result as promptfoo's assertions read it: an object or array as
    ``JSON.stringify`` writes it, anything else as ``String(value)``."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def javascript_body(code: str) -> str:
    """promptfoo's function body: a multi-line value as it is; one line an expression to return (a
    line starting with a declaration returns the expression after its last statement)."""
    code = code.rstrip()
    if "\n" in code:
        return code
    trimmed = re.sub(r";+\s*$", "", code.strip())
    if re.match(r"^(const|let|var)\s", trimmed):
        last = _last_statement_semicolon(trimmed)
        if last != -1 and trimmed[last + 1 :].strip():
            return f"{trimmed[: last + 1]} return {trimmed[last + 1 :].strip()}"
        return trimmed
    return f"return {trimmed}"


def _last_statement_semicolon(code: str) -> int:
    """Where the last ``;`` outside a string literal is (-1: none), as promptfoo finds it."""
    quote, last, backslashes = "", -1, 0
    for index, char in enumerate(code):
        escaped = backslashes % 2 == 1
        backslashes = backslashes + 1 if char == "\\" else 0
        if not escaped and char in "'\"`" and (not quote or quote == char):
            quote = "" if quote == char else char
        if char == ";" and not quote:
            last = index
    return last


def javascript_verdict(returned: Any, threshold: float | None, inverse: bool) -> Verdict:
    """What the code returned, read as promptfoo reads it: a boolean, a number (passing above 0, or
    at the threshold), or a grading result ``{pass, score, reason}``; a throw fails the assertion."""
    if not isinstance(returned, dict):
        raise ItemError("the javascript assertion returned nothing readable")
    if "error" in returned:
        return Verdict(False, 0.0, f"Custom function threw error: {returned['error']}")
    kind, value = returned.get("kind"), returned.get("value")
    if kind == "boolean":
        ok = bool(value) != inverse
        return Verdict(
            ok, 1.0 if ok else 0.0, "Assertion passed" if ok else f"Custom function returned {str(value).lower()}"
        )
    if kind == "number" and isinstance(value, (int, float)):
        raw = value > 0 if threshold is None else value >= threshold
        ok = raw != inverse
        return Verdict(ok, float(value), "Assertion passed" if ok else f"Custom function returned {str(raw).lower()}")
    if kind == "object" and isinstance(value, dict) and "pass" in value:
        return python_verdict(value, threshold, inverse)
    shown = json.dumps(value)[:200]
    return Verdict(
        False, 0.0, f"Custom function must return a boolean, number, or GradingResult object. Got {kind}: {shown}"
    )


def python_verdict(returned: Any, threshold: float | None, inverse: bool, language: str = "Python") -> Verdict:
    """What a python (or ruby) assertion returned, read as promptfoo reads it: a bool, a number
    (passing above 0, or at the threshold), or ``{pass, score, reason}``."""
    if isinstance(returned, str) and returned.strip().lower() in ("true", "false"):
        returned = returned.strip().lower() == "true"
    if isinstance(returned, bool):
        ok = returned != inverse
        return Verdict(ok, 1.0 if ok else 0.0, "Assertion passed" if ok else f"{language} code returned {returned}")
    if isinstance(returned, (int, float)) and math.isfinite(returned):
        raw = returned > 0 if threshold is None else returned >= threshold
        ok = raw != inverse
        return Verdict(ok, float(returned), "Assertion passed" if ok else f"{language} code returned {returned}")
    if isinstance(returned, dict) and "pass" in returned:
        score = returned.get("score", 1.0 if returned["pass"] else 0.0)
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            raise ItemError(f"the {language.lower()} assertion's score is {score!r}, not a number")
        raw = bool(returned["pass"]) and (threshold is None or score >= threshold)
        reason = str(returned.get("reason") or ("Assertion passed" if raw else f"{language} code returned false"))
        return Verdict(raw != inverse, float(score), reason)
    raise ItemError(
        f"a {language.lower()} assertion must return a bool, a number or {{pass, score, reason}}, not {returned!r}"
    )


def promptfoo_assertions(
    model: Model | None = None,
    tools: list[dict[str, Any]] | None = None,
    tracing: bool = True,
    trace_root: str = "target",
    functions: list[dict[str, Any]] | None = None,
    embeddings: Model | None = None,
    moderation: Model | None = None,
    workspace_agent: WorkspaceAgent | None = None,
) -> Evaluator:
    """``tools``: the provider's tool definitions, which ``is-valid-openai-tools-call`` checks
    against; ``functions``: its legacy function definitions, which ``is-valid-function-call`` checks
    against (None: a provider that cannot check a function call, such as echo). ``tracing``: whether
    trace assertions have the item's trace (a promptfoo config's ``tracing.enabled``), its root span
    named ``trace_root`` (promptfoo's: the provider's label)."""
    judge = _Judge(model, list(tools or []), functions, embeddings, moderation, workspace_agent)

    async def evaluate(inputs: dict[str, Any]) -> Score:
        assertions = inputs.get("assertions") or []
        if not isinstance(assertions, list):
            raise ItemError("'assertions' must be the test's list of assertions")
        output, sample, variables = inputs.get("output"), inputs.get("sample"), inputs.get("vars")
        if not output and isinstance(sample, dict) and sample.get("filtered"):
            output = FILTERED_OUTPUT
        seen = Seen(
            output="" if output is None else output if isinstance(output, str) else str(output),
            sample=sample if isinstance(sample, dict) else {},
            vars=variables if isinstance(variables, dict) else {},
            prompt=str(inputs.get("prompt") or ""),
        )
        if tracing and uses_trace(assertions):
            seen.trace = trace_of(seen.sample, trace_root)
        if not assertions:
            return Score(1.0, passed=True, reason="No assertions", properties={"assertions": []})
        verdict = await judge.all(assertions, seen, inputs.get("threshold"))
        usage = _usage(verdict.details["assertions"])
        properties = {**verdict.details, **({"usage": usage} if usage else {})}
        return Score(verdict.score, passed=verdict.passed, reason=verdict.reason, properties=properties)

    # A call the provider's filter stopped is judged too: ``guardrails`` asks what the filter did.
    return judges_filtered(evaluate)


def _usage(components: list[dict[str, Any]]) -> dict[str, int]:
    """The grading calls' tokens, summed over the assertions."""
    total: dict[str, int] = {}
    for component in components:
        for key, value in (component.get("usage") or {}).items():
            if isinstance(value, int) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    return total


SPEC = EvaluatorSpec(
    name="builtin.promptfoo_assertions",
    display_name="promptfoo assertions",
    description="A promptfoo test's assertions on one output; passes as promptfoo's test does.",
    category="graders",
    required_inputs=["assertions"],
    optional_inputs=["output", "sample", "vars", "prompt", "threshold"],
    metrics=[Metric(name="promptfoo_score", type="continuous", min_value=0, max_value=1, threshold=None)],
    init_parameters={
        "model": {"type": "string", "description": "the grading model, for model-graded assertions"},
        "tools": {"type": "array", "description": "the provider's tools, for is-valid-openai-tools-call"},
        "functions": {"type": "array", "description": "the provider's legacy functions, for is-valid-function-call"},
        "tracing": {"type": "boolean", "description": "whether trace assertions read the item's trace (default true)"},
        "trace_root": {"type": "string", "description": "the trace's root span: the target's name (default target)"},
    },
    factory=promptfoo_assertions,
)
