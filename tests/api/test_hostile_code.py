"""A key holder turned attacker: python graders and code evaluators posted to a real ``assay serve``
with API keys for two projects. Each grader reports whether its attack worked (1.0) or was
blocked (0.0); the test also looks at the host afterwards (files, processes, the server)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from openai import OpenAI

from tests.api.conftest import wait_for
from tests.support.fixtures import AssayServe, serve_assay
from tests.support.sandbox import needs_bwrap

SECRET = "s3cret-server-token-7f1c"
MARKER = "assay-hostile-marker-9d2e"


def attack(body: str) -> str:
    """A grader returning 1.0 when ``body`` (which sets ``won``) succeeds, 0.0 when it is blocked."""
    indented = "\n".join("        " + line for line in body.strip().splitlines())
    return f"import os, sys\ndef grade(sample, item):\n    won = False\n    try:\n{indented}\n    except BaseException:\n        won = False\n    return 1.0 if won else 0.0\n"


ATTACKS = {
    "read_other_projects_rows": "won = len(open(item['home'] + '/assay.db', 'rb').read(100)) > 0",
    "read_passwd": "won = 'root' in open('/etc/passwd').read()",
    "secret_in_environment": "won = any(item['secret'] in v for v in os.environ.values())",
    "secret_in_proc": """
for pid in [p for p in os.listdir('/proc') if p.isdigit()] + [str(os.getppid())]:
    try:
        won = won or item['secret'].encode() in open(f'/proc/{pid}/environ', 'rb').read()
    except OSError:
        pass
""",
    "reach_a_socket": """
import socket
socket.create_connection(('127.0.0.1', item['port']), timeout=2).close()
won = True
""",
    "setns_into_the_host_network": """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for pid in ['1', str(os.getppid())]:
    try:
        fd = os.open(f'/proc/{pid}/ns/net', os.O_RDONLY)
    except OSError:
        continue
    won = won or libc.setns(fd, 0) == 0
""",
    "mint_a_key_in_the_store": """
import sqlite3
db = sqlite3.connect(item['home'] + '/assay.db')
db.execute("insert into api_keys (digest, project, prefix, created_at) values ('x', 'beta', 'x', 0)")
db.commit()
won = True
""",
    "write_into_assay_home": "open(item['home'] + '/planted.txt', 'w').write('x'); won = True",
    "kill_the_server": """
import signal
for pid in [os.getppid(), 1] + [int(p) for p in os.listdir('/proc') if p.isdigit()]:
    if pid == os.getpid():
        continue
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
won = False
""",
    "fork_bomb": """
count = 0
try:
    for _ in range(500):
        if os.fork() == 0:
            import time
            time.sleep(30)
            os._exit(0)
        count += 1
except OSError:
    pass
won = count >= 100
""",
    "outlive_the_call": f"""
import subprocess
subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)  # {MARKER}'], start_new_session=True)
won = False
""",
    "raise_its_own_limits": """
import resource
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
won = hard == resource.RLIM_INFINITY or hard > 1024 * 1024 * 1024
""",
}


def _grader(name: str, source: str, **extra) -> dict:
    return {"type": "python", "name": name, "source": source, **extra}


def _start(home: Path, api_key: str, env_extra: dict[str, str]) -> AssayServe:
    """``assay serve`` on ``home``'s store, on a port it chose itself."""
    env = {
        **os.environ,
        "ASSAY_HOME": str(home),
        "OPENAI_API_KEY": SECRET,
        "ASSAY_TEST_SECRET": SECRET,
        "ASSAY_SANDBOX_MAX_MEMORY_MB": "1024",
        "ASSAY_SANDBOX_MAX_SECONDS": "20",
        **env_extra,
    }
    env.pop("ASSAY_DATABASE_URL", None)
    env.pop("ASSAY_SANDBOX", None)
    return serve_assay(["--workers", "1"], env, api_key=api_key)


def _keys(home: Path) -> tuple[str, str]:
    env = {**os.environ, "ASSAY_HOME": str(home)}
    env.pop("ASSAY_DATABASE_URL", None)
    made = [
        subprocess.run(
            [sys.executable, "-m", "assay", "keys", "create", "--project", p],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for p in ("alpha", "beta")
    ]
    return made[0], made[1]


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _marked_processes() -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if MARKER.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


@pytest.fixture
def hostile_server(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    alpha, beta = _keys(home)
    served = _start(home, alpha, {})
    port = served.port
    clients = [OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=k, max_retries=0) for k in (alpha, beta)]
    try:
        yield served.process, home, port, clients
    finally:
        for client in clients:
            client.close()
        served.stop()


def _run(client: OpenAI, criteria: list[dict], item: dict) -> tuple[object, list[dict]]:
    created = client.evals.create(
        name="hostile",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=criteria,
    )
    run = client.evals.runs.create(
        eval_id=created.id,
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": item}]}},
    )
    finished = wait_for(client, created.id, run.id, seconds=180)
    items = client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id).data
    return finished, [r if isinstance(r, dict) else r.model_dump() for r in items[0].results]


@needs_bwrap
def test_every_attack_from_a_python_grader_is_blocked(hostile_server, llm):
    process, home, port, (alpha, beta) = hostile_server
    beta_before = beta.evals.create(
        name="beta's",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=[
            {"type": "string_check", "name": "s", "input": "{{item.a}}", "reference": "x", "operation": "eq"}
        ],
    ).id
    with sqlite3.connect(home / "assay.db") as conn:
        keys_before = conn.execute("select count(*) from api_keys").fetchone()[0]
    criteria = [_grader(name, attack(body), time_limit=100000, memory_mb=100000) for name, body in ATTACKS.items()]
    item = {"home": str(home), "port": llm.port, "secret": SECRET}
    rss_before = _rss_kb(process.pid)
    finished, results = _run(alpha, criteria, item)

    assert finished.status == "completed", finished
    by_name = {r["name"]: r for r in results}
    assert set(by_name) == set(ATTACKS)
    won = {name: r for name, r in by_name.items() if r.get("score") != 0.0}
    assert not won, f"attacks that were not blocked: {json.dumps(won, default=str)[:2000]}"
    assert process.poll() is None  # the server is alive
    assert alpha.evals.list().data  # and still answers
    assert not (home / "planted.txt").exists()
    with sqlite3.connect(home / "assay.db") as conn:
        assert conn.execute("select count(*) from api_keys").fetchone()[0] == keys_before
    assert beta.evals.retrieve(beta_before).name == "beta's"
    assert not _marked_processes(), "a process the grader started outlived the call"
    assert _rss_kb(process.pid) - rss_before < 200 * 1024


@needs_bwrap
def test_a_flood_of_output_a_hang_and_nonfinite_scores_fail_their_item_only(hostile_server):
    process, _, _, (alpha, _) = hostile_server
    criteria = [
        _grader(
            "flood", "import sys\ndef grade(sample, item):\n    while True:\n        sys.stdout.write('x' * 65536)\n"
        ),
        _grader("hang", "import time\ndef grade(sample, item):\n    time.sleep(3600)\n", time_limit=2),
        _grader("nan", "def grade(sample, item):\n    return float('nan')\n"),
        _grader("infinity", "def grade(sample, item):\n    return float('inf')\n"),
        _grader("fine", "def grade(sample, item):\n    return 0.75\n"),
    ]
    rss_before = _rss_kb(process.pid)
    started = time.monotonic()
    finished, results = _run(alpha, criteria, {"x": 1})
    assert finished.status == "completed"
    by_name = {r["name"]: r for r in results}
    assert by_name["fine"]["score"] == 0.75
    for name in ("flood", "hang", "nan", "infinity"):
        assert by_name[name]["passed"] is False or by_name[name].get("status") == "error", by_name[name]
    text = json.dumps(by_name)
    assert "printed more than" in text and "time limit" in text and "not a finite number" in text
    assert time.monotonic() - started < 120  # the hang was cut at its 2 s limit, not left to run
    assert _rss_kb(process.pid) - rss_before < 200 * 1024


def _post(url: str, key: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@needs_bwrap
def test_posted_code_and_prompt_evaluators_never_run_in_the_server(hostile_server, tmp_path):
    process, home, port, (alpha, _) = hostile_server
    planted = tmp_path / "planted-by-import.txt"
    code = (
        f"open({str(planted)!r}, 'w').write('ran')\n"
        "def evaluate(response):\n    return 1.0 if open('/etc/hostname').read() else 0.0\n"
    )
    url = f"http://127.0.0.1:{port}/api/projects/alpha/evaluators"
    status, _ = _post(f"{url}/sneaky/versions", alpha.api_key, {"definition": {"type": "code", "code_text": code}})
    assert status == 201 and not planted.exists()  # registered without running it
    finished, results = _run(
        alpha, [{"type": "azure_ai_evaluator", "name": "sneaky", "evaluator_name": "sneaky"}], {"response": "r"}
    )
    assert finished.status == "completed" and not planted.exists()
    assert "failed" in json.dumps(results)  # its import-time write and /etc were refused inside the sandbox

    template = "{{ cycler.__init__.__globals__.os.system('touch " + str(planted) + "') }} {{ query }}"
    status, body = _post(
        f"{url}/jinja/versions", alpha.api_key, {"definition": {"type": "prompt", "prompt_text": template}}
    )
    assert status == 400 and "'_'" in json.dumps(body) and not planted.exists()
    assert process.poll() is None


def test_a_server_with_keys_refuses_python_graders_without_the_sandbox(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    alpha, _ = _keys(home)
    served = _start(home, alpha, {"ASSAY_BWRAP": "none"})
    port = served.port
    client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=alpha, max_retries=0)
    try:
        status, body = _post(
            f"http://127.0.0.1:{port}/v1/evals",
            alpha,
            {
                "name": "py",
                "data_source_config": {"type": "custom", "item_schema": {"type": "object"}},
                "testing_criteria": [_grader("py", "def grade(sample, item):\n    return 1.0\n")],
            },
        )
        assert status == 400, body
        assert "bubblewrap" in json.dumps(body)
    finally:
        client.close()
        served.stop()
