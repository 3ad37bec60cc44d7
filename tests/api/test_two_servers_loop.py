"""Two `assay serve` processes on one PostgreSQL database, the production loop running in both: a
one-time schedule fires once (one firing, one run), and an evaluation rule's responses, answered
through either server, are each evaluated once, in runs made by whichever server took them; an
alert is delivered once, after its retries, past a webhook that never answers."""

from __future__ import annotations

import datetime as dt
import threading

import httpx2 as httpx
import pytest

from assay.store import Store
from tests.api.test_production_loop import responses_eval
from tests.conftest import PG_URL, postgres_database
from tests.examples.test_support_agent import AGENT, JUDGES
from tests.support.fixtures import poll
from tests.support.servers import scripted_receiver, start_assay_server, start_support_agent

pytestmark = pytest.mark.skipif(not PG_URL, reason="set ASSAY_TEST_DATABASE_URL")
QUESTIONS = ["Where is my order 1042?", "Was order 3107 delivered?", "Can I return a kettle?", "Where is order 1042?"]


def rest(client, method: str, path: str, key: str, body: dict | None = None) -> dict:
    """Foundry's REST call, as the SDK sends it, on the server the OpenAI client points at."""
    url = f"{str(client.base_url).removesuffix('/v1/')}/api/projects/shop{path}?api-version=v1"
    answer = httpx.request(method, url, json=body, headers={"authorization": f"Bearer {key}"}, timeout=30)
    assert answer.status_code < 300, answer.text
    return answer.json()


def test_two_servers_fire_a_schedule_once_and_evaluate_each_response_once(tmp_path, llm, monkeypatch):
    llm.reset()
    llm.script(rules=JUDGES + AGENT)
    agent, agent_url = start_support_agent(llm.base_url, tmp_path / "agent.log")
    models = tmp_path / "models.yaml"
    models.write_text(
        f"models:\n  judge: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n"
        f"agents:\n  support-agent: {{endpoint: '{agent_url}', protocol: responses}}\n"
    )
    monkeypatch.setenv("ASSAY_RULE_WINDOW_SECONDS", "1")
    servers = []
    with postgres_database() as url:
        store = Store(url)
        key = store.create_key("shop")
        store.close()
        try:
            for home in ("a", "b"):
                servers.append(start_assay_server(tmp_path / home, models, database_url=url, key=key))
            (_, a), (_, b) = servers
            watched = responses_eval(a)
            rule = {
                "displayName": "support quality",
                "action": {"type": "continuousEvaluation", "evalId": watched.id, "samplingRate": 100},
                "filter": {"agentName": "support-agent"},
                "eventType": "responseCompleted",
                "enabled": True,
            }
            rest(a, "PUT", "/evaluationrules/support-quality", key, rule)
            nightly = b.evals.create(
                name="nightly",
                data_source_config={"type": "custom", "item_schema": {"type": "object"}},
                testing_criteria=[{"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"}],
            )
            rows = [{"item": {"response": "the answer", "ground_truth": "the answer"}} for _ in range(3)]
            when = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=4)).isoformat()
            schedule = {
                "enabled": True,
                "trigger": {"type": "OneTime", "triggerAt": when},
                "task": {
                    "type": "Evaluation",
                    "evalId": nightly.id,
                    "evalRun": {"data_source": {"type": "jsonl", "source": {"type": "file_content", "content": rows}}},
                },
            }
            rest(b, "PUT", "/schedules/nightly", key, schedule)

            answered = [
                client.responses.create(
                    input=[{"role": "user", "content": question}],
                    extra_body={"agent": {"name": "support-agent", "type": "agent_reference"}},
                ).id
                for client, question in zip((a, b, a, b), QUESTIONS, strict=True)
            ]

            def evaluated() -> list[str]:
                runs = [r for r in a.evals.runs.list(eval_id=watched.id) if r.status == "completed"]
                return [
                    i.datasource_item["resp_id"]
                    for r in runs
                    for i in a.evals.runs.output_items.list(r.id, eval_id=watched.id)
                ]

            assert sorted(poll(evaluated, lambda ids: len(ids) >= 4, seconds=120)) == sorted(answered)

            (fired,) = poll(
                lambda: rest(a, "GET", "/schedules/nightly/runs", key)["value"], lambda r: len(r) == 1, seconds=60
            )
            run_id = fired["properties"]["eval_run_id"]
            done = poll(
                lambda: b.evals.runs.retrieve(run_id, eval_id=nightly.id), lambda r: r.status == "completed", seconds=60
            )
            assert fired["success"] is True and done.result_counts.passed == 3
            # Both servers' firers (each looks every second) have looked again while the run ran:
            # still one firing and one run, and each response evaluated once.
            assert len(rest(b, "GET", "/schedules/nightly/runs", key)["value"]) == 1
            assert len(list(a.evals.runs.list(eval_id=nightly.id))) == 1
            assert sorted(evaluated()) == sorted(answered)
        finally:
            for process, client in servers:
                client.close()
                process.terminate()
                process.wait(timeout=20)
            agent.terminate()
            agent.wait(timeout=10)


def test_two_servers_deliver_an_alert_once_past_a_dead_webhook_and_fire_the_others(tmp_path, monkeypatch):
    """Project noisy's failing runs alert a webhook that never answers and one that answers 500
    twice; project quiet's schedule fires meanwhile. The flaky webhook takes its alert once, on the
    third attempt, and the alerts list each attempt. (How late quiet fires under this load is
    bench/firing_delay.py's to measure: timing is no unit test's.)"""
    models = tmp_path / "models.yaml"
    models.write_text("models: {}\n")
    release = threading.Event()
    with (
        postgres_database() as url,
        scripted_receiver(lambda n: None, release) as (dead, held),
        scripted_receiver(lambda n: 500 if n < 2 else 200, threading.Event()) as (flaky, got),
    ):
        store = Store(url)
        keys = {project: store.create_key(project) for project in ("noisy", "quiet")}
        store.close()
        monkeypatch.setenv("ASSAY_EVALUATOR_ENDPOINTS", ",".join(u.split("/")[2] for u in (dead, flaky)))
        servers = [start_assay_server(tmp_path / h, models, database_url=url, key=keys["noisy"]) for h in "ab"]
        (_, a), (_, b) = servers
        base = str(a.base_url).removesuffix("/v1/")

        def call(method: str, project: str, path: str, body: dict | None = None) -> dict:
            answer = httpx.request(
                method,
                f"{base}/api/projects/{project}{path}",
                json=body,
                headers={"api-key": keys[project]},
                timeout=30,
            )
            assert answer.status_code < 300, answer.text
            return answer.json()

        try:
            criteria = [
                {"type": "string_check", "name": "s", "input": "{{item.a}}", "reference": "a", "operation": "eq"}
            ]
            config = {"type": "custom", "item_schema": {"type": "object"}}
            when = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=3)).isoformat()
            for project, hooks in (("noisy", {"dead": dead, "flaky": flaky}), ("quiet", {"plain": None})):
                made = call(
                    "POST",
                    project,
                    "/openai/v1/evals",
                    {"name": project, "data_source_config": config, "testing_criteria": criteria},
                )
                items = [{"item": {"a": "b" if project == "noisy" else "a"}} for _ in range(20)]  # noisy's fail
                for name, hook in hooks.items():
                    schedule = {
                        "trigger": {"type": "OneTime", "triggerAt": when},
                        "task": {
                            "type": "Evaluation",
                            "evalId": made["id"],
                            "evalRun": {
                                "data_source": {"type": "jsonl", "source": {"type": "file_content", "content": items}}
                            },
                        },
                        **({"alert": {"url": hook, "passRate": 0.9}} if hook else {}),
                    }
                    call("PUT", project, f"/schedules/{name}", schedule)
            (fired,) = poll(lambda: call("GET", "quiet", "/schedules/plain/runs")["value"], bool, seconds=60)
            assert fired["success"] is True and float(fired["properties"]["delaySeconds"]) >= 0

            def flaky_alert() -> list[dict]:
                return call("GET", "noisy", "/alerts", None)["value"]

            listed = poll(
                flaky_alert,
                lambda found: any(a["url"] == flaky and a["state"] == "delivered" for a in found) and held,
                seconds=120,
            )
            (delivered,) = [alert for alert in listed if alert["url"] == flaky]
            assert [attempt["status"] for attempt in delivered["attempts"]] == [500, 500, 200]
            assert [h["x-assay-attempt"] for h, _ in got] == ["1", "2", "3"]  # the third taken, once
            (waiting,) = [alert for alert in listed if alert["url"] == dead]
            assert waiting["state"] in ("pending", "failed") and held  # the dead one held, listed apart
            assert call("GET", "noisy", f"/alerts/{delivered['id']}")["state"] == "delivered"
        finally:
            release.set()
            for process, client in servers:
                client.close()
                process.terminate()
                process.wait(timeout=20)
