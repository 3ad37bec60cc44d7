"""The outbound policy of a server: only the hosts the operator names; loopback and link-local
only when named exactly; a local process calls what it is given."""

from __future__ import annotations

import pytest

from assay import outbound


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
