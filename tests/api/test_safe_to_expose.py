"""A web page, a hostile key holder and a hostile DNS answer against a running ``assay serve``
(issue 50): each finding of the attack is a test here, against real servers over HTTP."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.support.fixtures import AssayServe, serve_assay
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
    for origin in (
        "http://attacker.example",
        "null",
        f"http://localhost:{host.rsplit(':', 1)[1]}",
        "http://127.0.0.1:1",
    ):
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


def _serve(home: Path, env_extra: dict[str, str]) -> AssayServe:
    unset = ("ASSAY_DATABASE_URL", "ASSAY_SANDBOX", "ASSAY_ALLOWED_HOSTS")  # the test's own choices only
    inherited = {k: v for k, v in os.environ.items() if k not in unset}
    return serve_assay(
        ["--workers", "1"], {**inherited, "ASSAY_HOME": str(home), "OPENAI_API_KEY": "test", **env_extra}
    )


def _high_water_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


CODE = "def evaluate(response):\n    import os\n    return float(os.system('id') == 0)\n"
GRADER = {"type": "python", "name": "py", "source": "def grade(sample, item):\n    return 1.0\n"}
JSON = {"Content-Type": "application/json"}


def test_a_keyless_server_without_bwrap_refuses_code_and_says_why(tmp_path):
    server = _serve(tmp_path, {"ASSAY_BWRAP": "none"})
    try:
        body = json.dumps({"definition": {"type": "code", "code_text": CODE}}).encode()
        status, text = call(f"{server.url}/api/projects/default/evaluators/pwn/versions", body, JSON)
        assert status == 400 and "bubblewrap" in text and "ASSAY_SANDBOX=unsandboxed" in text
        status, text = call(f"{server.url}/v1/evals", json.dumps({**EVAL, "testing_criteria": [GRADER]}).encode(), JSON)
        assert status == 400 and "bubblewrap" in text
    finally:
        said = server.stop()
    assert "bwrap not found" in said and "will be refused" in said


def test_the_operator_may_opt_out_of_the_sandbox_by_name_and_is_told(tmp_path):
    server = _serve(tmp_path, {"ASSAY_BWRAP": "none", "ASSAY_SANDBOX": "unsandboxed"})
    try:
        body = json.dumps({"definition": {"type": "code", "code_text": CODE}}).encode()
        status, _ = call(f"{server.url}/api/projects/default/evaluators/mine/versions", body, JSON)
        assert status == 201
    finally:
        said = server.stop()
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
    server = _serve(tmp_path, {})
    try:
        before = _high_water_mb(server.process.pid)
        for n, template in enumerate(BOMBS):
            body = json.dumps({"definition": {"type": "prompt", "prompt_text": template}}).encode()
            status, text = call(f"{server.url}/api/projects/default/evaluators/bomb{n}/versions", body, JSON)
            assert status in (201, 400), text
            assert call(f"{server.url}/api/projects/default/evaluators")[0] == 200  # the catalog loads them all
        peak = _high_water_mb(server.process.pid)
    finally:
        server.stop()
    assert peak - before < 256, f"{peak - before:.0f} MB"


def _eval_and_run(store, project: str, run_id: str | None = None):
    made = store.create_eval(name="e", data_source_config={"type": "custom"}, testing_criteria=[], project=project)
    return made, store.create_run(eval_id=made.id, data_source={"type": "jsonl"}, project=project, id=run_id)


def test_short_run_ids_resolve_within_the_viewers_project_only(store):
    from assay.errors import NotFoundError, UserError

    _, theirs = _eval_and_run(store, "beta", "evalrun_cafe0001")
    _, other = _eval_and_run(store, "beta", "evalrun_cafe0002")
    _, mine = _eval_and_run(store, "alpha", "evalrun_beef0001")
    with pytest.raises(NotFoundError) as missing:
        store.run_id_for("cafe", "alpha")
    assert "cafe0001" not in str(missing.value) and "cafe0002" not in str(missing.value)
    with pytest.raises(NotFoundError):
        store.run_id_for(theirs.id, "alpha")  # a whole id of another project's is not there either
    assert store.run_id_for("beef", "alpha") == mine.id
    with pytest.raises(UserError, match="several"):
        store.run_id_for("cafe", "beta")
    assert store.run_id_for("cafe0002", "beta") == other.id


def test_the_ui_resolves_no_other_projects_short_id(served):
    _, theirs = _eval_and_run(served.store, "beta", "evalrun_f00d0001")
    alpha = served.store.create_key("alpha")
    cookie = {"Cookie": f"assay_key={alpha}"}
    for path in ("/ui/runs/f00d", "/ui/compare?a=f00d&b=f00d"):
        status, text = call(f"{served.url}{path}", headers=cookie)
        assert status == 404 and "f00d0001" not in text, (path, status, text[:300])
    assert call(f"{served.url}/ui/runs/{theirs.id}", headers=cookie)[0] == 404


def test_every_route_that_starts_work_counts_against_the_run_limit(served, monkeypatch):
    monkeypatch.setenv("ASSAY_RATE_RUNS_PER_MINUTE", "1")
    routes = [
        "/api/projects/default/redTeams/runs:run",
        "/api/projects/p2/insights",
        "/api/projects/p3/evaluationtaxonomies/x",  # not a run: never limited
    ]
    first = [call(f"{served.url}{route}", b"{}", JSON)[0] for route in routes]
    second = [call(f"{served.url}{route}", b"{}", JSON)[0] for route in routes]
    assert first[0] == 400 and second[0] == 429  # the bad body spent the caller's one run
    assert first[1] == 400 and second[1] == 429
    assert second[2] != 429


def test_a_rules_hourly_cap_survives_its_deletion(store):
    made = store.create_eval(name="e", data_source_config={"type": "custom"}, testing_criteria=[], project="p")
    store.put_rule("p", "r1", {"action": {"type": "continuousEvaluation", "evalId": made.id, "maxHourlyRuns": 1}})
    store.create_run(eval_id=made.id, data_source={"type": "jsonl"}, name="rule r1", project="p")
    assert store.runs_since("p", "r1", time.time() - 3600) == 1
    store.delete_rule("p", "r1")
    store.put_rule("p", "r1", {"action": {"type": "continuousEvaluation", "evalId": made.id, "maxHourlyRuns": 1}})
    assert store.runs_since("p", "r1", time.time() - 3600) == 1


def _schedule(eval_id: str, trigger: dict) -> dict:
    source = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": {"a": "a"}}]}}
    return {"trigger": trigger, "task": {"type": "Evaluation", "evalId": eval_id, "evalRun": {"data_source": source}}}


@pytest.mark.parametrize(
    ("trigger", "said"),
    [
        ({"type": "Recurrence", "interval": 10**12, "schedule": {"type": "Hourly"}}, "trigger.interval"),
        ({"type": "Recurrence", "interval": 10**30, "schedule": {"type": "Daily", "hours": [9]}}, "trigger.interval"),
        ({"type": "OneTime", "triggerAt": "0001-01-01T00:00:00Z"}, "trigger.triggerAt"),
        ({"type": "OneTime", "triggerAt": "9999-12-31T23:59:59-14:00"}, "trigger.triggerAt"),
        ({"type": "Cron", "expression": "0 0 30 2 *"}, "names no date"),
        ({"type": "Cron", "expression": "0 0 * * *", "startTime": "0001-01-01T00:00:00Z"}, "trigger.startTime"),
    ],
)
def test_a_trigger_that_cannot_fire_is_refused_when_saved(served, trigger, said):
    made = served.client().evals.create(**EVAL)
    body = json.dumps(_schedule(made.id, {**trigger, "startTime": trigger.get("startTime", "2030-01-01T00:00:00Z")}))
    status, text = call(f"{served.url}/api/projects/default/schedules/s1", body.encode(), JSON, method="PUT")
    assert status == 400 and said in text, text


def test_one_broken_schedule_does_not_stop_the_others(served, monkeypatch):
    from assay.api.schedules import fire_due

    monkeypatch.setenv("ASSAY_RATE_RUNS_PER_MINUTE", "0")
    made = served.client().evals.create(**EVAL)
    store, due = served.store, time.time() - 5
    broken = {
        "type": "Recurrence",
        "interval": 10**12,
        "schedule": {"type": "Hourly"},
        "startTime": "2020-01-01T00:00:00Z",  # passed: the next firing is 10**12 hours on, past any date
    }
    store.put_schedule("default", "broken", _schedule(made.id, broken), due)  # saved before triggers were checked
    store.put_schedule("default", "fine", _schedule(made.id, {"type": "Cron", "expression": "* * * * *"}), due)
    fired = {firing["schedule_id"]: firing for firing in fire_due(served.app_state)}
    assert fired["fine"]["error"] is None and fired["fine"]["eval_run_id"]
    assert "cannot be read" in fired["broken"]["error"]
    assert store.get_schedule("default", "broken")["next_fire"] is None  # it stopped
    assert store.get_schedule("default", "fine")["next_fire"] > time.time()


def test_schedule_firings_count_against_the_projects_run_limit(served, monkeypatch):
    from assay.api.schedules import fire_due

    monkeypatch.setenv("ASSAY_RATE_RUNS_PER_MINUTE", "1")
    made = served.client().evals.create(**EVAL)
    for name in ("one", "two"):
        trigger = {"type": "Cron", "expression": "* * * * *"}
        served.store.put_schedule("default", name, _schedule(made.id, trigger), time.time() - 5)
    fired = fire_due(served.app_state)
    made_runs = [f for f in fired if f["eval_run_id"]]
    limited = [f for f in fired if f["error"] and "rate limit" in f["error"]]
    assert len(made_runs) == 1 and len(limited) == 1


def test_a_sas_url_expires(served):
    from assay.api.routes_blobs import SAS_SECONDS, sas_query

    container = served.store.open_container("default")
    blob = f"{served.url}/blobs/{container['id']}/data.jsonl"
    fresh = call(f"{blob}?{sas_query(container)}", b"{}", {"x-ms-blob-type": "BlockBlob"}, method="PUT")
    assert fresh[0] == 201, fresh
    old = sas_query(container, now=time.time() - SAS_SECONDS - 60)
    status, text = call(f"{blob}?{old}", b"{}", {"x-ms-blob-type": "BlockBlob"}, method="PUT")
    assert status == 403 and "expired" in text
    forged = old.replace("se=", "se=2999").split("&sig=")[0] + "&sig=" + old.split("&sig=")[1]
    assert call(f"{blob}?{forged}", b"{}", {"x-ms-blob-type": "BlockBlob"}, method="PUT")[0] == 403


def _insight_of(model_configuration) -> dict:
    """A cluster insight's body over the test's run, with a ``modelConfiguration`` of the caller's."""
    request = {"type": "EvaluationRunClusterInsight", "evalId": "{eval}", "runIds": ["{run}"]}
    return {"request": {**request, "modelConfiguration": model_configuration}}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/ui/runs/{run}?page=1000000000000000000000000000000", None),
        ("GET", f"/ui/runs/{{run}}?page={2**63}", None),
        ("GET", f"/ui/runs/{{run}}/items/{2**63}", None),
        ("GET", "/ui/runs/{run}/items/1000000000000000000000000000000", None),
        ("POST", "/api/projects/default/insights", _insight_of("x")),
        ("POST", "/api/projects/default/insights", _insight_of({"modelDeploymentName": [1]})),
        (
            "POST",
            "/v1/evals",
            {
                **EVAL,
                "testing_criteria": [
                    {
                        "type": "score_model",
                        "name": "s",
                        "model": "m",
                        "input": [{"role": "user", "content": "hi"}],
                        "range": [1],
                    }
                ],
            },
        ),
        (
            "PUT",
            "/api/projects/default/evaluationrules/r",
            {
                "eventType": "ResponseCompleted",
                "action": {"type": "continuousEvaluation", "evalId": "{eval}"},
                "alert": {"url": "http://[::1"},
            },
        ),
        (
            "PUT",
            "/api/projects/default/evaluationrules/r",
            {
                "eventType": "ResponseCompleted",
                "action": {"type": "continuousEvaluation", "evalId": "{eval}"},
                "alert": {"url": "http://h:99999/"},
            },
        ),
        (
            "POST",
            "/api/projects/default/evaluators/e/versions",
            {"definition": {"type": "endpoint", "url": "http://h:-1/"}},
        ),
    ],
)
def test_the_attacks_server_errors_are_4xx(served, monkeypatch, method, path, body):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    made = served.client().evals.create(**EVAL)
    run = served.client().evals.runs.create(
        eval_id=made.id, data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": {}}]}}
    )
    fill = {"{eval}": made.id, "{run}": run.id}
    text = json.dumps(body) if body is not None else None
    for key, value in fill.items():
        path, text = path.replace(key, value), text.replace(key, value) if text else text
    status, answer = call(f"{served.url}{path}", text.encode() if text else None, JSON if text else {}, method=method)
    assert 400 <= status < 500, (status, answer[:300])
