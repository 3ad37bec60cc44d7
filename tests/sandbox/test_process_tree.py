"""The sandbox caps a call's whole process tree, not each process: a grader that forks five
children touching 150 MB each, under a 200 MB cap, cannot hold 750 MB."""

from __future__ import annotations

import asyncio
import os

import pytest

from assay.sandbox import Limits, Sandbox, cgroup

MB = 1024 * 1024


def skip_unless_required(why: str) -> None:
    """Skip on a laptop; fail where the sandbox must be whole (CI sets ASSAY_TEST_REQUIRE_SANDBOX)."""
    if os.environ.get("ASSAY_TEST_REQUIRE_SANDBOX"):
        pytest.fail(f"{why}, and ASSAY_TEST_REQUIRE_SANDBOX is set")
    pytest.skip(why)


FORKING_GRADER = """
import os, select
def grade(sample, item):
    # Each child holds its block until every child has either said it holds one or died: all five
    # would hold theirs at once if the tree had room (a barrier, not a sleep).
    ready_r, ready_w = os.pipe()
    release_r, release_w = os.pipe()
    children = []
    for _ in range(5):
        pid = os.fork()
        if pid == 0:
            os.close(ready_r); os.close(release_w)
            try:
                block = b"\\x01" * (150 * 1024 * 1024)  # written, so every page is really held
            except MemoryError:
                os._exit(3)
            os.write(ready_w, b"1")
            os.read(release_r, 1)  # until the parent releases every child
            os._exit(0 if block[-1] == 1 else 2)
        children.append(pid)
    os.close(ready_w); os.close(release_r)
    statuses, ready = {}, 0
    while ready + len(statuses) < len(children):
        if select.select([ready_r], [], [], 0.05)[0]:
            ready += len(os.read(ready_r, 16))
        for pid in children:
            if pid not in statuses:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    statuses[pid] = status
    os.close(release_w)
    for pid in children:
        if pid not in statuses:
            statuses[pid] = os.waitpid(pid, 0)[1]
    return sum(os.WIFEXITED(s) and os.WEXITSTATUS(s) == 0 for s in statuses.values())
"""


@pytest.fixture(params=["cgroup", "rlimits"])
def capped_sandbox(request, monkeypatch):
    monkeypatch.setenv("ASSAY_SANDBOX_MAX_MEMORY_MB", "200")
    monkeypatch.setenv("ASSAY_SANDBOX_CGROUP", "auto" if request.param == "cgroup" else "off")
    cgroup.hierarchies.cache_clear()
    if request.param == "cgroup" and not cgroup.available():
        skip_unless_required("this process may not create cgroups (not root, no delegated cgroup v2 subtree)")
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
        skip_unless_required("this process may not create cgroups")
    # This call's own groups, not a listing of their parents: other tests' calls come and go there.
    made: list[cgroup.Group] = []
    create = cgroup.create

    def recorded(*args: int) -> cgroup.Group | None:
        group = create(*args)
        if group is not None:
            made.append(group)
        return group

    monkeypatch.setattr(cgroup, "create", recorded)
    asyncio.run(
        Sandbox.configured().call(
            "def grade(sample, item):\n    return 1.0\n", "grade", {"sample": {}, "item": {}}, Limits(seconds=10)
        )
    )
    # asyncio.run waits for the background removal before it returns
    (group,) = made
    assert group.paths and [path for path in group.paths if path.exists()] == []
