"""The one place untrusted code runs: python graders, code evaluators, anything later.

``await Sandbox.configured().call(source, "grade", {"sample": ..., "item": ...}, limits)`` starts
a fresh process for the call inside bubblewrap (see ``bwrap.py`` for what it can see), with
rlimits, a wall-clock limit after which its whole process group dies, and a cap on what it may
print. A failure of the code, a timeout or too much output is an ``ItemError`` for that item.

Policy, from ``ASSAY_SANDBOX``:

- ``require``: no bwrap, no call. ``assay serve`` and ``assay worker`` set this, keys or not: code
  comes to them over the API (a key-less server is reachable by any web page its user opens).
- ``unsandboxed``: the operator's explicit choice, by name, to let a server run posted code in a
  plain subprocess where bwrap is missing; the server says so as it starts.
- ``auto`` (default): bwrap when installed, else a plain subprocess with rlimits, a cleared
  environment and a private working directory, with one warning per process. For the local CLI,
  running the user's own files; it is not isolation.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import sys
import tempfile
from typing import Any

from assay.config.settings import settings
from assay.errors import ConfigError, ItemError
from assay.sandbox import bwrap, cgroup, process, seccomp
from assay.sandbox.limits import Limits, asked, ceilings

LOG = logging.getLogger("assay.sandbox")
INSTALL_HINT = "install Debian's bubblewrap package (apt-get install bubblewrap) to get bwrap"
_warned = False
_removing: set[asyncio.Future[None]] = set()
"""Cgroups being removed in the background (held so they are not collected half-way)."""


def _host_uid() -> int:
    """A uid of the call's own (no account has it), so its process limit counts its processes only."""
    return random.randrange(1_000_000_000, 2_000_000_000)


def _tasks_of(uid: int) -> int:
    """Processes and threads ``uid`` runs now (what RLIMIT_NPROC counts)."""
    count = 0
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                count += len(os.listdir(f"/proc/{entry.name}/task"))
        except OSError:
            continue  # it ended while we looked
    return count


class Sandbox:
    def __init__(self, bwrap_path: str | None, required: bool, ceiling: Limits) -> None:
        self.bwrap_path = bwrap_path
        self.required = required
        self.ceiling = ceiling
        self.peak_bytes: int | None = None
        """The most memory the last call's process tree held at once, where a cgroup measured it."""

    @classmethod
    def configured(cls) -> Sandbox:
        """The sandbox this process is set up for (``ASSAY_SANDBOX``, ``ASSAY_BWRAP``, the ceilings)."""
        return cls(bwrap.find_bwrap(), settings().sandbox == "require", ceilings())

    @property
    def isolated(self) -> bool:
        return self.bwrap_path is not None

    def check(self, what: str) -> None:
        """Refuse, before any work, code this process may not run."""
        if self.required and not self.isolated:
            raise ConfigError(
                f"{what} needs the sandbox, and bwrap is not installed on this server",
                hint=f"{INSTALL_HINT}; or the operator sets ASSAY_SANDBOX=unsandboxed to run code unisolated",
            )
        home = str(settings().home.resolve())
        if self.isolated and bwrap.exposes(home):
            raise ConfigError(
                f"ASSAY_HOME={home} lies inside the interpreter's files, which the sandbox shows",
                hint="keep ASSAY_HOME outside the Python installation and its virtualenv",
            )

    async def call(self, source: str, function: str, kwargs: dict[str, Any], limits: Limits) -> Any:
        """``function(**kwargs)`` from ``source``, run in a fresh sandboxed process; its return value."""
        self.check(f"running {function}()")
        limits = limits.clamp(self.ceiling)
        tree = cgroup.create(limits.memory_mb, limits.processes)
        try:
            body = _request(source, function, kwargs, limits, self.isolated, tree is not None)
            if self.isolated:
                finished = await self._isolated(body, limits, tree)
            else:
                finished = await self._unisolated(body, limits, tree)
        finally:
            self.peak_bytes = tree.peak_bytes() if tree is not None else None
            if tree is not None:  # the group stays busy a moment after its last process: not waited for
                _removing.add(removal := asyncio.get_running_loop().run_in_executor(None, tree.remove))
                removal.add_done_callback(_removing.discard)
        return _reply(finished, function, limits)

    async def _isolated(self, body: bytes, limits: Limits, tree: cgroup.Group | None) -> process.Finished:
        assert self.bwrap_path is not None
        with seccomp.filter_fd() as filter_fd:
            command = bwrap.command(self.bwrap_path, limits.file_mb, os.geteuid() == 0, filter_fd)
            command = tree.wrap(command) if tree is not None else command
            passed = (filter_fd,) if filter_fd is not None else ()
            env = dict(bwrap.ENVIRONMENT)
            return await process.run(command, body, limits.seconds, limits.output_bytes, env, pass_fds=passed)

    async def _unisolated(self, body: bytes, limits: Limits, tree: cgroup.Group | None) -> process.Finished:
        global _warned
        if not _warned:
            _warned = True
            LOG.warning("bwrap is not installed: code runs in a plain subprocess with rlimits only (%s)", INSTALL_HINT)
        command = [sys.executable, "-I", str(bwrap.RUNNER)]
        command = tree.wrap(command) if tree is not None else command
        with tempfile.TemporaryDirectory(prefix="assay-untrusted-", ignore_cleanup_errors=True) as workdir:
            env = {**bwrap.ENVIRONMENT, "HOME": workdir, "TMPDIR": workdir}
            return await process.run(command, body, limits.seconds, limits.output_bytes, env, cwd=workdir)


def _request(
    source: str, function: str, kwargs: dict[str, Any], limits: Limits, isolated: bool, tree_capped: bool
) -> bytes:
    """The runner's request: the code, its arguments, its rlimits and the uid it runs as."""
    uid = _host_uid() if isolated and os.geteuid() == 0 else None
    runner_limits = limits.for_runner(whole_tree_capped=tree_capped)
    if uid is None:  # the code shares this user's process count: allow what it has now, plus the limit
        runner_limits["processes"] += _tasks_of(os.getuid())
    request = {"source": source, "function": function, "kwargs": kwargs, "limits": runner_limits, "uid": uid}
    try:
        return json.dumps(request, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise ItemError(f"the inputs cannot be passed to {function}(): {exc}") from None


def _reply(finished: process.Finished, function: str, limits: Limits) -> Any:
    if finished.timed_out:
        raise ItemError(f"{function}() ran past its {limits.seconds:g} s time limit and was killed")
    if finished.overflowed:
        raise ItemError(f"{function}() printed more than {limits.output_bytes} bytes and was killed")
    try:
        reply = json.loads(finished.stdout)
    except (ValueError, RecursionError):
        last = finished.stderr.decode(errors="replace").strip().splitlines()[-1:]
        detail = last[0][:500] if last else f"exit code {finished.returncode}"
        if finished.returncode is not None and finished.returncode < 0:
            detail = f"killed by signal {-finished.returncode} ({detail})"
        raise ItemError(f"{function}() failed: {detail}") from None
    if not isinstance(reply, dict) or not ("value" in reply or "error" in reply):
        raise ItemError(f"{function}() gave no result")
    if "error" in reply:
        raise ItemError(f"{function}() failed: {reply['error']}")
    return reply["value"]


__all__ = ["INSTALL_HINT", "Limits", "Sandbox", "asked", "ceilings"]
