"""One cgroup per call of untrusted code: its memory and its process count are capped for the
whole tree it starts, not per process (five forked children cannot take five times the memory).

Where the process may create one (root on cgroup v1's ``memory`` and ``pids`` hierarchies, as on
these machines and most container hosts; or a cgroup v2 subtree with both controllers delegated),
each call gets a fresh group under this process's own, with ``memory`` = the call's memory limit
and ``pids`` = its process limit. The sandboxed command is started through ``/bin/sh``, which
joins the group and then execs it, so nothing of the call runs outside the group for a moment.
Elsewhere (an unprivileged user without delegation) ``available()`` is False and the caller falls
back to per-process rlimits sized so that the whole tree still fits (``Limits.for_runner``).
``ASSAY_SANDBOX_CGROUP=off`` chooses the fallback.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from assay.config.settings import settings

MB = 1024 * 1024
ROOT = Path("/sys/fs/cgroup")
REMOVAL_SECONDS = 30.0
LOG = logging.getLogger(__name__)
JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
"""Join each ``cgroup.procs`` given before ``--``, then become the command after it."""


@dataclass(frozen=True)
class Hierarchy:
    """Where new groups go for one controller (v1), or for both (v2)."""

    parent: Path
    controllers: tuple[str, ...]


@dataclass
class Group:
    """A call's cgroup directories (one per v1 hierarchy, or one v2 directory)."""

    paths: list[Path]

    def wrap(self, command: list[str]) -> list[str]:
        procs = [str(path / "cgroup.procs") for path in self.paths]
        return ["/bin/sh", "-c", JOIN, "sh", *procs, "--", *command]

    def peak_bytes(self) -> int | None:
        """The most memory the call's whole tree held at once."""
        for path in self.paths:
            for name in ("memory.max_usage_in_bytes", "memory.peak"):
                with contextlib.suppress(OSError, ValueError):
                    return int((path / name).read_text())
        return None

    def remove(self) -> None:
        """Kill whatever of the call is still in the group (a child that left the process group
        cannot leave the cgroup), then remove it.

        The kernel keeps a group busy until its last task is fully gone, which on a loaded host
        can take well over a second after the reap: retried with a growing pause for up to
        ``REMOVAL_SECONDS``, then left with a warning rather than blocking forever."""
        for path in self.paths:
            deadline = time.monotonic() + REMOVAL_SECONDS
            pause = 0.002
            while True:
                with contextlib.suppress(OSError, ValueError):
                    for pid in (path / "cgroup.procs").read_text().split():
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.kill(int(pid), signal.SIGKILL)
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:  # busy until its last task is gone
                    if time.monotonic() >= deadline:
                        LOG.warning("could not remove the sandbox cgroup %s: %s", path, exc)
                        break
                    time.sleep(pause)
                    pause = min(pause * 2, 0.1)


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under ``""`` its v2 path."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                found[controller] = path
    return found


def _mounts() -> dict[str, Path]:
    """Mount point per v1 controller, and under ``""`` the v2 mount."""
    found: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            kind = fields[fields.index("-") + 1]
            if kind == "cgroup2":
                found.setdefault("", Path(fields[4]))
            elif kind == "cgroup":
                for option in fields[-1].split(","):
                    if option in ("memory", "pids"):
                        found[option] = Path(fields[4])
    return found


@functools.cache
def hierarchies() -> tuple[Hierarchy, ...]:
    """Where this process may create groups with memory and pids limits; empty when nowhere."""
    if settings().sandbox_cgroup == "off":
        return ()
    own, mounts = _own_paths(), _mounts()
    if "memory" in mounts and "pids" in mounts:
        found = tuple(Hierarchy(mounts[c] / own.get(c, "/").lstrip("/"), (c,)) for c in ("memory", "pids"))
        if all(_writable(h.parent) for h in found):
            return found
    if "" in mounts:
        parent = mounts[""] / own.get("", "/").lstrip("/")
        enabled = (parent / "cgroup.subtree_control").read_text().split() if _writable(parent) else []
        if {"memory", "pids"} <= set(enabled):
            return (Hierarchy(parent, ("memory", "pids")),)
    return ()


def _writable(path: Path) -> bool:
    probe = path / f"assay-probe-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True


def available() -> bool:
    return bool(hierarchies())


def create(memory_mb: int, processes: int) -> Group | None:
    """A fresh group capped at ``memory_mb`` (no swap beyond it) and ``processes``; None where
    groups cannot be made. The caller removes it (``Group.remove``) once the call is over."""
    paths: list[Path] = []
    name = f"assay-sandbox-{uuid.uuid4().hex}"
    try:
        for hierarchy in hierarchies():
            path = hierarchy.parent / name
            path.mkdir()
            paths.append(path)
            _limit(path, hierarchy.controllers, memory_mb, processes)
    except OSError:
        Group(paths).remove()
        return None
    return Group(paths) if paths else None


def _limit(path: Path, controllers: tuple[str, ...], memory_mb: int, processes: int) -> None:
    limit = str(memory_mb * MB)
    if "memory" in controllers:
        if (path / "memory.limit_in_bytes").exists():  # v1
            (path / "memory.limit_in_bytes").write_text(limit)
            with contextlib.suppress(OSError):  # swap accounting may be off
                (path / "memory.memsw.limit_in_bytes").write_text(limit)
        else:
            (path / "memory.max").write_text(limit)
            with contextlib.suppress(OSError):
                (path / "memory.swap.max").write_text("0")
    if "pids" in controllers:
        (path / "pids.max").write_text(str(processes))
