"""Runs one python grader call in this process, which the parent started for it alone.

Reads ``{"source", "sample", "item", "memory_mb", "cpu_seconds"}`` as JSON on stdin, applies the
limits, cuts off the network, runs ``grade(sample, item)`` and writes ``{"score": x}`` or
``{"error": "..."}`` as JSON on stdout.
"""

from __future__ import annotations

import json
import resource
import socket
import sys
from typing import Any, NoReturn


def _no_network(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise PermissionError("python graders have no network access")


class _LocalOnlySocket(socket.socket):
    def __init__(self, family: int = -1, *args: Any, **kwargs: Any) -> None:
        if family in (socket.AF_INET, socket.AF_INET6, -1):
            _no_network()
        super().__init__(family, *args, **kwargs)


def _limit(memory_mb: int, cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 1024 * 1024, memory_mb * 1024 * 1024))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    socket.socket = _LocalOnlySocket  # type: ignore[misc]
    socket.create_connection = _no_network
    socket.getaddrinfo = _no_network


def main() -> None:
    request = json.loads(sys.stdin.read())
    _limit(int(request["memory_mb"]), int(request["cpu_seconds"]))
    try:
        namespace: dict[str, Any] = {"__name__": "grader"}
        exec(compile(request["source"], "<grader>", "exec"), namespace)  # noqa: S102 - running graders is the job
        grade = namespace.get("grade")
        if not callable(grade):
            raise TypeError("the source must define grade(sample, item)")
        score = grade(request["sample"], request["item"])
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise TypeError(f"grade() returned {type(score).__name__}, not a number")
        reply: dict[str, Any] = {"score": float(score)}
    except MemoryError:
        reply = {"error": f"MemoryError: over the {request['memory_mb']} MB limit"}
    except BaseException as exc:  # noqa: BLE001 - any failure of user code is reported, not raised
        reply = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    main()
