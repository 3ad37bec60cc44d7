"""The sandbox caps a call's whole process tree, not each process: a grader that forks five
children touching 150 MB each, under a 200 MB cap, cannot hold 750 MB."""

from __future__ import annotations

import asyncio
import os

import pytest

from assay.sandbox import Limits, Sandbox, cgroup

MB = 1024 * 1024
FORKING_GRADER = """
import os, time
def grade(sample, item):
    children = []
    for _ in range(5):
        pid = os.fork()
        if pid == 0:
            try:
                block = b"\\x01" * (150 * 1024 * 1024)  # written, so every page is really held
                time.sleep(1.5)  # all five hold their block at once
                os._exit(0 if block[-1] == 1 else 2)
            except MemoryError:
                os._exit(3)
        children.append(pid)
    through = 0
    for pid in children:
        _, status = os.waitpid(pid, 0)
        through += os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    return through
"""


@pytest.fixture(params=["cgroup", "rlimits"])
def capped_sandbox(request, monkeypatch):
    monkeypatch.setenv("ASSAY_SANDBOX_MAX_MEMORY_MB", "200")
    monkeypatch.setenv("ASSAY_SANDBOX_CGROUP", "auto" if request.param == "cgroup" else "off")
    cgroup.hierarchies.cache_clear()
    if request.param == "cgroup" and not cgroup.available():
        pytest.skip("this process may not create cgroups (not root, no delegated cgroup v2 subtree)")
    yield request.param, Sandbox.configured()
    cgroup.hierarchies.cache_clear()


def test_five_forked_children_share_one_memory_cap(capped_sandbox):
    kind, sandbox = capped_sandbox
    through = asyncio.run(sandbox.call(FORKING_GRADER, "grade", {"sample": {}, "item": {}}, Limits(seconds=30)))
    assert through <= 1  # 2 × 150 MB is already over the 200 MB the whole tree may hold
    if kind == "cgroup":
        assert sandbox.peak_bytes is not None and sandbox.peak_bytes <= 200 * MB


def test_the_rlimit_fallback_shares_the_memory_between_the_processes():
    runner = Limits(memory_mb=200, processes=32).for_runner(whole_tree_capped=False)
    assert runner["memory_mb"] * runner["processes"] <= 200
    assert runner["memory_mb"] >= 32  # still enough for an interpreter
    assert Limits(memory_mb=200).for_runner(whole_tree_capped=True)["memory_mb"] == 200


def test_a_call_leaves_no_cgroup_behind(monkeypatch):
    monkeypatch.setenv("ASSAY_SANDBOX_CGROUP", "auto")
    cgroup.hierarchies.cache_clear()
    if not cgroup.available():
        pytest.skip("this process may not create cgroups")
    parents = [h.parent for h in cgroup.hierarchies()]
    before = {p: set(os.listdir(p)) for p in parents}
    asyncio.run(Sandbox.configured().call("def grade(sample, item):\n    return 1.0\n", "grade",
                                          {"sample": {}, "item": {}}, Limits(seconds=10)))
    # asyncio.run waits for the background removal before it returns
    assert {p: set(os.listdir(p)) for p in parents} == before
