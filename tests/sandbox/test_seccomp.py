"""The sandbox's seccomp filter: the calls escapes begin with fail with EPERM inside it, and the
ordinary work of a grader (threads, subprocesses, files) still runs."""

from __future__ import annotations

import asyncio
import platform
import struct

from assay.sandbox import Limits, Sandbox, seccomp
from tests.sandbox.test_process_tree import skip_unless_required
from tests.support.sandbox import needs_bwrap

PROBES = """
import ctypes, os, subprocess, sys, threading
def grade(sample, item):
    libc = ctypes.CDLL(None, use_errno=True)
    refused = {}
    for name, call in {
        "unshare_user_namespace": lambda: libc.unshare(0x10000000),
        "ptrace": lambda: libc.ptrace(16, os.getppid(), 0, 0),  # PTRACE_ATTACH
        "io_uring_setup": lambda: libc.syscall(425, 1, 0),
        "mount": lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None),
        "bpf": lambda: libc.syscall(321, 0, 0, 0),
    }.items():
        ctypes.set_errno(0)
        result = call()
        refused[name] = result == -1 and ctypes.get_errno() == 1  # EPERM
    worker = threading.Thread(target=lambda: None)
    worker.start(); worker.join()
    child = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True)
    open("/tmp/x", "w").write("fine")
    return {"refused": refused, "child": child.stdout.strip(), "file": open("/tmp/x").read()}
"""


@needs_bwrap
def test_the_calls_escapes_begin_with_are_refused_and_ordinary_work_runs():
    if seccomp.program() is None:
        skip_unless_required(f"no seccomp table for {platform.machine()}")
    result = asyncio.run(Sandbox.configured().call(PROBES, "grade", {"sample": {}, "item": {}}, Limits(seconds=30)))
    assert result["refused"] == dict.fromkeys(result["refused"], True), result
    assert result["child"] == "42" and result["file"] == "fine"


def test_the_program_is_well_formed_for_each_architecture():
    for machine in seccomp.ARCHITECTURES:
        compiled = seccomp.program(machine)
        assert compiled is not None and len(compiled) % 8 == 0
        instructions = [struct.unpack("=HBBI", compiled[i : i + 8]) for i in range(0, len(compiled), 8)]
        assert instructions[-1] == (seccomp.RETURN, 0, 0, seccomp.ALLOW)  # anything not listed is allowed
        assert len(instructions) <= 4096  # the kernel's limit on a filter
    assert seccomp.program("sparc64") is None
