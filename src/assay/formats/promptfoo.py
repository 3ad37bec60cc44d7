"""promptfoo configs, run as they are: ``assay run promptfooconfig.yaml`` and ``assay import promptfoo``.

A config becomes assay's own files: the tests × prompts as a dataset (one row per test and prompt:
its vars, the rendered prompt, its assertions with ``defaultTest``'s merged in), and one eval.yaml
per provider (its target; one ``builtin.promptfoo_assertions`` criterion that judges a row's
assertions as promptfoo judges a test). ``assay run`` writes them under ``ASSAY_HOME/promptfoo``
and runs each eval.yaml; ``assay import promptfoo`` writes them where the user asks.

``javascript`` assertions and ``transform``s (the test's ``options.transform`` and an
assertion's own) run in V8 (mini-racer) inside the sandbox, as promptfoo runs them: ``new
Function('output', 'context', 'process', body)``. What cannot be mapped (code read from a
``file://``, an unknown provider) is an error naming the file and line. Decisions: prompts are
rendered with Jinja2's sandbox (Nunjucks' syntax for what configs use: variables, filters,
conditions); a test var holding a list expands
into one test per value, as promptfoo does; graded assertions use one grading model per config
(``defaultTest.options.provider``, else ``gpt-4.1-mini`` from the environment).
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml
from jinja2 import TemplateError

from assay.config.yamlfile import load_lined, safe_load, strip_lines
from assay.errors import ConfigError
from assay.evaluators.promptfoo import (
    base_type,
    is_known,
    needs_embeddings,
    needs_model,
    needs_moderation,
    uses_trace,
)
from assay.evaluators.promptfoo.assertion import TEST_TRANSFORM, Assertion
from assay.sandbox.templates import BoundedEnvironment, compile_bounded

DEFAULT_GRADER = "gpt-4.1-mini"
SERVICES = {
    "embedding": ("embeddings", "text-embedding-3-large"),
    "moderation": ("moderation", "omni-moderation-latest"),
}
"""What a config's ``similar`` and ``moderation`` ask: the model kind, and promptfoo's default model."""
SERVICE_KINDS = {"embedding": "embeddings", "embeddings": "embeddings", "moderation": "moderation"}
AGENTIC_GRADERS = (
    "openai:codex-sdk",
    "openai:codex-app-server",
    "anthropic:claude-agent-sdk",
    "openinterpreter",
    "opencode",
)
"""promptfoo's agentic grading providers: assay grades with its grading model run as an agent instead."""
DATASET_FILE = "tests.jsonl"
# Keys that change what promptfoo would run and that assay does not take: refused, not ignored.
REFUSED_KEYS = {"scenarios", "extensions", "nunjucksFilters", "derivedMetrics", "redteam"}
# Keys about promptfoo's own output and sharing: nothing to do with the verdicts.
IGNORED_KEYS = {
    "description",
    "outputPath",
    "sharing",
    "evaluateOptions",
    "commandLineOptions",
    "tags",
    "metadata",
    "writeLatestResults",
    "env",
    "$schema",
    "__line__",
}
SAMPLING = {
    "temperature",
    "max_tokens",
    "top_p",
    "seed",
    "response_format",
    "tools",
    "tool_choice",
    "stop",
    "functions",
    "function_call",
}
PROVIDERS_HINT = "supported providers: echo, openai:chat:<model>, openai:responses:<model>, azure:chat:<deployment>"
_JINJA = BoundedEnvironment(autoescape=False, keep_trailing_newline=True)  # noqa: S701 - prompts, not HTML


@dataclass
class Provider:
    id: str
    label: str
    config: dict[str, Any]
    line: int


@dataclass
class Prompt:
    template: str
    label: str
    line: int


@dataclass
class Test:
    description: str
    vars: dict[str, Any]
    asserts: list[Assertion]
    threshold: float | None
    line: int


@dataclass
class Suite:
    path: Path
    name: str
    prompts: list[Prompt]
    providers: list[Provider]
    tests: list[Test]
    grader: str | None = None
    notes: list[str] = field(default_factory=list)
    tracing: bool = False
    """``tracing.enabled``: promptfoo gives trace assertions the test's trace only then."""
    services: list[dict[str, Any]] = field(default_factory=list)
    """The embeddings and moderation models ``similar`` and ``moderation`` ask (``models:`` entries)."""


def is_promptfoo_config(path: Path) -> bool:
    """A promptfoo config has prompts or providers and tests, and no ``evaluators``."""
    if path.suffix.lower() not in (".yaml", ".yml", ".json") or not path.is_file():
        return False
    try:
        raw = safe_load(path.read_text(encoding="utf-8-sig"), str(path))
    except (ConfigError, UnicodeDecodeError):
        return False
    return isinstance(raw, dict) and "evaluators" not in raw and bool({"prompts", "providers"} & raw.keys())


def load_suite(path: Path) -> Suite:
    raw = load_lined(path)
    if not isinstance(raw, dict):
        raise ConfigError(f"{path.name}:1: a promptfoo config is a mapping with prompts, providers and tests")
    at = _Where(path)
    for key in raw:
        if key in REFUSED_KEYS:
            raise at.error(raw, f"'{key}' is not supported by assay's promptfoo import", "remove it, or run promptfoo")
    taken = {"prompts", "providers", "tests", "defaultTest", "tracing"}
    unknown = sorted(set(raw) - REFUSED_KEYS - IGNORED_KEYS - taken)
    if unknown:
        raise at.error(raw, f"unknown key {unknown[0]!r}", "a promptfoo config has prompts, providers, tests")
    default = raw.get("defaultTest") or {}
    if not isinstance(default, dict):
        raise at.error(raw, "'defaultTest' must be a mapping")
    prompts = _prompts(raw.get("prompts"), at, raw)
    providers = _providers(raw.get("providers"), at, raw)
    tests = [
        test for entry, line in _test_entries(raw.get("tests"), at, raw) for test in _tests(entry, line, default, at)
    ]
    if not tests:
        raise at.error(raw, "the config has no tests", "add tests: [{vars: {...}, assert: [...]}]")
    name = str(raw.get("description") or path.stem)
    grader, grader_config = _grader(default, tests, at)
    if grader is not None and grader.startswith(AGENTIC_GRADERS):
        # An agentic grader (promptfoo runs Codex or Claude Code): assay's grading model, run as an
        # agent over the provider's working_dir, for the assertions that ask for one.
        _give_workspace(tests, grader_config.get("working_dir"), at)
        grader = None
    suite = Suite(path, name, prompts, providers, tests, grader=grader)
    if any(needs_embeddings(test.asserts) for test in tests):
        suite.services.append(_service(default, at, "embedding"))
    if any(needs_moderation(test.asserts) for test in tests):
        suite.services.append(_service(default, at, "moderation"))
    suite.tracing = _tracing(raw.get("tracing"), at, raw)
    return suite


def _tracing(raw: Any, at: _Where, top: dict[str, Any]) -> bool:
    """Whether trace assertions have the test's trace (``tracing: {enabled: true}``). promptfoo's
    OTLP receiver and exporters are its own business: assay keeps each item's spans itself."""
    if raw is None:
        return False
    if not isinstance(raw, dict) or not isinstance(raw.get("enabled", False), bool):
        raise at.error(raw if isinstance(raw, dict) else top, "'tracing' is a mapping such as {enabled: true}")
    return bool(raw.get("enabled"))


class _Where:
    """Errors naming the config file and the line of the node they are about."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, node: Any, message: str, hint: str | None = None, line: int | None = None) -> ConfigError:
        found = line or (node.get("__line__") if isinstance(node, dict) else None) or 1
        return ConfigError(f"{self.path.name}:{found}: {message}", hint=hint)

    def file(self, reference: str, node: Any, line: int | None = None) -> Path:
        target = self.path.parent / reference.removeprefix("file://")
        if not target.is_file():
            raise self.error(node, f"{reference}: no such file (paths are relative to the config)", line=line)
        return target


def _lines(sequence: Any, fallback: int) -> list[int]:
    return list(getattr(sequence, "lines", [fallback] * len(sequence)))


def _prompts(raw: Any, at: _Where, top: dict[str, Any]) -> list[Prompt]:
    if raw is None:
        return [Prompt("{{prompt}}", "{{prompt}}", top.get("__line__", 1))]  # the tests' own prompt var
    entries = raw if isinstance(raw, list) else [raw]
    found: list[Prompt] = []
    for entry, line in zip(entries, _lines(entries, top.get("__line__", 1)), strict=True):
        label = None
        if isinstance(entry, dict):
            label = entry.get("label")
            entry = entry.get("raw") or entry.get("id")
        if not isinstance(entry, str):
            raise at.error(None, "a prompt is text, file://path, or {raw: ..., label: ...}", line=line)
        for text in _prompt_texts(entry, at, line):
            shown = text.strip().splitlines()[0][:60] if text.strip() else "prompt"
            found.append(Prompt(text, str(label or shown), line))
    return found


def _prompt_texts(entry: str, at: _Where, line: int) -> list[str]:
    if not entry.startswith("file://"):
        return [entry]
    target = at.file(entry, None, line)
    if target.suffix in (".py", ".js", ".ts", ".mjs", ".cjs"):
        raise at.error(None, f"{entry}: prompts written as code are not supported", "write the prompt as text", line)
    text = target.read_text(encoding="utf-8")
    if target.suffix in (".json", ".yaml", ".yml"):
        return [text]  # one chat prompt: a list of messages
    return [part.strip("\n") for part in text.split("\n---\n") if part.strip()]


def _providers(raw: Any, at: _Where, top: dict[str, Any]) -> list[Provider]:
    if raw is None:
        raise at.error(top, "the config names no providers", "add providers: [openai:chat:gpt-4.1-mini] or [echo]")
    entries = raw if isinstance(raw, list) else [raw]
    found = []
    for entry, line in zip(entries, _lines(entries, top.get("__line__", 1)), strict=True):
        config: dict[str, Any] = {}
        label = None
        if isinstance(entry, dict) and "id" not in entry and len([k for k in entry if k != "__line__"]) == 1:
            key = next(k for k in entry if k != "__line__")  # {openai:chat:gpt-4o: {config: ...}}
            entry = {"id": key, **(entry[key] or {})}
        if isinstance(entry, dict):
            line = entry.get("__line__", line)
            config = strip_lines(entry.get("config") or {})
            label = entry.get("label")
            entry = entry.get("id")
        if not isinstance(entry, str):
            raise at.error(
                None, "a provider is an id such as openai:chat:gpt-4.1-mini, or {id, label, config}", line=line
            )
        model = _model_of(entry, at, line)  # refuse an unknown provider here, at its line
        if model is not None and model.get("api") in ("embeddings", "moderation"):
            raise at.error(None, f"provider {entry!r} makes no answers to test", PROVIDERS_HINT, line)
        found.append(Provider(entry, str(label or entry), config, line))
    return found


def _model_of(provider: str, at: _Where, line: int) -> dict[str, Any] | None:
    """The models: entry a provider id calls (None for echo)."""
    if provider == "echo":
        return None
    parts = provider.split(":")
    if parts[0] in ("openai", "azure", "azureopenai") and len(parts) == 3 and parts[1] in SERVICE_KINDS and parts[2]:
        return {
            "name": parts[2],
            "model": parts[2],
            "api": SERVICE_KINDS[parts[1]],
            **({} if parts[0] == "openai" else {"provider": "azure"}),
        }
    if parts[0] == "openai" and len(parts) == 3 and parts[1] in ("chat", "responses") and parts[2]:
        return {"name": parts[2], "model": parts[2], "api": parts[1]}
    if parts[0] == "openai" and len(parts) == 2 and parts[1] and parts[1] not in ("chat", "responses"):
        return {"name": parts[1], "model": parts[1]}
    if parts[0] in ("azure", "azureopenai") and len(parts) == 3 and parts[1] == "chat" and parts[2]:
        return {"name": parts[2], "model": parts[2], "provider": "azure"}
    raise at.error(None, f"provider {provider!r} is not supported here", PROVIDERS_HINT, line)


def _test_entries(raw: Any, at: _Where, top: dict[str, Any]) -> list[tuple[dict[str, Any], int]]:
    if raw is None:
        return []
    entries = raw if isinstance(raw, list) else [raw]
    found: list[tuple[dict[str, Any], int]] = []
    for entry, line in zip(entries, _lines(entries, top.get("__line__", 1)), strict=True):
        if isinstance(entry, str):
            found.extend(_tests_from_file(at.file(entry, None, line), at))
        elif isinstance(entry, dict):
            found.append((entry, entry.get("__line__", line)))
        else:
            raise at.error(None, "a test is a mapping with vars and assert, or file://tests.csv", line=line)
    return found


def _tests_from_file(path: Path, at: _Where) -> list[tuple[dict[str, Any], int]]:
    where = _Where(path)
    if path.suffix == ".csv":
        with path.open(encoding="utf-8-sig", newline="") as handle:
            return [
                (_csv_test(row, where, number + 2), number + 2) for number, row in enumerate(csv.DictReader(handle))
            ]
    if path.suffix == ".jsonl":
        lines = path.read_text(encoding="utf-8").splitlines()
        return [(_json_test(line, where, n + 1), n + 1) for n, line in enumerate(lines) if line.strip()]
    loaded = load_lined(path)
    entries = loaded if isinstance(loaded, list) else [loaded]
    starts = _lines(entries, 1)
    if not all(isinstance(e, dict) for e in entries):
        raise where.error(None, "a tests file holds a list of tests (mappings with vars and assert)")
    return [(e, e.get("__line__", line)) for e, line in zip(entries, starts, strict=True)]


def _json_test(text: str, where: _Where, line: int) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise where.error(None, f"not a JSON object ({exc})", line=line) from None
    if not isinstance(value, dict):
        raise where.error(None, "each line is a test: a JSON object with vars and assert", line=line)
    return {**value, "__line__": line}


def _csv_test(row: dict[str, str], where: _Where, line: int) -> dict[str, Any]:
    """A CSV row: its columns are vars; ``__expected`` columns are assertions, ``__description`` names it."""
    variables = {k: v for k, v in row.items() if k and not k.startswith("__")}
    asserts = [_expected(v, where, line) for k, v in row.items() if k and k.startswith("__expected") and v]
    test: dict[str, Any] = {"vars": variables, "assert": asserts, "__line__": line}
    if row.get("__description"):
        test["description"] = row["__description"]
    return test


def _expected(text: str, where: _Where, line: int) -> dict[str, Any]:
    """promptfoo's ``__expected`` shorthand: ``type: value``, ``type(threshold): value``, or an exact answer."""
    head, separator, value = text.partition(":")
    name, _, threshold = head.strip().partition("(")
    name = {"grade": "llm-rubric", "fn": "javascript", "eval": "javascript"}.get(name, name)
    if not separator and base_type(text.strip())[0] in ("is-json", "contains-json"):
        return {"type": text.strip()}
    if not separator or not is_known(name):
        return {"type": "equals", "value": text}
    assertion: dict[str, Any] = {"type": name, "value": value.strip()}
    if threshold.rstrip(")"):
        try:
            assertion["threshold"] = float(threshold.rstrip(")"))
        except ValueError:
            raise where.error(None, f"{head.strip()}: the threshold in brackets must be a number", line=line) from None
    return assertion


def _test_transform(entry: dict[str, Any], default: dict[str, Any], at: _Where, line: int) -> str | None:
    """The JavaScript a test's output goes through before its assertions (``options.transform``,
    the test's own over ``defaultTest``'s), run in V8 inside the sandbox at judging time."""
    found = None
    for options in (default.get("options"), entry.get("options")):
        if isinstance(options, dict) and options.get("transform") is not None:
            found = options["transform"]
    if isinstance(entry.get("transform"), str):
        found = entry["transform"]
    if found is None:
        return None
    if not isinstance(found, str) or not found.strip():
        raise at.error(None, "options.transform: write JavaScript, inline or as file://x.js", line=line)
    return _javascript_code(found, "options.transform", at, line)


def _javascript_code(code: str, what: str, at: _Where, line: int) -> str:
    """Inline JavaScript as it is; ``file://x.js[:name]`` as the call of that module's function."""
    if not code.startswith("file://"):
        return code
    reference, _, function = code.removeprefix("file://").partition(":")
    if not reference.endswith((".js", ".cjs")):
        raise at.error(None, f"{what}: {code}: the file is a .js or .cjs module", "export a function from it", line)
    return commonjs_call(at.file(reference, None, line).read_text(encoding="utf-8"), reference, function)


def _tests(entry: dict[str, Any], line: int, default: dict[str, Any], at: _Where) -> list[Test]:
    transform = _test_transform(entry, default, at, line)
    variables = {**strip_lines(default.get("vars") or {}), **strip_lines(entry.get("vars") or {})}
    raw_asserts = [*(default.get("assert") or []), *(entry.get("assert") or [])]
    for assertion in raw_asserts:
        _check_assertion(assertion, at, line)
    # Checked one by one above and prepared here: from now on each is an Assertion, whatever YAML gave.
    asserts = [cast(Assertion, _prepared_assertion(strip_lines(a), at, a.get("__line__", line))) for a in raw_asserts]
    if transform is not None:  # each assertion judges the transformed output (then its own transform's)
        asserts = [{**a, TEST_TRANSFORM: transform} for a in asserts]
    threshold = entry.get("threshold", default.get("threshold"))
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        raise at.error(entry, f"threshold must be a number, got {threshold!r}", line=line)
    description = str(entry.get("description") or "")
    variables = {k: _var_value(v, at, line) for k, v in variables.items()}
    expanded = _expand(variables)
    return [
        Test(description, combination, asserts, None if threshold is None else float(threshold), line)
        for combination in expanded
    ]


def _check_assertion(assertion: Any, at: _Where, line: int) -> None:
    """Refuse, at the assertion's line, what cannot be judged here."""
    if not isinstance(assertion, dict) or not isinstance(assertion.get("type"), str):
        raise at.error(None, "an assertion is a mapping with a 'type'", line=line)
    line = assertion.get("__line__", line)
    kind = base_type(assertion["type"])[0]
    for key in ("transform", "contextTransform"):
        if key in assertion and not isinstance(assertion[key], str):
            raise at.error(None, f"an assertion's {key}: write JavaScript, inline or as file://x.js", line=line)
    if not is_known(assertion["type"]):
        raise at.error(None, f"assertion type {assertion['type']!r} is not supported here", line=line)
    if kind == "assert-set":
        for inner in assertion.get("assert") or []:
            _check_assertion(inner, at, line)


def _var_value(value: Any, at: _Where, line: int) -> Any:
    if isinstance(value, str) and value.startswith("file://"):
        target = at.file(value, None, line)
        if target.suffix in (".py", ".js"):
            raise at.error(None, f"{value}: vars computed by code are not supported", line=line)
        return target.read_text(encoding="utf-8")
    return value


def _expand(variables: dict[str, Any]) -> list[dict[str, Any]]:
    """A var holding a list of strings stands for one test per value (every combination of several);
    a list of anything else is one value (a conversation's turns), as promptfoo reads vars."""
    listed = [k for k, v in variables.items() if isinstance(v, list) and v and isinstance(v[0], str)]
    if not listed:
        return [variables]
    return [
        {**variables, **dict(zip(listed, values, strict=True))}
        for values in itertools.product(*(variables[k] for k in listed))
    ]


def _prepared_assertion(assertion: dict[str, Any], at: _Where, line: int) -> dict[str, Any]:
    """An assertion made self-contained: a python assertion carries its code (a file's read here)."""
    kind = base_type(str(assertion.get("type")))[0]
    if kind == "assert-set":
        return {**assertion, "assert": [_prepared_assertion(a, at, line) for a in assertion.get("assert") or []]}
    for key in ("transform", "contextTransform"):
        if isinstance(assertion.get(key), str):
            assertion = {**assertion, key: _javascript_code(assertion[key], key, at, line)}
    folder = (assertion.get("config") or {}).get("working_dir") if isinstance(assertion.get("config"), dict) else None
    if kind == "agent-rubric" and isinstance(folder, str) and folder:  # beside the config, as promptfoo reads it
        assertion = {
            **assertion,
            "config": {**assertion["config"], "working_dir": str((at.path.parent / folder).resolve())},
        }
    if kind == "javascript" and str(assertion.get("value") or "").startswith("file://"):
        return {**assertion, "value": _javascript_code(str(assertion["value"]), "javascript assertion", at, line)}
    if kind == "ruby":
        return _ruby_assertion(assertion, at, line)
    if kind != "python":
        return assertion
    value = _script_value(assertion, "python", at, line)
    if isinstance(value, dict):
        return value
    if "\n" in value.strip():
        body = "\n".join(f"    {row}" for row in value.strip("\n").splitlines())
    else:
        body = f"    return {value.strip()}"
    source = f"import json\nimport re\n\n\ndef main(output, context):\n{body}\n"
    try:
        compile(source, "<python assertion>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise at.error(None, f"python assertion: {exc.msg}", line=line) from None
    return {**assertion, "source": source, "function": "main"}


SCRIPT_SUFFIXES = {"python": "py", "ruby": "rb"}


def _script_value(assertion: dict[str, Any], language: str, at: _Where, line: int) -> str | dict[str, Any]:
    """A python or ruby assertion's code as written (an expression or a body), or, for
    ``file://x.py[:function]``, the assertion carrying that file's code (``get_assert`` by default)."""
    value = assertion.get("value")
    if not isinstance(value, str) or not value.strip():
        shapes = f"an expression, a body, or file://x.{SCRIPT_SUFFIXES[language]}"
        raise at.error(None, f"a {language} assertion needs its code ({shapes})", line=line)
    if not value.startswith("file://"):
        return value
    reference, _, function = value.removeprefix("file://").partition(":")
    source = at.file(reference, None, line).read_text(encoding="utf-8")
    return {**assertion, "source": source, "function": function or "get_assert"}


def _ruby_assertion(assertion: dict[str, Any], at: _Where, line: int) -> dict[str, Any]:
    """A ruby assertion with its code: ``file://x.rb[:method]`` read here (``get_assert`` by default),
    else the value as promptfoo wraps it, ``def main(output, context)`` returning it (one line) or
    running it (a body, indented as its first indented line is)."""
    value = _script_value(assertion, "ruby", at, line)
    if isinstance(value, dict):
        return value
    if "\n" in value:
        indent = re.search(r"^(?!\s*$)\s+", value, re.MULTILINE)
        prefix = indent.group(0) if indent else "  "
        body = "\n".join(f"{prefix}{row}" for row in value.split("\n"))
    else:
        body = f"  return {value}"
    return {**assertion, "source": f"require 'json'\n\ndef main(output, context)\n{body}\nend\n", "function": "main"}


def commonjs_call(source: str, reference: str, function: str) -> str:
    """A javascript assertion's file (a CommonJS module, as promptfoo's examples write them) as the
    body of the function promptfoo would call: the module run, then the function it exports (the
    one named after ``:``, else ``module.exports`` itself or its ``default``) called on the output.
    ``export default`` is read as ``module.exports.default``; ``require`` is not available."""
    source = re.sub(r"^export\s+default\s+", "module.exports.default = ", source, flags=re.MULTILINE)
    name = json.dumps(function)
    where = json.dumps(f"{reference}{':' + function if function else ''}")
    return (
        "const module = { exports: {} };\nconst exports = module.exports;\n"
        f"{source}\n;\n"
        f"const chosen = {name} ? module.exports[{name}]"
        " : (typeof module.exports === 'function' ? module.exports : module.exports.default);\n"
        f"if (typeof chosen !== 'function') throw new Error({where} + ' exports no function');\n"
        "return chosen(output, context);\n"
    )


def _give_workspace(tests: list[Test], folder: Any, at: _Where) -> None:
    """The agentic grader's ``working_dir`` (relative to the config's folder) for each ``agent-rubric``
    assertion that names none of its own."""

    def give(assertions: list[Assertion]) -> None:
        for assertion in assertions:
            kind = base_type(str(assertion.get("type")))[0]
            if kind == "assert-set":
                give(assertion.get("assert") or [])
            elif kind == "agent-rubric" and isinstance(folder, str) and folder:
                config = dict(assertion.get("config") or {})
                config.setdefault("working_dir", str((at.path.parent / folder).resolve()))
                assertion["config"] = config

    for test in tests:
        give(test.asserts)


def _grader(default: dict[str, Any], tests: list[Test], at: _Where) -> tuple[str | None, dict[str, Any]]:
    """The grading model: ``defaultTest.options.provider`` (or an assertion's ``provider``), and its config."""
    if not any(needs_model(test.asserts) for test in tests):
        return None, {}
    options = default.get("options") or {}
    provider = options.get("provider") if isinstance(options, dict) else None
    named = {a.get("provider") for t in tests for a in t.asserts if a.get("provider")}
    if provider is None and len(named) == 1:
        provider = named.pop()
    if isinstance(provider, dict) and "id" not in provider and ("text" in provider or "embedding" in provider):
        provider = provider.get("text")  # promptfoo's providers by the kind of output they grade with
    config: dict[str, Any] = {}
    if isinstance(provider, dict):
        config = strip_lines(provider.get("config") or {})
        provider = provider.get("id")
    if provider is None:
        return None, {}
    if not isinstance(provider, str):
        raise at.error(default, "defaultTest.options.provider must name a provider such as openai:chat:gpt-4.1-mini")
    return provider, config


def _service(default: dict[str, Any], at: _Where, kind: str) -> dict[str, Any]:
    """The model ``similar`` (``kind`` embedding) or ``moderation`` asks: the one given as
    ``defaultTest.options.provider.<kind>``, else promptfoo's default for it from the environment
    (OpenAI's ``text-embedding-3-large``, ``omni-moderation-latest``), as a ``models:`` entry."""
    api, fallback = SERVICES[kind]
    options = default.get("options") or {}
    provider = options.get("provider") if isinstance(options, dict) else None
    chosen = provider.get(kind) if isinstance(provider, dict) and "id" not in provider else None
    if chosen is None:
        return {"name": fallback, "model": fallback, "api": api}
    config = strip_lines(chosen.get("config") or {}) if isinstance(chosen, dict) else {}
    name = chosen.get("id") if isinstance(chosen, dict) else chosen
    model = _model_of(str(name), at, default.get("__line__", 1)) if isinstance(name, str) else None
    if model is None or model.get("api") != api:
        raise at.error(
            default,
            f"defaultTest.options.provider.{kind}: {name!r} is not a {kind} provider",
            f"name one such as openai:{kind}:{fallback}",
        )
    return {**model, **_endpoint(config)}


def render(template: str, variables: dict[str, Any], where: str) -> str:
    try:
        return _JINJA.render_bounded(compile_bounded(_JINJA, template), variables)
    except TemplateError as exc:
        raise ConfigError(f"{where}: the template cannot be rendered ({exc})") from None


def _messages(text: str) -> list[dict[str, Any]]:
    """A rendered prompt as chat messages: a JSON list of messages as it is, other text as one user turn."""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, list) and parsed and all(isinstance(m, dict) and "role" in m for m in parsed):
        return parsed
    return [{"role": "user", "content": text}]


def rows(suite: Suite) -> list[dict[str, Any]]:
    """One row per test and prompt: what a provider is sent and what its output is judged by."""
    found = []
    for number, test in enumerate(suite.tests):
        for prompt in suite.prompts:
            where = f"{suite.path.name}:{test.line}"
            text = render(prompt.template, _rendered_vars(test.vars, where), where)
            found.append(
                {
                    "test": number,
                    "description": test.description,
                    "prompt_label": prompt.label,
                    "vars": test.vars,
                    "prompt": _messages(text),
                    "prompt_text": text,
                    "assert": [_rendered(a, test.vars, where) for a in test.asserts],
                    "threshold": test.threshold,
                }
            )
    return found


def _rendered_vars(variables: dict[str, Any], where: str) -> dict[str, Any]:
    """The vars as promptfoo puts them in a prompt: each text var rendered as a template first (so
    one may use another, and one trailing newline is dropped, as Nunjucks drops it); a var that
    cannot be rendered (it names a var there is not) as it is."""
    rendered = {}
    for name, value in variables.items():
        if isinstance(value, str):
            try:
                value = render(value, variables, where).removesuffix("\n")
            except ConfigError:
                pass
        rendered[name] = value
    return rendered


def _rendered(assertion: Assertion, variables: dict[str, Any], where: str) -> Assertion:
    """An assertion's value with the test's vars filled in (promptfoo renders them too)."""
    if base_type(str(assertion.get("type")))[0] == "assert-set":
        return {**assertion, "assert": [_rendered(a, variables, where) for a in assertion.get("assert") or []]}
    value = assertion.get("value")
    if isinstance(value, str) and "{{" in value and "source" not in assertion:
        return {**assertion, "value": render(value, variables, where)}
    return assertion


def eval_document(suite: Suite, provider: Provider) -> dict[str, Any]:
    """The eval.yaml that runs the suite's rows against one provider."""
    models: dict[str, dict[str, Any]] = {}
    target: dict[str, Any] = {"input_messages": {"type": "item_reference", "item_reference": "item.prompt"}}
    model = _model_of(provider.id, _Where(suite.path), provider.line)
    if model is None:
        target["type"] = "echo"
    else:
        models[model["name"]] = {**model, **_endpoint(provider.config)}
        sampling = {k: v for k, v in provider.config.items() if k in SAMPLING}
        passthrough = provider.config.get("passthrough")  # sent as they are by promptfoo: logprobs only, here
        if isinstance(passthrough, dict):
            sampling.update({k: v for k, v in passthrough.items() if k in ("logprobs", "top_logprobs")})
        target.update({"type": "model", "model": model["name"], **({"sampling_params": sampling} if sampling else {})})
    criterion: dict[str, Any] = {
        "name": "assertions",
        "evaluator_name": "builtin.promptfoo_assertions",
        "data_mapping": {
            "assertions": "{{item.assert}}",
            "output": "{{sample.output_text}}",
            "sample": "{{sample}}",
            "vars": "{{item.vars}}",
            "prompt": "{{item.prompt_text}}",
            "threshold": "{{item.threshold}}",
        },
    }
    parameters: dict[str, Any] = {}
    if any(needs_model(t.asserts) for t in suite.tests):
        grader = _model_of(suite.grader, _Where(suite.path), 1) if suite.grader else None
        parameters["model"] = grader["name"] if grader else DEFAULT_GRADER
        if grader is not None:
            models.setdefault(grader["name"], grader)
    if provider.config.get("tools"):  # what is-valid-openai-tools-call checks calls against
        parameters["tools"] = provider.config["tools"]
    for service in suite.services:
        models.setdefault(service["name"], service)
    if model is not None and model.get("api") != "responses":  # a chat provider checks legacy function calls
        parameters["functions"] = provider.config.get("functions") or []
    if suite.tracing:  # promptfoo's trace: a span named after the provider over what it did
        parameters["trace_root"] = provider.label
    elif any(uses_trace(t.asserts) for t in suite.tests):
        parameters["tracing"] = False
    if parameters:
        criterion["initialization_parameters"] = parameters
    document: dict[str, Any] = {
        "name": f"{suite.name} · {provider.label}",
        "description": f"imported from {suite.path.name}",
        "dataset": {"local_uri": DATASET_FILE},
        "target": target,
        "evaluators": [criterion],
    }
    if models:
        document["models"] = {name: {k: v for k, v in entry.items() if k != "name"} for name, entry in models.items()}
    return document


def _endpoint(config: dict[str, Any]) -> dict[str, Any]:
    """Where a provider's config sends its calls."""
    found: dict[str, Any] = {}
    if config.get("apiBaseUrl"):
        found["base_url"] = str(config["apiBaseUrl"])
    if config.get("apiHost"):
        found["azure_endpoint"] = f"https://{str(config['apiHost']).removeprefix('https://')}"
    if config.get("apiKeyEnvar"):
        found["api_key_env"] = str(config["apiKeyEnvar"])
    if config.get("apiVersion"):
        found["api_version"] = str(config["apiVersion"])
    return found


def write_files(suite: Suite, folder: Path) -> list[Path]:
    """The dataset and one eval.yaml per provider, written into ``folder``; the eval.yaml paths."""
    folder.mkdir(parents=True, exist_ok=True)
    dataset = rows(suite)
    (folder / DATASET_FILE).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in dataset))
    written = []
    for provider in suite.providers:
        name = "eval.yaml" if len(suite.providers) == 1 else f"eval.{_slug(provider.label)}.yaml"
        header = (
            f"# Imported from {suite.path.name} by assay import promptfoo: tests × prompts against {provider.id}.\n"
        )
        document = eval_document(suite, provider)
        (folder / name).write_text(header + yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
        written.append(folder / name)
    return written


def work_folder(suite: Suite, home: Path) -> Path:
    """Where ``assay run`` keeps a config's imported files: one folder per config content."""
    digest = hashlib.sha256(suite.path.read_bytes()).hexdigest()[:10]
    return home / "promptfoo" / f"{_slug(suite.path.stem)}-{digest}"


def _slug(text: str) -> str:
    cleaned = "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")
    return "-".join(part for part in cleaned.split("-") if part)[:60] or "provider"
