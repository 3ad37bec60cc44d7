"""``assay serve`` as a real process for tests that kill, stall or outlive it, the judged run
those tests put under it, and an app served by uvicorn in a thread of the test's own."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import uvicorn
from openai import OpenAI

from tests.support.fixtures import SERVING, poll, port_of

ReceiverLog = tuple[str, list[tuple[dict[str, str], bytes]]]
"""A receiver's URL, and what it got: (headers, body) each."""


def said_address(log: Path, banner: re.Pattern[str], since: int = 0) -> str | None:
    """The address a server printed to ``log`` (past its first ``since`` bytes) in ``banner``'s
    first group; None until it has."""
    found = banner.search(log.read_bytes()[since:].decode(errors="replace"))
    return found.group(1) if found else None


def bound_socket() -> socket.socket:
    """A loopback socket bound to a port the system chose, held until a server listens on it (no
    other process can take the port between choosing it and serving on it, as with ``free_port``)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.contextmanager
def uvicorn_in_thread(app: Any, sock: socket.socket | None = None) -> Iterator[str]:
    """``app`` served over real HTTP on ``sock`` (``bound_socket``; a new one unless given) until the
    block ends: its base URL."""
    sock = sock or bound_socket()
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    poll(lambda: server.started, bool, seconds=10, every=0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


RELEVANCE = [
    {
        "type": "azure_ai_evaluator",
        "name": "relevance",
        "evaluator_name": "builtin.relevance",
        "initialization_parameters": {"model": "judge"},
    }
]


def start_assay_server(
    home: Path,
    models_file: Path,
    *,
    port: int | None = None,
    database_url: str | None = None,
    workers: int = 2,
    tls: bool = False,
    key: str = "local",
    log: Path | None = None,
) -> tuple[subprocess.Popen[bytes], OpenAI]:
    """A server with 2-second leases on ``port``, or else on a port it chooses and prints (one found
    free here could be taken by another test's server first); SQLite under ``home`` unless
    ``database_url`` is given; with ``tls``, https with the certificate it makes under ``home/tls``
    (the returned client trusts it); what it prints goes to ``log`` (``home/serve.log`` unless
    given). Returns once it answers."""
    env = {**os.environ, "ASSAY_HOME": str(home), "ASSAY_LEASE_SECONDS": "2"}
    env.pop("ASSAY_DATABASE_URL", None)
    if database_url:
        env["ASSAY_DATABASE_URL"] = database_url
    command = [
        sys.executable,
        "-m",
        "assay",
        "serve",
        "--port",
        str(port or 0),
        "--models",
        str(models_file),
        "--workers",
        str(workers),
        *(["--tls"] if tls else []),
    ]
    log = log or home / "serve.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    said_before = log.stat().st_size if log.exists() else 0  # a restart's log goes on from here
    with open(log, "ab") as sink:  # the child holds its own copy
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=sink)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        address = said_address(log, SERVING, said_before)
        client = None
        try:
            if address is None:
                raise ConnectionError("not serving yet")
            client = _client(home, port_of(address), tls, key)
            client.evals.list()
            return process, client
        except Exception:  # noqa: BLE001 - not up yet
            if client is not None:
                client.close()
            time.sleep(0.1)
    process.kill()
    process.wait()
    raise RuntimeError(f"assay serve did not start: {log.read_bytes()[said_before:].decode(errors='replace')}")


def _client(home: Path, port: int, tls: bool, key: str) -> OpenAI:
    if not tls:
        return OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=key, max_retries=0)
    trusted = httpx.Client(verify=ssl.create_default_context(cafile=home / "tls" / "cert.pem"))
    return OpenAI(base_url=f"https://127.0.0.1:{port}/v1", api_key=key, max_retries=0, http_client=trusted)


def judged_run(client: OpenAI, total: int) -> tuple[str, str]:
    """An eval judged by the ``judge`` model and a run of ``total`` inline items: (eval id, run id)."""
    created = client.evals.create(
        name="long",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=RELEVANCE,
    )
    rows = [{"item": {"query": f"question {i}", "response": f"answer {i}"}} for i in range(total)]
    run = client.evals.runs.create(
        eval_id=created.id, data_source={"type": "jsonl", "source": {"type": "file_content", "content": rows}}
    )
    return created.id, run.id


AGENT_SERVING = re.compile(r"support agent on (http://127\.0\.0\.1:\d+)")


def start_support_agent(base_url: str, log_path: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    """``examples/support_agent/agent.py`` on a port it chooses and prints, its model at ``base_url``;
    returns the process (stop it) and its URL once it accepts connections."""
    from tests.support.fixtures import ROOT

    with log_path.open("wb") as log:  # the child has its own copy
        process = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "examples" / "support_agent" / "agent.py"),
                "--port",
                "0",
                "--base-url",
                base_url,
                "--api-key",
                "test",
                *extra,
            ],
            stdout=log,
            stderr=log,
        )

    def listening() -> str | None:
        url = said_address(log_path, AGENT_SERVING)
        if url is None:
            return None
        try:
            with socket.create_connection(("127.0.0.1", port_of(url)), timeout=0.2):
                return url
        except OSError:
            return None

    url = poll(listening, lambda found: found is not None or process.poll() is not None, seconds=20)
    if url is not None:
        return process, url
    process.kill()
    process.wait()
    raise RuntimeError(f"the support agent did not start (see {log_path})")


@contextlib.contextmanager
def post_receiver(path: str, status: int = 204) -> Iterator[ReceiverLog]:
    """An HTTP receiver on a free loopback port answering each POST with ``status``: its URL (at
    ``path``) and what it got, (headers, body) each (a webhook's alerts, an OTLP exporter's requests)."""
    with scripted_receiver(lambda n: status, threading.Event(), path) as found:
        yield found


@contextlib.contextmanager
def scripted_receiver(
    answers: Callable[[int], int | None], release: threading.Event, path: str = "/hook"
) -> Iterator[ReceiverLog]:
    """A webhook on a free loopback port whose ``n``-th POST (from 0) is answered with the status
    ``answers(n)``, or, when that is None, held unanswered until ``release`` is set (a webhook that
    never answers). Its URL and what it got, (headers, body) each."""
    import http.server

    got: list[tuple[dict[str, str], bytes]] = []
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            with lock:
                number = len(got)
                got.append((dict(self.headers), self.rfile.read(int(self.headers["content-length"]))))
            status = answers(number)
            if status is None:
                release.wait()
                return
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{path}", got
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def ui_form_token(page_url: str, cookie: str = "") -> str:
    """The form token a UI page gives its forms, as a browser reading the page would find it."""
    import re
    import urllib.request

    request = urllib.request.Request(page_url, headers={"cookie": cookie} if cookie else {})
    with urllib.request.urlopen(request) as reply:  # noqa: S310 - the test's own loopback server
        found = re.search(r'name="csrf" value="([0-9a-f]+)"', reply.read().decode())
    assert found, f"{page_url} has no form token"
    return found.group(1)
