"""``@evaluator``: a plain function becomes a catalog evaluator, inputs bound by parameter name.

    @evaluator
    def exact(response: str, ground_truth: str) -> bool:
        return response.strip() == ground_truth.strip()

Parameters without defaults are required inputs, the others optional. The function may be sync
or async and may return a bool, a number, a dict (``score``, ``passed``, ``reason``,
``properties``) or a ``Score``. Inputs are checked when the eval is built, not mid-run.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any, overload

from assay.errors import ConfigError, ItemError
from assay.evaluators.base import Direction, Evaluator, EvaluatorSpec, Metric, Score

SPEC_ATTRIBUTE = "__assay_spec__"


@overload
def evaluator(fn: Callable[..., Any], /) -> Callable[..., Any]: ...
@overload
def evaluator(
    *,
    name: str | None = None,
    version: str = "1",
    threshold: float | None = 0.5,
    direction: Direction = "increase",
    min_value: float = 0.0,
    max_value: float = 1.0,
    description: str = "",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...
def evaluator(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    version: str = "1",
    threshold: float | None = 0.5,
    direction: Direction = "increase",
    min_value: float = 0.0,
    max_value: float = 1.0,
    description: str = "",
) -> Any:
    """Attach a catalog spec to ``fn`` and return ``fn`` unchanged (it stays callable as before)."""

    def wrap(function: Callable[..., Any]) -> Callable[..., Any]:
        metric = Metric(
            name=name or function.__name__,
            desirable_direction=direction,
            min_value=min_value,
            max_value=max_value,
            threshold=threshold,
        )
        setattr(function, SPEC_ATTRIBUTE, spec_from_function(function, metric, version, description))
        return function

    return wrap(fn) if fn is not None else wrap


def spec_from_function(
    function: Callable[..., Any],
    metric: Metric | None = None,
    version: str = "1",
    description: str = "",
    *,
    keep_output: bool = False,
    kwargs_take_every_column: bool = False,
) -> EvaluatorSpec:
    """An evaluator from a function or callable object: its named parameters are its inputs (those
    with defaults optional); ``*args`` and ``**kwargs`` receive nothing, except that with
    ``kwargs_take_every_column`` a function of ``**kwargs`` alone is given every column, as
    azure-ai-evaluation gives it. ``keep_output`` keeps what it returned under
    ``properties["output"]`` (azure-ai-evaluation writes those keys as columns) and scores even a
    return without a score."""
    existing = getattr(function, SPEC_ATTRIBUTE, None)
    if isinstance(existing, EvaluatorSpec):
        return existing
    label = getattr(function, "__name__", type(function).__name__)
    target = function if inspect.isfunction(function) or inspect.ismethod(function) else function.__call__  # type: ignore[operator]
    signature = inspect.signature(target)
    required: list[str] = []
    optional: list[str] = []
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue  # the inputs are the named parameters, as the peer binds them
        (optional if parameter.default is not parameter.empty else required).append(parameter.name)
    names = [*required, *optional]
    # With only **kwargs, azure-ai-evaluation's batch engine gives it every column (the whole item,
    # or what an explicit mapping names): ``assay.azure.evaluate`` asks for that. assay's own
    # evaluators name their inputs. (With named parameters too, those are its inputs.)
    var_keyword = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    every_column = kwargs_take_every_column and not names and var_keyword
    if not names and not every_column:
        hint = "name each input as a parameter, e.g. def score(response, ground_truth, **kwargs)"
        raise ConfigError(f"evaluator {label!r}: *args and **kwargs alone name no inputs", hint=hint)
    is_async = inspect.iscoroutinefunction(target)

    def factory() -> Evaluator:
        async def evaluate(inputs: dict[str, Any]) -> Score:
            if every_column:
                whole = set(inputs) <= {"item", "sample"} and isinstance(inputs.get("item"), dict)
                kwargs = dict(inputs["item"]) if whole else dict(inputs)
            else:
                kwargs = {key: inputs[key] for key in names if key in inputs}
            output = await target(**kwargs) if is_async else target(**kwargs)
            if not keep_output:
                return coerce_score(output)
            try:
                score = coerce_score(output)
            except ItemError:
                score = Score(1.0, passed=True)  # a dict of its own keys: nothing to judge, only to report
            return Score(
                score.value,
                passed=score.passed,
                reason=score.reason,
                label=score.label,
                properties={**score.properties, "output": output},
            )

        return evaluate

    return EvaluatorSpec(
        name=label,
        version=version,
        description=description or (inspect.getdoc(function) or "").split("\n")[0],
        category="custom",
        evaluator_type="custom",
        required_inputs=required,
        optional_inputs=optional,
        takes_whole_item=every_column,
        metrics=[metric or Metric(name=label, threshold=0.5)],
        factory=factory,
    )


def coerce_score(output: Any) -> Score:
    """Accept what custom evaluators naturally return."""
    if isinstance(output, Score):
        return output
    if isinstance(output, bool):
        return Score(1.0 if output else 0.0, passed=output)
    if isinstance(output, (int, float)):
        return Score(_finite(float(output)))
    if isinstance(output, dict):
        return _score_from_dict(output)
    raise ItemError(f"the evaluator returned {type(output).__name__}; return a bool, a number or a dict with 'score'")


def _score_from_dict(output: dict[str, Any]) -> Score:
    rest = dict(output)
    value = rest.pop("score", rest.pop("value", None))
    if value is None:
        numeric = [k for k, v in rest.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not numeric:
            raise ItemError(f"the evaluator returned a dict without a score (keys: {', '.join(output) or 'none'})")
        value = rest.pop(numeric[0])
    passed = rest.pop("passed", None)
    if isinstance(value, bool):
        passed, value = value if passed is None else passed, float(value)
    if not isinstance(value, (int, float)):
        raise ItemError(f"the evaluator's score is {type(value).__name__}, not a number")
    reason = rest.pop("reason", None)
    label = rest.pop("label", None)
    properties = rest.pop("properties", None) or {}
    properties.update(rest)
    return Score(
        _finite(float(value)),
        passed=None if passed is None else bool(passed),
        reason=None if reason is None else str(reason),
        label=label,
        properties=properties,
    )


def _finite(value: float) -> float:
    if math.isnan(value) or math.isinf(value):
        raise ItemError(f"the evaluator's score is {value}, not a finite number")
    return value
