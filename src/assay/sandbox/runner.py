"""Runs one call of untrusted code; started fresh for it alone, inside the sandbox.

Standard library only (it must start fast and import nothing of assay's). Reads one JSON request
on stdin::

    {"source": "...", "function": "grade", "kwargs": {...}, "uid": 1234567 | null,
     "limits": {"memory_mb", "cpu_seconds", "processes", "file_mb", "open_files", "reserves_address_space"}}

drops to ``uid`` when given (the sandbox starts it as root with only CAP_SETUID/CAP_SETGID, so a
host uid of its own makes RLIMIT_NPROC bind), applies the limits, runs ``function(**kwargs)`` and
writes ``{"value": ...}`` or ``{"error": "..."}`` as JSON on the stdout it was given. The code's
own prints go to stderr, which the parent caps and mostly discards.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from typing import Any

MB = 1024 * 1024


def _become(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # leaving uid 0 clears every capability


RESERVED_ADDRESS_SPACE = 512 * 1024 * MB
"""The address space allowed code that reserves more than it uses (V8); its memory is capped by
RLIMIT_DATA, which counts what it commits."""


def _limit(limits: dict[str, int]) -> None:
    memory = limits["memory_mb"] * MB
    if limits.get("reserves_address_space"):
        resource.setrlimit(resource.RLIMIT_AS, (RESERVED_ADDRESS_SPACE, RESERVED_ADDRESS_SPACE))
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
    else:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_seconds"], limits["cpu_seconds"]))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_mb"] * MB, limits["file_mb"] * MB))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"], limits["open_files"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _call(request: dict[str, Any]) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "untrusted"}
    exec(compile(request["source"], "<untrusted>", "exec"), namespace)  # noqa: S102 - running it is the job
    function = namespace.get(request["function"])
    if not callable(function):
        raise TypeError(f"the source must define {request['function']}(...)")
    return {"value": function(**request["kwargs"])}


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    if request.get("uid") is not None:
        _become(int(request["uid"]))
    _limit(request["limits"])
    reply_fd = os.dup(1)
    os.dup2(2, 1)  # the code's prints (and writes to fd 1) land on stderr, not in the reply
    try:
        reply = _call(request)
        text = json.dumps(reply)
    except MemoryError:
        text = json.dumps({"error": f"MemoryError: over the {request['limits']['memory_mb']} MB memory limit"})
    except BaseException as exc:  # noqa: BLE001 - any failure of the code is its result, not ours
        text = json.dumps({"error": f"{type(exc).__name__}: {exc}"[:2000]})
    with os.fdopen(reply_fd, "w", encoding="utf-8") as reply_out:
        reply_out.write(text)


if __name__ == "__main__":
    main()
