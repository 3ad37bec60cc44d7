"""Start and drive the scripted OpenAI-compatible server (a separate process on a free port)."""

from __future__ import annotations

import json
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LLMServer:
    process: subprocess.Popen[str]
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def script(self, **script: Any) -> None:
        self._post("/_script", script)

    def reset(self) -> None:
        self._post("/_reset", {})

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stats", timeout=10) as response:
            return dict(json.loads(response.read()))

    def stop(self) -> None:
        self.process.terminate()
        self.process.communicate(timeout=10)  # closes its stdout too


def start_llm_server(port: int | None = None) -> LLMServer:
    """The scripted server on ``port`` (default: one the server chooses itself and says, so that no
    other test's server can take it between a check that it is free and the bind)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.llm_server", str(port or 0)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 30)
    banner = process.stdout.readline() if ready else ""
    if not banner.startswith("listening on "):
        process.kill()
        process.communicate()
        raise RuntimeError(f"the test LLM server did not start (it said {banner!r})")
    return LLMServer(process, int(banner.split()[-1]))


def recorded_batches(store: Any, monkeypatch: Any) -> list[int]:
    """The size of each batch ``store.add_output_items`` is given from now on, in order."""
    sizes: list[int] = []
    write = store.add_output_items

    def recorded(run_id: str, items: Any, **kwargs: Any) -> Any:
        sizes.append(len(items))
        return write(run_id, items, **kwargs)

    monkeypatch.setattr(store, "add_output_items", recorded)
    return sizes


T = TypeVar("T")
_NEVER = threading.Event()


def poll(check: Callable[[], T], done: Callable[[T], bool], *, seconds: float, every: float = 0.1) -> T:
    """Ask ``check`` until ``done`` holds for its answer or ``seconds`` pass; the last answer either
    way (the caller asserts on it). The one place tests wait on a condition under a deadline."""
    deadline = time.monotonic() + seconds
    value = check()
    while not done(value) and time.monotonic() < deadline:
        _NEVER.wait(every)
        value = check()
    return value


def port_of(url: str) -> int:
    """The port of a server's address, as it printed it (``http://127.0.0.1:PORT``)."""
    port = urllib.parse.urlsplit(url).port
    assert port is not None, url
    return port


SERVING = re.compile(r"assay serving on (https?://\S+?)/v1")


@dataclass
class AssayServe:
    """An ``assay serve`` process started by ``serve_assay``, its address and everything it printed."""

    process: subprocess.Popen[str]
    url: str
    lines: list[str]
    reader: threading.Thread

    @property
    def port(self) -> int:
        return port_of(self.url)

    def stop(self, timeout: float = 20) -> str:
        """SIGTERM, then everything the server printed."""
        self.process.terminate()
        self.process.wait(timeout=timeout)
        self.reader.join(timeout=timeout)
        if self.process.stdout is not None:
            self.process.stdout.close()
        return "".join(self.lines)


def serve_assay(
    arguments: list[str], env: dict[str, str], *, seconds: float = 30, api_key: str | None = None
) -> AssayServe:
    """``assay serve --port 0 ARGUMENTS``, on the port the server chose and printed: a port found free
    here may be taken by another test's server before this one binds it, and that server would then
    answer in its place. Returns once it answers ``/v1/evals`` (asked with ``api_key`` where the
    store has keys)."""
    command = [sys.executable, "-m", "assay", "serve", "--port", "0", *arguments]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    address: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            found = SERVING.search(line)
            if found and not address:
                address.append(found.group(1))

    reader = threading.Thread(target=read, name="assay-serve-output", daemon=True)
    reader.start()
    served = AssayServe(process, "", lines, reader)

    def answers() -> bool:
        if not address:
            return False
        try:
            asked = urllib.request.Request(
                f"{address[0]}/v1/evals", headers={"Authorization": f"Bearer {api_key}"} if api_key else {}
            )
            with urllib.request.urlopen(asked, timeout=5) as response:
                return bool(response.status == 200)
        except OSError:
            return False  # not listening yet

    if not poll(lambda: answers() or process.poll() is not None, bool, seconds=seconds) or not answers():
        process.kill()
        said = served.stop()
        raise RuntimeError(f"assay serve did not start: {said}")
    served.url = address[0]
    return served


def stored_runs(home: Path) -> list[Any]:
    """The runs of the SQLite store under ``ASSAY_HOME=home``, newest first."""
    from assay.store import Store

    store = Store(f"sqlite:///{home / 'assay.db'}")
    try:
        return store.list_runs()
    finally:
        store.close()


def borrow_this_venv(folder: Path) -> None:
    """Give a scratch copy of the checkout this checkout's ``.venv`` (``make demo`` having made it)
    without letting the copy's ``make`` install into it: the copy's ``pyproject.toml`` is dated before
    the venv was installed, so make finds the venv up to date. Were it newer (pyproject edited since the
    last ``make``), ``make demo`` in the copy would ``pip install -e`` the copy into the shared venv and
    point every other test's ``import assay`` at a folder about to be deleted."""
    venv = Path(sys.prefix)
    (folder / ".venv").symlink_to(venv)
    installed = [marker.stat().st_mtime for marker in venv.glob(".installed*")]
    if installed and (folder / "pyproject.toml").exists():
        before = min(installed) - 60
        os.utime(folder / "pyproject.toml", (before, before))


def editable_source() -> str:
    """Where this venv's editable install of assay points (its ``__editable__`` .pth)."""
    found = sorted(Path(sys.prefix).glob("lib/python*/site-packages/__editable__*assay*.pth"))
    return found[0].read_text() if found else ""
