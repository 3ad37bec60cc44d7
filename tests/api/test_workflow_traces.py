"""A multi-agent workflow traced by a real program (the OpenTelemetry SDK; a triage agent hands off
to a billing agent) is evaluated overall and per agent: the run's items are each trace's workflow
and each agent's turns, and its summary, the CLI table and the web UI report every criterion per agent."""

from __future__ import annotations

from assay.cli.common import out
from assay.cli.summary import print_summary
from assay.stats.compare import compare_runs
from tests.api.conftest import wait_for
from tests.support.otel import export_handoffs

CASES = [
    ("Can I get a refund for order 7?", "Handing you to billing.", "Your refund for order 7 is approved."),
    ("I was charged twice for order 9.", "Handing you to billing.", "A refund of the double charge is on its way."),
]
REFUNDED = {
    "type": "string_check",
    "name": "refund_given",
    "input": "{{item.response}}",
    "reference": "refund",
    "operation": "ilike",
}


def test_a_two_agent_workflow_is_evaluated_overall_and_per_agent(served, browser, tmp_path):
    export_handoffs(served.url, CASES)
    client = served.client()
    made = client.evals.create(
        name="support workflow",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=[REFUNDED],
    )
    source = {"type": "azure_ai_traces", "agent_name": "billing", "lookback_hours": 1, "workflow": {}}
    run = wait_for(client, made.id, client.evals.runs.create(eval_id=made.id, data_source=source).id)
    assert run.status == "completed", run
    items = list(client.evals.runs.output_items.list(run.id, eval_id=made.id))
    parts = sorted((i.datasource_item["workflow_part"], i.datasource_item["agent_id"]) for i in items)
    assert parts == [("agent", "billing")] * 2 + [("agent", "triage")] * 2 + [("overall", "workflow")] * 2
    overall = next(i for i in items if i.datasource_item["workflow_part"] == "overall").datasource_item
    spoken = [(m["role"], "".join(part["text"] for part in m["content"])) for m in overall["messages"]]
    assert spoken[0] == ("user", "Can I get a refund for order 7?")  # the workflow: question to answer,
    assert spoken[1:] == [
        ("assistant", "Handing you to billing."),
        ("assistant", "Your refund for order 7 is approved."),
    ]

    summary = served.store.get_run(run.id).summary
    rows = {(row.agent, row.testing_criteria): (row.passed, row.failed) for row in summary.per_agent}
    assert rows == {
        ("workflow", "refund_given"): (2, 0),
        ("billing", "refund_given"): (2, 0),
        ("triage", "refund_given"): (0, 2),  # the triage agent only hands off
    }
    assert [row.agent for row in summary.per_agent] == ["workflow", "billing", "triage"]

    with out.capture() as printed:  # the table `assay runs show` and `assay run` print
        print_summary(served.store.get_run(run.id), summary, served.store.url)
    table = printed.get()
    assert "per agent" in table and any("triage" in line and "0/2/0" in line for line in table.splitlines()), table

    page = browser.new_page()
    page.goto(f"{served.url}/ui/runs/{run.id}")
    agents = page.locator("#agents tr.agent-row")
    assert agents.count() == 3
    assert agents.nth(2).inner_text().split("\t")[:2] == ["triage", "refund_given"]
    page.screenshot(path=str(tmp_path / "per-agent.png"), full_page=True)


def test_a_comparison_of_two_workflow_runs_shows_which_agent_changed(served):
    client = served.client()
    made = client.evals.create(
        name="support workflow",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=[REFUNDED],
    )

    def evaluate(cases: list[tuple[str, str, str]]) -> str:
        before = {t["trace_id"] for t in served.store.list_traces("default", limit=1000)}
        export_handoffs(served.url, cases)
        traces = [t["trace_id"] for t in served.store.list_traces("default", limit=1000) if t["trace_id"] not in before]
        source = {"type": "azure_ai_traces", "trace_ids": traces, "workflow": {}}
        run = wait_for(client, made.id, client.evals.runs.create(eval_id=made.id, data_source=source).id)
        assert run.status == "completed", run
        return run.id

    good = evaluate(CASES)
    worse = evaluate([(question, handoff, "We cannot help with money matters.") for question, handoff, _ in CASES])
    found = {c.name: c for c in compare_runs(served.store, good, worse).criteria}
    assert (found["refund_given · billing"].passed_a, found["refund_given · billing"].passed_b) == (2, 0)
    assert (found["refund_given · triage"].passed_a, found["refund_given · triage"].passed_b) == (0, 0)
    assert (found["refund_given · workflow"].passed_a, found["refund_given · workflow"].passed_b) == (2, 0)
    assert found["refund_given"].n == 6  # the whole run's items too
