"""OpenAI's ``python`` grader: ``grade(sample, item) -> float`` from the criterion's ``source``.

Each call runs in a separate Python process with a wall-clock and CPU time limit, an address-space
limit, and the network cut off (socket creation refused; and, when running as root where
``unshare`` exists, a network namespace of its own). An exception, a timeout or a non-number is
an error result for that item.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, ItemError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score

MAX_SOURCE_BYTES = 256 * 1024


SANDBOX = Path(__file__).with_name("_sandbox.py")


def _command() -> list[str]:
    # The sandbox is run as a plain script: it imports only the standard library, so it starts fast.
    command = [sys.executable, "-I", str(SANDBOX)]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("unshare"):
        return ["unshare", "--net", "--", *command]
    return command


def python_grader(
    source: str, pass_threshold: float | None = None, time_limit: float = 120.0, memory_mb: int = 2048,
    image_tag: str | None = None,
) -> Evaluator:  # fmt: skip
    if not isinstance(source, str) or "def grade" not in source:
        raise ConfigError("a python grader's 'source' must define grade(sample, item)")
    if len(source.encode()) > MAX_SOURCE_BYTES:
        raise ConfigError("a python grader's source must be under 256 kB")
    try:
        compile(source, "<grader>", "exec")
    except SyntaxError as exc:
        raise ConfigError(f"python grader source, line {exc.lineno}: {exc.msg}") from None
    command = _command()

    async def evaluate(inputs: dict[str, Any]) -> Score:
        request = {"source": source, "sample": inputs.get("sample") or {}, "item": inputs.get("item") or {},
                   "memory_mb": memory_mb, "cpu_seconds": max(1, int(time_limit))}  # fmt: skip
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(json.dumps(request).encode()), time_limit)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise ItemError(f"the python grader ran past its {time_limit:g} s time limit") from None
        try:
            reply = json.loads(out)
        except ValueError:
            detail = err.decode(errors="replace").strip().splitlines()[-1:] or [f"exit code {process.returncode}"]
            raise ItemError(f"the python grader failed: {detail[0]}") from None
        if "error" in reply:
            raise ItemError(f"grade() failed: {reply['error']}")
        score = float(reply["score"])
        return Score(score, passed=None if pass_threshold is None else score >= pass_threshold)

    return evaluate


SPEC = EvaluatorSpec(
    name="python", description="OpenAI grader: grade(sample, item) -> float, run in a sandboxed process.",
    category="graders", required_inputs=["item"], optional_inputs=["sample"],
    metrics=[Metric(name="python", type="continuous", min_value=0, max_value=1, threshold=None)],
    init_parameters={
        "source": {"type": "string"}, "pass_threshold": {"type": "number"},
        "time_limit": {"type": "number", "default": 120}, "memory_mb": {"type": "integer", "default": 2048},
    },
    factory=python_grader,
)  # fmt: skip
