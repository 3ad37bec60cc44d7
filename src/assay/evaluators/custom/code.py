"""Code evaluators: a Python file that defines ``evaluate(...)``, inputs bound by parameter name.

    def evaluate(response: str, ground_truth: str) -> float:
        return 1.0 if ground_truth.lower() in response.lower() else 0.0

It returns what an ``@evaluator`` function may return (bool, number, dict or Score). The file is the
user's own code and runs in the evaluating process; the ``python`` grader is the sandboxed kind.
"""

from __future__ import annotations

from typing import Any

from assay.errors import ConfigError
from assay.evaluators.base import EvaluatorSpec, Metric
from assay.evaluators.decorator import spec_from_function


def code_spec(name: str, version: str, source: str, where: str) -> EvaluatorSpec:
    namespace: dict[str, Any] = {"__name__": f"assay_custom_{name.replace('.', '_')}"}
    try:
        exec(compile(source, where, "exec"), namespace)  # noqa: S102 - the user's own evaluator file
    except SyntaxError as exc:
        raise ConfigError(f"{where}:{exc.lineno}: {exc.msg}") from None
    except Exception as exc:  # noqa: BLE001 - any failure while loading the file is the user's to fix
        raise ConfigError(f"{where}: loading the file failed: {type(exc).__name__}: {exc}") from None
    function = namespace.get("evaluate")
    if not callable(function):
        raise ConfigError(f"{where}: define a function evaluate(...) whose parameters are the inputs it needs")
    threshold = namespace.get("THRESHOLD", 0.5)
    spec = spec_from_function(function, Metric(name=name.split(".")[-1], threshold=threshold), version)
    return spec.model_copy(update={"name": name, "description": spec.description or f"Code evaluator from {where}."})
