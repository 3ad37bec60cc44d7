"""Code evaluators: a Python file that defines ``evaluate(...)``, inputs bound by parameter name.

    THRESHOLD = 0.5

    def evaluate(response: str, ground_truth: str) -> float:
        return 1.0 if ground_truth.lower() in response.lower() else 0.0

Or, as Foundry's catalog and OpenAI's python grader write them, ``grade(sample, item)``: the whole
item and the run's sample (``{}`` when there is no target). It returns a bool, a number or a dict
(``score``, ``passed``, ``reason``, ``properties``). The
source is only ever read as text here: its inputs, ``THRESHOLD`` and docstring come from its
syntax tree, and every call runs in the sandbox (``assay.sandbox``), whoever registered it.
"""

from __future__ import annotations

import ast
import math
from typing import Any

from assay.errors import ConfigError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score
from assay.evaluators.decorator import coerce_score
from assay.sandbox import Limits, Sandbox

MAX_SOURCE_BYTES = 256 * 1024
CALL_LIMITS = Limits(seconds=30, memory_mb=1024)


def _parse(source: str, where: str) -> ast.Module:
    if len(source.encode(errors="surrogatepass")) > MAX_SOURCE_BYTES:
        raise ConfigError(f"{where}: a code evaluator must be under 256 kB")
    try:
        return ast.parse(source, filename=where)
    except SyntaxError as exc:
        raise ConfigError(f"{where}:{exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ConfigError(f"{where}: the file cannot be parsed ({type(exc).__name__})") from None


GRADE = "grade"
"""The entry point taking ``(sample, item)`` whole, when the file defines no ``evaluate``."""


def _entry_function(tree: ast.Module, where: str) -> ast.FunctionDef:
    defined = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    found = [n for n in defined if n.name == "evaluate"] or [n for n in defined if n.name == GRADE]
    if not found:
        raise ConfigError(
            f"{where}: define a function evaluate(...) whose parameters are the inputs it needs, or grade(sample, item)"
        )
    function = found[-1]
    if isinstance(function, ast.AsyncFunctionDef):
        raise ConfigError(f"{where}:{function.lineno}: {function.name}() must be a plain def, not async def")
    arguments = function.args
    if function.name == GRADE:
        if [a.arg for a in arguments.posonlyargs + arguments.args][:2] != ["sample", "item"]:
            raise ConfigError(f"{where}:{function.lineno}: grade() takes (sample, item), as a python grader does")
        return function
    if arguments.vararg or arguments.kwarg or arguments.posonlyargs:
        raise ConfigError(
            f"{where}:{function.lineno}: evaluate(): *args, **kwargs and positional-only "
            "parameters cannot be bound to inputs",
            hint="name each input as a parameter, e.g. def evaluate(response, ground_truth)",
        )
    return function


def _inputs(function: ast.FunctionDef) -> tuple[list[str], list[str]]:
    arguments = function.args
    positional = [a.arg for a in arguments.args]
    with_default = len(arguments.defaults)
    required = positional[: len(positional) - with_default]
    optional = positional[len(positional) - with_default :]
    for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        (required if default is None else optional).append(argument.arg)
    return required, optional


def _threshold(tree: ast.Module, where: str) -> float | None:
    value: Any = 0.5
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "THRESHOLD" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                raise ConfigError(f"{where}:{node.lineno}: THRESHOLD must be a number written out") from None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}: THRESHOLD must be a finite number, got {value!r}")
    return float(value)


def code_spec(name: str, version: str, source: str, where: str) -> EvaluatorSpec:
    tree = _parse(source, where)
    function = _entry_function(tree, where)
    whole = function.name == GRADE
    required, optional = ([], []) if whole else _inputs(function)
    names = [*required, *optional]
    short = name.split(".")[-1]

    def factory(pass_threshold: float | None = None) -> Evaluator:
        """``pass_threshold``: Foundry's catalog declares it for code evaluators (the criterion's
        pass mark, read by the binding); accepted here so a criterion may give it."""
        sandbox = Sandbox.configured()
        sandbox.check(f"code evaluator {name!r}")

        async def evaluate(inputs: dict[str, Any]) -> Score:
            if whole:
                kwargs = {"sample": inputs.get("sample") or {}, "item": inputs.get("item") or {}}
            else:
                kwargs = {key: inputs[key] for key in names if key in inputs}
            return coerce_score(await sandbox.call(source, function.name, kwargs, CALL_LIMITS))

        return evaluate

    docstring = (ast.get_docstring(function) or "").split("\n")[0]
    return EvaluatorSpec(
        name=name,
        version=version,
        description=docstring or f"Code evaluator from {where}.",
        category="custom",
        evaluator_type="custom",
        required_inputs=required,
        optional_inputs=optional,
        takes_whole_item=whole,
        metrics=[Metric(name=short, threshold=_threshold(tree, where))],
        factory=factory,
    )
