"""Agent Insights through ``azure-ai-projects`` 2.10 (``beta.agent_insight_monitors``) against
``assay serve --tls``: an agent's traces arrive through the OpenTelemetry SDK, a monitor's run reads
them with a scripted model, the traces that show the same problem become one insight (its evidence,
its fix), a rerun counts nothing twice, a resolved insight is reopened by new evidence, and an
enabled monitor runs on its own schedule."""

from __future__ import annotations

import itertools
import json

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from tests.api.test_foundry_sdk import foundry_client, foundry_server
from tests.support.fixtures import poll
from tests.support.otel import export_agent_turns

TITLE = "Denies refunds the policy allows"
DENIED = {
    "problem": True,
    "title": TITLE,
    "category": "instruction_not_followed",
    "severity": "high",
    "summary": "The agent refused a refund inside the 30-day window.",
    "diagnosis": "The instructions do not state the 30-day refund window, so the agent refuses.",
    "fix": "State in the instructions that purchases within 30 days are refunded.",
    "fix_surface": "instructions",
}
FINE = {key: "" for key in DENIED} | {"problem": False, "category": "other", "severity": "low", "fix_surface": "none"}
RULES = [{"match": "We never give refunds", "reply": {"content": json.dumps(DENIED)}}]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("agent-insights")
    with foundry_server(home, RULES, model="analyst", default={"content": json.dumps(FINE)}) as served:
        yield served


@pytest.fixture
def project_client(served, monkeypatch):
    with foundry_client(served, monkeypatch) as client:
        yield client


QUESTION = "I bought it 10 days ago, can I get a refund?"


def send_traces(served, agent: str, answers: list[str]) -> None:
    turns = [(QUESTION, answer) for answer in answers]
    export_agent_turns(served["endpoint"], agent, turns, key=served["key"], cert=served["cert"])


def test_a_monitor_turns_traces_with_one_problem_into_one_insight(project_client, served):
    send_traces(served, "desk", ["We never give refunds."] * 3 + ["Yes, refunded within 30 days."] * 2)
    monitors = project_client.beta.agent_insight_monitors
    monitor = monitors.create({"agent_name": "desk", "model_deployment_name": "analyst", "enabled": False})
    assert monitor.agent_name == "desk" and monitor.enabled is False and monitor.overview is None

    run = monitors.begin_create_run(monitor.id, {"lookback_hours": 1}, polling_interval=0.1)
    result = run.result(timeout=120)
    assert (result.traces_in_window, result.traces_analyzed, result.insights_created) == (5, 5, 1)
    assert result.token_usage.total_tokens > 0

    (insight,) = list(monitors.list_insights(monitor.id))
    assert (insight.title, insight.severity, insight.category) == (TITLE, "high", "instruction_not_followed")
    assert insight.status == "active" and insight.trace_count == 3 and insight.details is None
    detailed = monitors.get_insight(monitor.id, insight.id, include_details=True)
    assert len(detailed.details.highlighted_traces) == 3 and len(detailed.details.linked_traces) == 3
    action = detailed.details.recommended_actions
    assert action.proposed_fix.kind == "prompt_change" and "30 days" in action.proposed_fix.text
    overview = monitors.get(monitor.id).overview
    assert overview.source == "generated" and TITLE in overview.content

    # The same window again: every trace is known, nothing is counted twice.
    again = monitors.begin_create_run(monitor.id, {"lookback_hours": 1}, polling_interval=0.1).result(timeout=120)
    assert (again.insights_created, again.insights_updated, again.insights_reopened) == (0, 0, 0)

    # Resolved, then seen again: reopened with the new trace as evidence.
    assert monitors.update_insight(monitor.id, insight.id, {"status": "resolved"}).status == "resolved"
    send_traces(served, "desk", ["We never give refunds, sorry."])
    reopened = monitors.begin_create_run(monitor.id, {"lookback_hours": 1}, polling_interval=0.1).result(timeout=120)
    assert reopened.insights_reopened == 1
    insight = monitors.get_insight(monitor.id, insight.id)
    assert insight.status == "active" and insight.trace_count == 4

    runs = list(monitors.list_runs(monitor.id))
    assert len(runs) == 3 and {r.status for r in runs} == {"succeeded"} and {r.trigger for r in runs} == {"on_demand"}
    assert runs[0].window_end >= runs[0].window_start and runs[0].completed_at is not None

    mine = monitors.update(monitor.id, {"overview_override": {"content": "Refunds: being fixed."}})
    assert (mine.overview.source, mine.overview.content) == ("user_override", "Refunds: being fixed.")
    listed = [m.agent_name for m in monitors.list(agent_name="desk")]
    assert listed == ["desk"]

    monitors.reset(monitor.id)
    assert list(monitors.list_insights(monitor.id)) == [] and monitors.get(monitor.id).overview is None
    monitors.delete(monitor.id)
    with pytest.raises(ResourceNotFoundError):
        monitors.get(monitor.id)


def test_a_reset_during_a_run_is_not_undone_by_what_the_run_found(project_client, served):
    send_traces(served, "desk-reset", ["We never give refunds here."] * 2)  # prompts no other test sent
    monitors = project_client.beta.agent_insight_monitors
    monitor = monitors.create({"agent_name": "desk-reset", "model_deployment_name": "analyst", "enabled": False})
    provider = served["provider"]
    held = provider.stats()["requests"]
    provider.script(rules=RULES, default={"content": json.dumps(FINE)}, hold_after=held)  # every call waits
    try:
        run = monitors.begin_create_run(monitor.id, {"lookback_hours": 1}, polling_interval=0.1)
        poll(lambda: provider.stats()["requests"], lambda n: n > held, seconds=60)  # the run is reading a trace
        monitors.reset(monitor.id)
    finally:
        provider.script(rules=RULES, default={"content": json.dumps(FINE)})  # the held calls are answered
    result = run.result(timeout=120)
    assert result.traces_analyzed == 2 and result.insights_created == 0
    assert list(monitors.list_insights(monitor.id)) == [] and monitors.get(monitor.id).overview is None

    later = monitors.begin_create_run(monitor.id, {"lookback_hours": 1}, polling_interval=0.1).result(timeout=120)
    assert later.insights_created == 1  # what was reset is found again by a run that started after it
    monitors.delete(monitor.id)


def test_an_enabled_monitor_runs_on_its_own_schedule(project_client, served):
    monitors = project_client.beta.agent_insight_monitors
    # An interval of about two seconds: the server's firer starts the runs as they fall due, each
    # reading from where the last one stopped, so the trace sent now is read by one of them.
    monitor = monitors.create({"agent_name": "kiosk", "model_deployment_name": "analyst", "run_interval_hours": 0.0006})
    assert monitor.next_scheduled_run_at is not None
    send_traces(served, "kiosk", ["We never give refunds."])

    def found() -> list:
        return [r for r in monitors.list_runs(monitor.id, trigger="scheduled") if r.status == "succeeded"]

    runs = poll(found, lambda runs: sum(r.result.insights_created for r in runs) == 1, seconds=60)
    monitors.update(monitor.id, {"enabled": False})
    assert sum(r.result.insights_created for r in runs) == 1 and {r.trigger for r in runs} == {"scheduled"}
    windows = sorted((r.window_start, r.window_end) for r in runs)
    assert all(later[0] == earlier[1] for earlier, later in itertools.pairwise(windows))  # no gap, no overlap
    assert all(later[1] - earlier[1] >= 2 for earlier, later in itertools.pairwise(windows))  # an interval apart
    assert monitors.get(monitor.id).next_scheduled_run_at is None
    (insight,) = list(monitors.list_insights(monitor.id))
    assert insight.trace_count == 1


def test_mistakes_are_refused_naming_the_field(project_client):
    monitors = project_client.beta.agent_insight_monitors
    with pytest.raises(HttpResponseError, match="model_deployment_name") as caught:
        monitors.create({"agent_name": "nobody"})
    assert caught.value.status_code == 400
    made = monitors.create({"agent_name": "twice", "model_deployment_name": "analyst", "enabled": False})
    with pytest.raises(HttpResponseError, match="already has a monitor"):
        monitors.create({"agent_name": "twice", "model_deployment_name": "analyst"})
    with pytest.raises(HttpResponseError, match="lookback_hours"):
        monitors.begin_create_run(made.id, {"lookback_hours": -1})
    with pytest.raises(HttpResponseError, match="status: one of"):
        monitors.update_insight(made.id, "ainsight_x", {"status": "done"})
    monitors.delete(made.id)


def test_of_two_servers_one_claims_a_due_run_and_a_cancelled_job_stays_so(store):
    monitor = {"id": "aimon_1", "agent_name": "desk", "enabled": True, "next_scheduled_run_at": 100}
    store.add_monitor("p", monitor)
    assert [m["id"] for _, m, due in store.due_monitors(150) if due == 100] == ["aimon_1"]
    assert store.due_monitors(99) == []
    moved = monitor | {"next_scheduled_run_at": 3700}
    claims = [store.claim_monitor_run("p", moved, 100) for _ in range(2)]
    assert claims == [True, False] and store.due_monitors(150) == []
    assert store.get_monitor("p", "aimon_1")["next_scheduled_run_at"] == 3700  # the document moved on too
    # A job that ended is never written over by a late update (its run finishing after a cancel).
    job = {"id": "airun_1", "monitor_id": "aimon_1", "status": "queued"}
    store.add_job("p", "insight_run", job, runner="local:x:1:1")
    assert store.update_job("p", job | {"status": "cancelled"})
    assert not store.update_job("p", job | {"status": "succeeded"})
    assert store.get_job("p", "insight_run", "airun_1")["status"] == "cancelled"
