"""The README's Ray block as written: the extra installs (it is installed), a run on a local Ray
instance of its own, a run joining a running cluster (the test's, for the README's ``head:6379``)
with more actors than the cluster has cores, and a worker that executes claimed runs there."""

from __future__ import annotations

import subprocess

import pytest

from tests.test_readme_snippets import blocks
from tests.test_readme_workflows import _background, lines, sh, shell  # noqa: F401 - shell is a fixture


@pytest.mark.usefixtures("ray_cluster")
def test_the_ray_block_runs_as_written(shell, ray_cluster):  # noqa: F811
    folder, env = shell
    (commands,) = blocks("Scale out: one run on a Ray cluster", "sh")
    install, local_run, joined_run, worker = lines(commands)
    env = {**env, "RAY_AUTH_MODE": "disabled"}
    sh(install, folder, env)  # already satisfied: nothing is downloaded
    assert "support-answers — completed" in sh(local_run, folder, env).stdout
    address = ray_cluster.get_runtime_context().gcs_address
    joined = sh(joined_run.replace("head:6379", address), folder, env)
    assert "support-answers — completed" in joined.stdout and "items: 16 total" in joined.stdout
    serving = _background(worker.replace("head:6379", address), folder, env, stdout=subprocess.PIPE)
    try:
        assert serving.stdout is not None and f"items on Ray actors at {address}" in serving.stdout.readline()
    finally:
        serving.terminate()  # the suite's load can slow its exit well past a quiet machine's 0.2 s
        serving.communicate(timeout=180)
