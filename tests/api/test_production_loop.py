"""The production loop with Foundry's SDK (``azure-ai-projects``, unchanged) over ``assay serve
--tls``, the example support agent registered: an evaluation rule created, read and listed, and
three agent responses by reference (``extra_body={"agent": {...}}``) scored in one run of its eval;
a one-time schedule that fires once and whose run completes; a webhook that gets one signed alert
for a real drop and none for noise; mistakes in a rule refused naming them."""

from __future__ import annotations

import gc

import pytest
from azure.ai.projects import AIProjectClient
from azure.ai.projects.models import ContinuousEvaluationRuleAction, EvaluationRule, EvaluationRuleFilter
from azure.core.exceptions import HttpResponseError
from azure.core.rest import HttpRequest

from assay.store import Store
from tests.api.test_foundry_sdk import StaticToken, release
from tests.examples.test_support_agent import AGENT, JUDGES
from tests.support.fixtures import poll
from tests.support.servers import post_receiver, start_assay_server, start_support_agent

QUESTIONS = ["Where is my order 1042?", "Was order 3107 delivered?", "Can I return a kettle?"]


@pytest.fixture
def receiver():
    """A webhook receiver: the alerts it got, (headers, body) each."""
    with post_receiver("/hook") as found:
        yield found


@pytest.fixture
def served(tmp_path, llm, monkeypatch, receiver):
    llm.reset()
    llm.script(rules=JUDGES + AGENT)
    agent, url = start_support_agent(llm.base_url, tmp_path / "agent.log")
    models = tmp_path / "models.yaml"
    models.write_text(
        f"models:\n  judge: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n"
        f"agents:\n  support-agent: {{endpoint: '{url}', protocol: responses}}\n"
    )
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    key = store.create_key("shop")
    store.close()
    monkeypatch.setenv("ASSAY_RULE_WINDOW_SECONDS", "1")
    monkeypatch.setenv("ASSAY_EVALUATOR_ENDPOINTS", receiver[0].split("/")[2])  # the one outbound policy
    process, client = start_assay_server(tmp_path, models, tls=True, key=key)
    cert = tmp_path / "tls" / "cert.pem"
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))
    endpoint = f"https://127.0.0.1:{client.base_url.port}/api/projects/shop"
    try:
        with AIProjectClient(endpoint=endpoint, credential=StaticToken(key)) as project:
            yield project
    finally:
        gc.collect()
        client.close()
        process.terminate()
        process.wait(timeout=20)
        agent.terminate()
        agent.wait(timeout=10)


def test_a_rule_scores_agent_responses_by_reference(served):
    with served.get_openai_client() as openai:
        scores_agent_responses(served, openai)


def responses_eval(openai):
    """An eval of an agent's responses (``azure_ai_source``, scenario ``responses``), judged for coherence."""
    return openai.evals.create(
        name="support quality",
        data_source_config={"type": "azure_ai_source", "scenario": "responses"},
        testing_criteria=[
            {
                "type": "azure_ai_evaluator",
                "name": "coherence",
                "evaluator_name": "builtin.coherence",
                "initialization_parameters": {"model": "judge"},
            },
        ],
    )


def scores_agent_responses(project, openai):
    ev = responses_eval(openai)
    rule = EvaluationRule(
        display_name="support quality",
        action=ContinuousEvaluationRuleAction(eval_id=ev.id, max_hourly_runs=10, sampling_rate=100),
        filter=EvaluationRuleFilter(agent_name="support-agent"),
        event_type="responseCompleted",
        enabled=True,
    )
    created = project.evaluation_rules.create_or_update(id="support-quality", evaluation_rule=rule)
    assert created.id == "support-quality" and created.action.eval_id == ev.id
    assert project.evaluation_rules.get("support-quality").filter.agent_name == "support-agent"
    assert [r.id for r in project.evaluation_rules.list(agent_name="support-agent")] == ["support-quality"]
    assert list(project.evaluation_rules.list(agent_name="another-agent")) == []

    answered = [
        openai.responses.create(
            input=[{"role": "user", "content": question}],
            extra_body={"agent": {"name": "support-agent", "type": "agent_reference"}},
        )
        for question in QUESTIONS
    ]
    assert "DHL" in answered[0].output_text  # the agent answered (it looked the order up first)

    def scored():
        runs = list(openai.evals.runs.list(eval_id=ev.id))
        return [r for r in runs if r.status == "completed"]

    (run,) = poll(scored, lambda runs: len(runs) == 1, seconds=120)  # one run for the window, not three
    assert run.result_counts.total == 3 and run.result_counts.passed == 3
    items = list(openai.evals.runs.output_items.list(run.id, eval_id=ev.id))
    assert {i.datasource_item["resp_id"] for i in items} == {r.id for r in answered}


def test_a_rule_with_a_mistake_is_refused_naming_it(served):
    project = served
    rule = {"action": {"type": "continuousEvaluation", "evalId": "eval_nope"}, "eventType": "responseCompleted"}
    with pytest.raises(HttpResponseError) as missing:
        project.evaluation_rules.create_or_update(id="r", evaluation_rule=rule)
    assert missing.value.status_code == 404 and "eval_nope" in str(missing.value)
    release(missing.value)
    with project.get_openai_client() as openai:
        ev = openai.evals.create(
            name="e",
            data_source_config={"type": "azure_ai_source", "scenario": "responses"},
            testing_criteria=[{"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"}],
        )
    bad = {**rule, "action": {"type": "continuousEvaluation", "evalId": ev.id, "samplingRate": 150}}
    with pytest.raises(HttpResponseError) as wrong:
        project.evaluation_rules.create_or_update(id="r", evaluation_rule=bad)
    assert wrong.value.status_code == 400 and "samplingRate" in str(wrong.value)
    release(wrong.value)
    project.evaluation_rules.create_or_update(
        id="r", evaluation_rule={**bad, "action": {**bad["action"], "samplingRate": 50}}
    )
    project.evaluation_rules.delete("r")
    assert list(project.evaluation_rules.list()) == []


def test_a_one_time_schedule_fires_once_and_its_run_completes(served, tmp_path):
    import datetime as dt
    import sqlite3

    from azure.ai.projects.models import EvaluationScheduleTask, OneTimeTrigger, Schedule

    project = served
    rows = [{"item": {"response": "the answer", "ground_truth": "the answer"}} for _ in range(4)]
    with project.get_openai_client() as openai:
        ev = openai.evals.create(
            name="nightly",
            data_source_config={"type": "custom", "item_schema": {"type": "object"}},
            testing_criteria=[{"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"}],
        )
        when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5)
        task = EvaluationScheduleTask(
            eval_id=ev.id,
            eval_run={"data_source": {"type": "jsonl", "source": {"type": "file_content", "content": rows}}},
        )
        saved = project.beta.schedules.create_or_update(
            schedule_id="nightly", schedule=Schedule(enabled=True, trigger=OneTimeTrigger(trigger_at=when), task=task)
        )
        assert saved.schedule_id == "nightly" and [s.schedule_id for s in project.beta.schedules.list()] == ["nightly"]
        (fired,) = poll(lambda: list(project.beta.schedules.list_runs("nightly")), lambda r: len(r) == 1, seconds=60)
        assert fired.success is True and fired.trigger_time >= when.replace(microsecond=0)
        run_id = fired.properties["eval_run_id"]
        run = poll(
            lambda: openai.evals.runs.retrieve(run_id, eval_id=ev.id), lambda r: r.status == "completed", seconds=60
        )
        assert run.result_counts.passed == 4
    with sqlite3.connect(tmp_path / "assay.db") as conn:  # a one-time trigger, fired: nothing more to fire
        assert conn.execute("select next_fire from schedules where id = 'nightly'").fetchone() == (None,)
    assert len(list(project.beta.schedules.list_runs("nightly"))) == 1


def test_a_real_drop_sends_one_signed_alert_and_noise_none(served, receiver, tmp_path):
    import datetime as dt
    import hashlib
    import hmac
    import json
    import sqlite3

    project, (url, got) = served, receiver
    alert = {"url": url, "secret": "s3cret", "passRate": 0.8}
    with project.get_openai_client() as openai:
        ev = openai.evals.create(
            name="watched",
            data_source_config={"type": "custom", "item_schema": {"type": "object"}},
            testing_criteria=[{"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"}],
        )
    when = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=3)).isoformat()
    for name, passing in (("drop", 15), ("noise", 22)):  # of 30: 50% (interval wholly below 0.8) and 73% (not)
        rows = [
            {"item": {"response": "the answer", "ground_truth": "the answer" if i < passing else "x"}}
            for i in range(30)
        ]
        task = {
            "type": "Evaluation",
            "evalId": ev.id,
            "evalRun": {"data_source": {"type": "jsonl", "source": {"type": "file_content", "content": rows}}},
        }
        body = {"enabled": True, "trigger": {"type": "OneTime", "triggerAt": when}, "task": task, "alert": alert}
        project.beta.schedules.create_or_update(schedule_id=name, schedule=body)

    def checked():
        with sqlite3.connect(tmp_path / "assay.db") as conn:
            return dict(conn.execute("select source_id, kind from alerts").fetchall())

    assert poll(checked, lambda found: len(found) == 2 and "pending" not in found.values(), seconds=90) == {
        "drop": "pass_rate_below",
        "noise": "none",
    }
    listed = poll(lambda: alerts_listed(project), lambda found: found and found[0]["state"] != "pending", seconds=30)
    assert [(a["sourceId"], a["type"], a["state"]) for a in listed] == [("drop", "pass_rate_below", "delivered")]
    assert [attempt["status"] for attempt in listed[0]["attempts"]] == [204]  # the receiver's answer
    ((headers, raw),) = got  # one alert: the drop's
    sent = json.loads(raw)
    assert sent["sourceId"] == "drop" and sent["criteria"][0]["passRate"] == 0.5
    signature = hmac.new(b"s3cret", raw, hashlib.sha256).hexdigest()
    assert {k.lower(): v for k, v in headers.items()}["x-assay-signature"] == f"sha256={signature}"


def alerts_listed(project):
    """``GET /alerts`` through the project client's own pipeline."""
    answer = project.send_request(HttpRequest("GET", "/alerts", params={"api-version": "v1"}))
    answer.raise_for_status()
    return answer.json()["value"]


def test_an_alert_url_the_operator_did_not_allow_is_refused(served):
    body = {"url": "http://169.254.169.254/latest", "passRate": 0.8}
    rule = {"action": {"type": "continuousEvaluation", "evalId": "e"}, "eventType": "responseCompleted", "alert": body}
    with pytest.raises(HttpResponseError) as refused:
        served.evaluation_rules.create_or_update(id="r", evaluation_rule=rule)
    release(refused.value)
    assert refused.value.status_code == 400 and "ASSAY_EVALUATOR_ENDPOINTS" in str(refused.value)


def test_a_cluster_insight_labels_a_runs_failures_with_their_samples(served, llm):
    import json

    from azure.ai.projects.models import EvaluationRunClusterInsightRequest, Insight, InsightModelConfiguration

    project = served

    def named(label: str) -> dict:
        return {"content": json.dumps({"label": label, "description": "d", "suggestion_title": "t", "suggestion": "s"})}

    llm.script(
        rules=[  # the groups' namings first: their prompts hold the judges' reasons
            {"match": "it gives no tracking number", "reply": named("Missing tracking number")},
            {"match": "it is rude to the customer", "reply": named("Rude tone")},
            {
                "match": "tracking number please",
                "reply": {"content": '{"reason": "it gives no tracking number", "score": 1}'},
            },
            {"match": "you are annoying", "reply": {"content": '{"reason": "it is rude to the customer", "score": 1}'}},
        ],
        default={"content": '{"reason": "fine", "score": 5}'},
    )
    texts = ["tracking number please"] * 6 + ["you are annoying"] * 6 + ["all good"] * 4
    rows = [{"item": {"query": f"question {i}", "response": f"{t} ({i})"}} for i, t in enumerate(texts)]
    with project.get_openai_client() as openai:
        ev = openai.evals.create(
            name="support",
            data_source_config={"type": "custom", "item_schema": {"type": "object"}},
            testing_criteria=[
                {
                    "type": "azure_ai_evaluator",
                    "name": "relevance",
                    "evaluator_name": "builtin.relevance",
                    "initialization_parameters": {"model": "judge"},
                },
            ],
        )
        run = openai.evals.runs.create(
            eval_id=ev.id, data_source={"type": "jsonl", "source": {"type": "file_content", "content": rows}}
        )
        poll(lambda: openai.evals.runs.retrieve(run.id, eval_id=ev.id), lambda r: r.status == "completed", seconds=60)
    request = EvaluationRunClusterInsightRequest(
        eval_id=ev.id, run_ids=[run.id], model_configuration=InsightModelConfiguration(model_deployment_name="judge")
    )
    insight = project.beta.insights.generate(insight=Insight(display_name="why it fails", request=request))
    assert insight.state == "Running"  # answered first, clustered after: Foundry's samples poll
    ended = poll(lambda: project.beta.insights.get(insight.insight_id), lambda i: i.state != "Running", seconds=60)
    assert ended.state == "Succeeded"
    found = ended.result.cluster_insight
    assert found.summary.sample_count == 12 and found.summary.unique_cluster_count == 2
    assert {group.label for group in found.clusters} == {"Missing tracking number", "Rude tone"}
    for group in found.clusters:
        reasons = {sample.features["reason"] for sample in group.samples}
        assert len(group.samples) == 6 and len(reasons) == 1
    assert [i.insight_id for i in project.beta.insights.list()] == [insight.insight_id]


def test_a_comparison_insight_gives_each_treatment_its_effect(served):
    from azure.ai.projects.models import EvaluationComparisonInsightRequest, Insight

    project = served

    def rows(passing: int) -> list[dict]:
        return [
            {"item": {"response": "the answer", "ground_truth": "the answer" if i < passing else "x"}}
            for i in range(40)
        ]

    with project.get_openai_client() as openai:
        ev = openai.evals.create(
            name="versions",
            data_source_config={"type": "custom", "item_schema": {"type": "object"}},
            testing_criteria=[{"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"}],
        )
        runs = []
        for passing in (36, 36, 12):  # baseline 90%; a treatment alike; one that drops to 30%
            source = {"type": "jsonl", "source": {"type": "file_content", "content": rows(passing)}}
            runs.append(openai.evals.runs.create(eval_id=ev.id, data_source=source).id)
        for run_id in runs:
            finished = poll(
                lambda r=run_id: openai.evals.runs.retrieve(r, eval_id=ev.id),
                lambda r: r.status == "completed",
                seconds=60,
            )
            assert finished.status == "completed"
    request = EvaluationComparisonInsightRequest(eval_id=ev.id, baseline_run_id=runs[0], treatment_run_ids=runs[1:])
    insight = project.beta.insights.generate(insight=Insight(display_name="versions", request=request))
    ended = poll(lambda: project.beta.insights.get(insight.insight_id), lambda i: i.state != "Running", seconds=60)
    (f1,) = ended.result.comparisons
    assert f1.testing_criteria == "f1" and f1.baseline_run_summary.average == 0.9
    same, worse = f1.compare_items
    assert (same.treatment_effect, same.delta_estimate) == ("Inconclusive", 0.0)
    assert worse.treatment_effect == "Degraded" and worse.delta_estimate == -0.6 and worse.p_value < 0.001


def test_an_insight_schedule_clusters_the_evals_newest_run(served):
    import datetime as dt

    from azure.ai.projects.models import (
        EvaluationRunClusterInsightRequest,
        Insight,
        InsightScheduleTask,
        OneTimeTrigger,
        Schedule,
    )

    project = served
    rows = [
        {"item": {"response": "the answer", "ground_truth": "the answer" if i < 4 else f"refund policy {i}"}}
        for i in range(10)
    ]
    with project.get_openai_client() as openai:
        ev = openai.evals.create(
            name="daily insight",
            data_source_config={"type": "custom", "item_schema": {"type": "object"}},
            testing_criteria=[{"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"}],
        )
        source = {"type": "jsonl", "source": {"type": "file_content", "content": rows}}
        run = openai.evals.runs.create(eval_id=ev.id, data_source=source)
        poll(lambda: openai.evals.runs.retrieve(run.id, eval_id=ev.id), lambda r: r.status == "completed", seconds=60)
    # No runIds: each firing reads the eval's newest completed run.
    task = InsightScheduleTask(
        insight=Insight(
            display_name="what failed today", request=EvaluationRunClusterInsightRequest(eval_id=ev.id, run_ids=[])
        )
    )
    when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=3)
    project.beta.schedules.create_or_update(
        schedule_id="insight", schedule=Schedule(enabled=True, trigger=OneTimeTrigger(trigger_at=when), task=task)
    )
    (fired,) = poll(lambda: list(project.beta.schedules.list_runs("insight")), lambda r: len(r) == 1, seconds=60)
    assert fired.success is True and "eval_run_id" not in fired.properties
    # The firing queues the insight; a worker makes it.
    insight = poll(
        lambda: project.beta.insights.get(fired.properties["insight_id"]), lambda i: i.state != "Running", seconds=60
    )
    assert insight.state == "Succeeded" and insight.display_name == "what failed today"
    assert insight.request.run_ids == [run.id]
    assert insight.result.cluster_insight.summary.sample_count == 6
