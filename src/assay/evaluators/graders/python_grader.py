"""OpenAI's ``python`` grader: ``grade(sample, item) -> float`` from the criterion's ``source``.

Each call runs in a fresh process in the sandbox (``assay.sandbox``): no network, no files but its
own tmp, a process, memory and output budget, killed with everything it started at its time limit.
``time_limit`` and ``memory_mb`` are clamped to the server's ceilings. An exception, a timeout, a
non-number or a non-finite number is an error result for that item.
"""

from __future__ import annotations

import math
from typing import Any

from assay.errors import ConfigError, ItemError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score
from assay.sandbox import Sandbox, asked

MAX_SOURCE_BYTES = 256 * 1024


def python_grader(
    source: str,
    pass_threshold: float | None = None,
    time_limit: float = 120.0,
    memory_mb: int = 2048,
    image_tag: str | None = None,
) -> Evaluator:
    if not isinstance(source, str) or "def grade" not in source:
        raise ConfigError("a python grader's 'source' must define grade(sample, item)")
    if len(source.encode(errors="surrogatepass")) > MAX_SOURCE_BYTES:
        raise ConfigError("a python grader's source must be under 256 kB")
    try:
        compile(source, "<grader>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        where = f"python grader source, line {line}" if line else "python grader source"
        raise ConfigError(f"{where}: {getattr(exc, 'msg', exc)}") from None
    limits = asked(time_limit, memory_mb, "python grader")
    sandbox = Sandbox.configured()
    sandbox.check("a python grader")

    async def evaluate(inputs: dict[str, Any]) -> Score:
        kwargs = {"sample": inputs.get("sample") or {}, "item": inputs.get("item") or {}}
        score = await sandbox.call(source, "grade", kwargs, limits)
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise ItemError(f"grade() returned {type(score).__name__}, not a number")
        if not math.isfinite(score):
            raise ItemError(f"grade() returned {score}, not a finite number")
        return Score(float(score), passed=None if pass_threshold is None else score >= pass_threshold)

    return evaluate


SPEC = EvaluatorSpec(
    name="python",
    description="OpenAI grader: grade(sample, item) -> float, run in a sandboxed process.",
    category="graders",
    required_inputs=["item"],
    optional_inputs=["sample"],
    metrics=[Metric(name="python", type="continuous", min_value=0, max_value=1, threshold=None)],
    init_parameters={
        "source": {"type": "string"},
        "pass_threshold": {"type": "number"},
        "time_limit": {"type": "number", "default": 120},
        "memory_mb": {"type": "integer", "default": 2048},
    },
    factory=python_grader,
)
