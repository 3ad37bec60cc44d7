"""Two `assay serve` processes on one PostgreSQL database, the production loop running in both: a
one-time schedule fires once (one firing, one run), and an evaluation rule's responses, answered
through either server, are each evaluated once, in runs made by whichever server took them."""

from __future__ import annotations

import datetime as dt

import httpx2 as httpx
import pytest

from assay.store import Store
from tests.api.test_production_loop import responses_eval
from tests.conftest import PG_URL, postgres_database
from tests.examples.test_support_agent import AGENT, JUDGES
from tests.support.fixtures import poll
from tests.support.servers import start_assay_server, start_support_agent

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
