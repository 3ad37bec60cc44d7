"""``assay view``: the store's UI served read-only, found by ``assay run`` for its closing link."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

from assay.api.announce import announced, server_for
from tests.cli.test_cli import ROOT, assay


def test_view_serves_the_run_read_only_and_run_links_to_it(tmp_path):
    config = ROOT / "examples" / "quickstart" / "eval.yaml"
    first = assay("run", str(config), home=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "view: assay view " in first.stdout  # no server yet: how to get one
    run_id = next(line.split()[-1] for line in first.stdout.splitlines() if line.startswith("run id:"))
    env = {**os.environ, "ASSAY_HOME": str(tmp_path), "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    viewer = subprocess.Popen(
        [sys.executable, "-m", "assay", "view", run_id[:14], "--port", "0", "--no-browser"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert viewer.stdout is not None
        line = viewer.stdout.readline()
        url = line.split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith(f"/ui/runs/{run_id}") and "read-only" in line
        base = url.split("/ui/")[0]
        page = fetch(url)
        assert "support-answers" in page and "f1_score" in page
        body = json.dumps({"name": "x", "data_source_config": {"type": "custom"}, "testing_criteria": []})
        try:
            fetch(f"{base}/v1/evals", body.encode())
            raise AssertionError("a write went through")
        except urllib.error.HTTPError as refused:
            assert refused.code == 405 and json.loads(refused.read())["error"]["code"] == "read_only"
        assert json.loads(fetch(f"{base}/v1/evals"))["object"] == "list"  # reading through the API still works
        second = assay("run", str(config), home=tmp_path)
        assert f"view: {base}/ui/runs/evalrun_" in second.stdout
    finally:
        viewer.terminate()
        viewer.communicate(timeout=30)  # waits, and closes the pipes
    assert list((tmp_path / "servers").glob("*.json")) == []  # the announcement leaves with the server


def fetch(url: str, body: bytes | None = None) -> str:
    request = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(response.read().decode())


def test_a_dead_servers_announcement_is_ignored_and_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path))
    with announced("http://127.0.0.1:1", "sqlite:///a.db"):
        assert server_for("sqlite:///a.db") == "http://127.0.0.1:1"
        assert server_for("sqlite:///b.db") is None
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / "servers" / f"{gone.stdout.strip()}.json"
    stale.write_text(json.dumps({"url": "http://127.0.0.1:2", "store": "x", "pid": int(gone.stdout)}))
    assert server_for("sqlite:///a.db") is None
    assert not stale.exists()
