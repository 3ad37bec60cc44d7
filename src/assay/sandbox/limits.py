"""What one call of untrusted code may use, and the server's ceilings on what a criterion may ask.

A python grader may ask for ``time_limit`` and ``memory_mb`` (OpenAI's parameters); it gets at
most the ceilings, which the operator sets with environment variables:

==================================  =========  ==============================================
variable                            default    what
==================================  =========  ==============================================
``ASSAY_SANDBOX_MAX_SECONDS``       120        wall-clock (and CPU) seconds per call
``ASSAY_SANDBOX_MAX_MEMORY_MB``     2048       memory of the call's whole process tree
``ASSAY_SANDBOX_MAX_PROCESSES``     32         processes and threads of the call
``ASSAY_SANDBOX_MAX_FILE_MB``       64         largest file it may write, and ``/tmp``'s size
``ASSAY_SANDBOX_MAX_OUTPUT_BYTES``  1048576    stdout + stderr kept; more kills the call
==================================  =========  ==============================================

Memory and processes are capped for the whole tree by a cgroup of the call's own where this
process may make one (``assay.sandbox.cgroup``: root on cgroup v1, or a delegated v2 subtree).
Elsewhere they fall back to rlimits, which bind each process: each then gets ``memory / processes``
of address space (fewer processes where that share would be under 32 MB), so the tree's total
stays within the limit either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from assay.config.settings import settings
from assay.errors import ConfigError

MIN_PROCESS_MB = 32
"""Address space a Python process needs to start and run a small grader (about 17 MB at start)."""


@dataclass(frozen=True, slots=True)
class Limits:
    seconds: float = 120.0
    """Wall-clock limit; the CPU limit is the same number of seconds."""
    memory_mb: int = 2048
    processes: int = 32
    file_mb: int = 64
    open_files: int = 64
    output_bytes: int = 1024 * 1024
    reserves_address_space: bool = False
    """The code reserves far more address space than it uses (V8 reserves its heap's cage, about
    150 GB, at start): memory is then capped by what it commits (RLIMIT_DATA), not by RLIMIT_AS.
    Set by assay for the runners it writes (JavaScript assertions), never from a request."""

    def clamp(self, ceiling: Limits) -> Limits:
        """These limits, none above ``ceiling``'s."""
        return Limits(
            seconds=min(self.seconds, ceiling.seconds),
            memory_mb=min(self.memory_mb, ceiling.memory_mb),
            processes=min(self.processes, ceiling.processes),
            file_mb=min(self.file_mb, ceiling.file_mb),
            open_files=min(self.open_files, ceiling.open_files),
            output_bytes=min(self.output_bytes, ceiling.output_bytes),
            reserves_address_space=self.reserves_address_space,
        )

    def for_runner(self, *, whole_tree_capped: bool) -> dict[str, int]:
        """The rlimits the runner sets on itself (and its children inherit).

        rlimits bind each process, not the tree. Where a cgroup caps the tree
        (``whole_tree_capped``), one process may use all of the memory; elsewhere each process
        gets an equal share of it, with fewer processes allowed where a share would be too small
        for an interpreter to start, so the tree as a whole still stays within ``memory_mb``."""
        processes, memory_mb = self.processes, self.memory_mb
        if not whole_tree_capped:
            processes = max(1, min(processes, memory_mb // MIN_PROCESS_MB))
            memory_mb = max(1, memory_mb // processes)
        return {
            "memory_mb": memory_mb,
            "cpu_seconds": max(1, math.ceil(self.seconds)),
            "processes": processes,
            "file_mb": self.file_mb,
            "open_files": self.open_files,
            "reserves_address_space": int(self.reserves_address_space),
        }


def ceilings() -> Limits:
    """The server's ceilings, from the environment."""
    chosen = settings()
    return replace(
        Limits(),
        seconds=chosen.sandbox_max_seconds,
        memory_mb=chosen.sandbox_max_memory_mb,
        processes=chosen.sandbox_max_processes,
        file_mb=chosen.sandbox_max_file_mb,
        output_bytes=chosen.sandbox_max_output_bytes,
    )


def asked(seconds: object, memory_mb: object, where: str) -> Limits:
    """The limits a criterion asks for, checked (finite and positive), then clamped to the ceilings."""
    values = {}
    for field, value in (("time_limit", seconds), ("memory_mb", memory_mb)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ConfigError(f"{where}: '{field}' must be a positive number, got {value!r}")
        values[field] = value
    return Limits(seconds=float(values["time_limit"]), memory_mb=max(16, int(values["memory_mb"]))).clamp(ceilings())
