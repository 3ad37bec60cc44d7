"""The outbound policy of a server: only the hosts the operator names; loopback and link-local
only when named exactly; a local process calls what it is given."""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading
import time
import urllib.parse

import pytest

from assay import outbound
from tests.support.servers import post_receiver


@pytest.fixture
def serving(monkeypatch):
    monkeypatch.setattr(outbound, "_SERVING", True)
    monkeypatch.setenv("ASSAY_EVALUATOR_ENDPOINTS", "evals.example.com, *.corp.example, 127.0.0.1:9000")


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://evals.example.com/score", True),
        ("https://a.corp.example/x", True),
        ("http://127.0.0.1:9000/score", True),
        ("http://127.0.0.1:9001/score", False),  # the port is part of the entry
        ("http://169.254.169.254/latest/meta-data", False),
        ("http://localhost:9000/", False),
        ("https://other.example.com/", False),
        ("https://corp.example.evil.com/", False),
    ],
)
def test_a_server_calls_only_the_hosts_it_allows(serving, url, allowed):
    if allowed:
        outbound.check_url(url, "evaluator x")
    else:
        with pytest.raises(outbound.OutboundRefused, match="this server may not call"):
            outbound.check_url(url, "evaluator x")


def test_a_local_process_calls_what_it_is_given(monkeypatch):
    monkeypatch.setattr(outbound, "_SERVING", False)
    outbound.check_url("http://127.0.0.1:1234/score", "evaluator x")
    with pytest.raises(outbound.OutboundRefused, match="not an http"):
        outbound.check_url("file:///etc/passwd", "evaluator x")


@pytest.fixture
def dns(monkeypatch):
    """Names this test resolves as a hostile DNS server would answer them: the one seam, since a
    test cannot own a real zone. Every other name resolves as the machine does."""
    answers: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in answers:
            family = socket.AF_INET6 if ":" in answers[host] else socket.AF_INET
            return [(family, socket.SOCK_STREAM, 6, "", (answers[host], port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


@pytest.mark.parametrize("address", ["127.0.0.1", "169.254.169.254", "10.1.2.3", "::1", "::ffff:127.0.0.1", "0.0.0.0"])
def test_a_wildcard_name_that_resolves_inside_is_refused(serving, dns, address):
    dns["metadata.corp.example"] = address
    with pytest.raises(outbound.OutboundRefused, match="an address this server does not call"):
        outbound.destination("http://metadata.corp.example/latest", "evaluator x")


def test_an_address_named_exactly_is_called(serving, dns):
    dns["evals.example.com"] = "93.184.215.14"
    assert outbound.destination("https://evals.example.com/score", "x").addresses == ("93.184.215.14",)
    assert outbound.destination("http://127.0.0.1:9000/score", "x").addresses == ("127.0.0.1",)


def test_an_endpoint_evaluator_never_reaches_an_inside_address_through_a_name(serving, dns, monkeypatch):
    from assay.errors import ItemError
    from assay.evaluators.custom.endpoint import EndpointDefinition, endpoint_factory

    with post_receiver("/score", status=200) as (url, got):
        port = urllib.parse.urlsplit(url).port
        dns["scorer.corp.example"] = "127.0.0.1"
        definition = EndpointDefinition(url=f"http://scorer.corp.example:{port}/score", max_retries=0)
        evaluate = endpoint_factory("custom.scorer", definition)()
        with pytest.raises(ItemError, match="an address this server does not call"):
            asyncio.run(evaluate({"response": "hi"}))
        assert got == []  # nothing was sent


def _redirecting(to: str) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(302)
            self.send_header("location", to)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/hook"


def _attempt_alert(tmp_path, url: str, key: str = "run_1") -> tuple[dict, dict]:
    """One delivery attempt at an alert to ``url``, as a server's outbox makes it: (the attempt, the
    alert as stored after it)."""
    from assay.api.alerts import attempt
    from assay.store import Store

    store = Store(f"sqlite:///{tmp_path / 'alerts.db'}")
    try:
        store.claim_alert("p", key, "rule", "r")
        target = {"url": url}
        store.record_alert(
            "p",
            key,
            kind="run_failed",
            payload={"type": "run_failed"},
            target=target,
            state="pending",
            next_attempt_at=0.0,
        )
        (row,) = [row for row in store.due_alerts(time.time(), 10) if row["run_key"] == key]
        assert store.lease_alert(row, "test", time.time(), time.time() + 60)
        tried = attempt(store, row, "test")
        (stored,) = [row for row in store.alerts_of("p") if row["run_key"] == key]
        return tried, stored
    finally:
        store.close()


def test_a_webhook_follows_no_redirect(serving, monkeypatch, tmp_path):
    with post_receiver("/inside") as (inside, got):
        server, hook = _redirecting(inside)
        try:
            monkeypatch.setenv("ASSAY_EVALUATOR_ENDPOINTS", hook.split("/")[2])
            tried, stored = _attempt_alert(tmp_path, hook)
        finally:
            server.shutdown()
            server.server_close()
    assert tried["status"] == 302 and stored["state"] == "failed" and got == []  # refused for good, not followed


def test_a_webhook_is_checked_when_it_is_called_not_only_when_saved(serving, monkeypatch, tmp_path):
    from assay.api.alerts import check_alert

    with post_receiver("/hook") as (hook, got):
        monkeypatch.setenv("ASSAY_EVALUATOR_ENDPOINTS", hook.split("/")[2])
        alert = check_alert({"url": hook})
        tried, _ = _attempt_alert(tmp_path, alert["url"], "run_1")
        assert tried["status"] == 204 and len(got) == 1
        monkeypatch.setenv("ASSAY_EVALUATOR_ENDPOINTS", "")  # the operator removed the host
        tried, stored = _attempt_alert(tmp_path, alert["url"], "run_2")
        assert tried["status"] is None and "may not call" in tried["error"] and len(got) == 1
        assert stored["state"] == "failed"  # refused by the policy: not retried


@pytest.mark.parametrize("url", ["http://[::1", "http://h:99999/", "http://h:-1/", "http://[zz]/"])
def test_a_url_that_does_not_parse_is_refused_not_raised(serving, url):
    with pytest.raises(outbound.OutboundRefused, match="not a URL"):
        outbound.check_url(url, "alert.url")


def _agent_server(answer) -> tuple[http.server.ThreadingHTTPServer, str]:
    """An agent's Responses endpoint on a free loopback port; ``answer(handler)`` replies."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            answer(self)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _reply(handler, status: int, body: bytes = b"", location: str | None = None) -> None:
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    if location:
        handler.send_header("location", location)
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _ask_agent(endpoint: str) -> dict:
    from assay.targets.agents import AgentConfig, AgentTarget

    target = AgentTarget(AgentConfig(name="support", endpoint=endpoint), None)

    async def once() -> dict:
        try:
            return await target({"query": "where is my order?"})
        finally:
            await target.aclose()

    return asyncio.run(once())


ANSWER = b'{"output": [{"type": "message", "content": [{"type": "output_text", "text": "shipped"}]}]}'


def test_an_agent_the_operator_named_is_called_and_follows_no_redirect(serving):
    answered, inside = _agent_server(lambda h: _reply(h, 200, ANSWER))
    redirecting, hop = _agent_server(lambda h: _reply(h, 307, location=f"{inside}/responses"))
    try:
        assert _ask_agent(inside)["output_text"] == "shipped"  # named by address in the operator's file
        sample = _ask_agent(hop)
        assert sample["output_text"] is None and "307" in sample["error"]["message"]
    finally:
        for server in (answered, redirecting):
            server.shutdown()
            server.server_close()


def test_an_agents_name_may_not_lead_inside(serving, dns):
    answered, inside = _agent_server(lambda h: _reply(h, 200, ANSWER))
    dns["support.corp.example"] = "127.0.0.1"
    try:
        sample = _ask_agent(inside.replace("127.0.0.1", "support.corp.example"))
    finally:
        answered.shutdown()
        answered.server_close()
    assert sample["output_text"] is None and "an address this server does not call" in sample["error"]["message"]
