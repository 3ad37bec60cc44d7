"""Start one sandboxed process, feed it its request, read a bounded answer, kill it on time."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass


@dataclass(slots=True)
class Finished:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    overflowed: bool = False


class _Budget:
    """Bytes both streams may still deliver; past it the call is killed."""

    def __init__(self, limit: int) -> None:
        self.left = limit
        self.exceeded = asyncio.Event()

    async def drain(self, stream: asyncio.StreamReader) -> bytes:
        kept = bytearray()
        while chunk := await stream.read(65536):
            self.left -= len(chunk)
            if self.left < 0:
                self.exceeded.set()  # the caller kills the process; read on to its EOF, keeping nothing
            else:
                kept += chunk
        return bytes(kept)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    # The process leads its own session (start_new_session); under bwrap its death also takes down
    # the PID namespace, so nothing the code started outlives it.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def run(
    command: list[str],
    request: bytes,
    seconds: float,
    output_bytes: int,
    env: dict[str, str],
    cwd: str | None = None,
    pass_fds: tuple[int, ...] = (),
) -> Finished:
    """Run ``command`` with ``request`` on stdin; at most ``seconds`` and ``output_bytes``.
    ``pass_fds``: descriptors the command inherits (bwrap's seccomp filter)."""
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        env=env,
        cwd=cwd,
        pass_fds=pass_fds,
    )
    assert process.stdin and process.stdout and process.stderr
    budget = _Budget(output_bytes)
    work = asyncio.ensure_future(_collect(process, request, budget))
    overflow = asyncio.ensure_future(budget.exceeded.wait())
    try:
        done, _ = await asyncio.wait({work, overflow}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            return work.result()
        return Finished(None, b"", b"", timed_out=not done, overflowed=bool(done))
    finally:
        overflow.cancel()
        _kill_group(process)
        await _reap(process, work)


async def _reap(process: asyncio.subprocess.Process, work: asyncio.Future[Finished]) -> None:
    """Wait for the killed process and its pipes; a descendant that escaped the group may hold them
    open (only possible without bwrap), so after a grace period they are closed from this side."""
    try:
        await asyncio.wait_for(asyncio.shield(work), 2.0)
    except BaseException:  # noqa: BLE001 - timeout, cancellation or the collector's own failure
        work.cancel()
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()
        with contextlib.suppress(BaseException):
            await work
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            await process.wait()


async def _collect(process: asyncio.subprocess.Process, request: bytes, budget: _Budget) -> Finished:
    assert process.stdin and process.stdout and process.stderr
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(request)
        await process.stdin.drain()
        process.stdin.close()
    out, err = await asyncio.gather(budget.drain(process.stdout), budget.drain(process.stderr))
    return Finished(await process.wait(), out, err)
