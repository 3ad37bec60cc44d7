"""A web page, a hostile key holder and a hostile DNS answer against a running ``assay serve``
(issue 50): each finding of the attack is a test here, against real servers over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.support.fixtures import free_port
from tests.support.servers import ui_form_token


def call(url: str, body: bytes | None = None, headers: dict[str, str] | None = None, method: str | None = None):
    """(status, text) of one request; the headers sent as given (a browser's Host and Origin too)."""
    request = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:  # noqa: S310 - the test's own loopback server
            return reply.status, reply.read().decode(errors="replace")
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode(errors="replace")


EVAL = {
    "name": "from a web page",
    "data_source_config": {"type": "custom", "item_schema": {"type": "object"}},
    "testing_criteria": [
        {"type": "string_check", "name": "s", "input": "a", "reference": "a", "operation": "eq"},
    ],
}


def test_a_cross_site_text_plain_post_is_not_read_as_json(served):
    status, text = call(f"{served.url}/v1/evals", json.dumps(EVAL).encode(), {"Content-Type": "text/plain"})
    assert status == 400 and "not JSON" in text and "application/json" in text
    status, text = call(f"{served.url}/v1/evals", json.dumps(EVAL).encode(), {})  # a Blob without a type
    assert status == 400
    assert served.client().evals.list().data == []  # nothing was made
    status, _ = call(f"{served.url}/v1/evals", json.dumps(EVAL).encode(), {"Content-Type": "application/json"})
    assert status == 201


def test_a_rebound_host_gets_421_and_the_operators_names_are_served(served, monkeypatch):
    status, text = call(f"{served.url}/v1/evals", headers={"Host": "attacker.example:8000"})
    assert status == 421 and "attacker.example" in text and "--allowed-host" in text
    for name in ("localhost", "127.0.0.1", "app.localhost"):
        assert call(f"{served.url}/v1/evals", headers={"Host": name})[0] == 200
    monkeypatch.setenv("ASSAY_ALLOWED_HOSTS", "evals.example.com, *.corp.example")
    assert call(f"{served.url}/v1/evals", headers={"Host": "evals.example.com:8000"})[0] == 200
    assert call(f"{served.url}/v1/evals", headers={"Host": "a.corp.example"})[0] == 200
    assert call(f"{served.url}/v1/evals", headers={"Host": "attacker.example"})[0] == 421


def test_a_foreign_origin_may_read_nothing_new_and_change_nothing(served):
    host = urllib.parse.urlsplit(served.url).netloc
    body, json_type = json.dumps(EVAL).encode(), {"Content-Type": "application/json"}
    for origin in ("http://attacker.example", "null", f"http://localhost:{host.rsplit(':', 1)[1]}", "http://127.0.0.1:1"):
        status, text = call(f"{served.url}/v1/evals", body, {**json_type, "Origin": origin})
        assert status == 403 and "may not change anything" in text, origin
    assert served.client().evals.list().data == []
    assert call(f"{served.url}/v1/evals", body, {**json_type, "Origin": f"http://{host}"})[0] == 201  # its own UI
    assert call(f"{served.url}/v1/evals", headers={"Origin": "http://attacker.example"})[0] == 200  # a read


def test_ui_forms_need_the_token_their_page_gave(served):
    page = f"{served.url}/ui/login"
    status, text = call(page, urllib.parse.urlencode({"key": "x", "next": "/ui"}).encode())
    assert status == 403 and "Form refused" in text
    token = ui_form_token(page)
    form = urllib.parse.urlencode({"key": "not-a-key", "next": "/ui", "csrf": token}).encode()
    status, text = call(page, form)
    assert status == 401 and "not one of this server" in text  # the form was read
    wrong = urllib.parse.urlencode({"key": "x", "next": "/ui", "csrf": "0" * 64}).encode()
    assert call(page, wrong)[0] == 403


def _serve(home: Path, env_extra: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    env = {**os.environ, "ASSAY_HOME": str(home), "OPENAI_API_KEY": "test", **env_extra}
    for name in ("ASSAY_DATABASE_URL", "ASSAY_SANDBOX", "ASSAY_ALLOWED_HOSTS"):
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--port", str(port), "--workers", "1"],
        env={**env, **env_extra},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if call(f"{url}/v1/evals")[0] == 200:
                return process, url
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"assay serve did not start: {process.communicate()[0]}")


def _stop(process: subprocess.Popen[str]) -> str:
    process.terminate()
    return process.communicate(timeout=20)[0]


def _high_water_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


CODE = "def evaluate(response):\n    import os\n    return float(os.system('id') == 0)\n"
GRADER = {"type": "python", "name": "py", "source": "def grade(sample, item):\n    return 1.0\n"}
JSON = {"Content-Type": "application/json"}


def test_a_keyless_server_without_bwrap_refuses_code_and_says_why(tmp_path):
    process, url = _serve(tmp_path, {"ASSAY_BWRAP": "none"})
    try:
        body = json.dumps({"definition": {"type": "code", "code_text": CODE}}).encode()
        status, text = call(f"{url}/api/projects/default/evaluators/pwn/versions", body, JSON)
        assert status == 400 and "bubblewrap" in text and "ASSAY_SANDBOX=unsandboxed" in text
        status, text = call(f"{url}/v1/evals", json.dumps({**EVAL, "testing_criteria": [GRADER]}).encode(), JSON)
        assert status == 400 and "bubblewrap" in text
    finally:
        said = _stop(process)
    assert "bwrap not found" in said and "will be refused" in said


def test_the_operator_may_opt_out_of_the_sandbox_by_name_and_is_told(tmp_path):
    process, url = _serve(tmp_path, {"ASSAY_BWRAP": "none", "ASSAY_SANDBOX": "unsandboxed"})
    try:
        body = json.dumps({"definition": {"type": "code", "code_text": CODE}}).encode()
        status, _ = call(f"{url}/api/projects/default/evaluators/mine/versions", body, JSON)
        assert status == 201
    finally:
        said = _stop(process)
    assert "ASSAY_SANDBOX=unsandboxed" in said and "not isolated" in said


BOMBS = [
    '{{ "x"|center(10**9) }} {{ query }}',
    '{{ "%999999999s"|format(1) }} {{ query }}',
    "{{ query|indent(1000000000) }}",
    '{{ range(100000)|join("x" * 999999) }} {{ query }}',
    '{{ range(10)|batch(1000000000, "x")|list }} {{ query }}',
    "{{ query.ljust(1000000000) }}",
    '{{ {"a": query}|tojson(indent=100000000) }}',
]


def test_a_template_cannot_take_the_servers_memory(tmp_path):
    process, url = _serve(tmp_path, {})
    try:
        before = _high_water_mb(process.pid)
        for n, template in enumerate(BOMBS):
            body = json.dumps({"definition": {"type": "prompt", "prompt_text": template}}).encode()
            status, text = call(f"{url}/api/projects/default/evaluators/bomb{n}/versions", body, JSON)
            assert status in (201, 400), text
            assert call(f"{url}/api/projects/default/evaluators")[0] == 200  # the catalog loads them all
        peak = _high_water_mb(process.pid)
    finally:
        _stop(process)
    print(f"server peak memory under the template attack: {before:.0f} MB before, {peak:.0f} MB after")
    assert peak - before < 256, f"{peak - before:.0f} MB"
