"""`assay serve` and `assay view` on the port asked for: a taken port is said before anything claims
to serve, and `view --port P` serves on P even when a running `assay serve` has the store."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from assay.api.announce import announced
from assay.store import Store
from tests.support.fixtures import free_port


def _env(home):
    return {**os.environ, "ASSAY_HOME": str(home), "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}


def _on_a_taken_port(home, *args: str) -> tuple[int, subprocess.CompletedProcess[str]]:
    """``assay ARGS --port P`` while another socket listens on P."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        command = [sys.executable, "-m", "assay", *args, "--port", str(port)]
        return port, subprocess.run(command, env=_env(home), capture_output=True, text=True, timeout=120)


def test_serve_on_a_taken_port_says_so_and_never_claims_to_serve(tmp_path):
    port, done = _on_a_taken_port(tmp_path, "serve", "--workers", "0")
    assert done.returncode == 2, done.stderr
    assert "assay serving" not in done.stdout
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr
    assert "Traceback" not in done.stderr


def test_view_with_a_taken_port_given_says_so(tmp_path):
    port, done = _on_a_taken_port(tmp_path, "view", "--no-browser")
    assert done.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in done.stderr, done.stderr


def test_view_with_a_port_given_serves_there_even_when_a_server_has_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path))
    store = Store()
    url = store.url
    store.close()
    port = free_port()
    with announced("http://127.0.0.1:1", url):  # a running `assay serve` of this store, as view finds one
        viewer = subprocess.Popen(
            [sys.executable, "-m", "assay", "view", "--port", str(port), "--no-browser"],
            env=_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert viewer.stdout is not None
            line = viewer.stdout.readline()
        finally:
            viewer.terminate()
            viewer.communicate(timeout=30)
    assert line.startswith(f"http://127.0.0.1:{port}/ui") and "read-only" in line, line
