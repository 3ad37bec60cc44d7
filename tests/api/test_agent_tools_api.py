"""Over the API a model target's tools are the tool sets the operator configured, by name; a module
path, a command, a URL or code in a request is refused with a 400 (it would run on the server)."""

from __future__ import annotations

import openai
import pytest

from assay.api import create_app
from assay.evaluators import load_catalog
from assay.llm import ModelConfig, ModelRegistry
from assay.run.worker import start_workers
from assay.targets.tools import check_sources
from tests.api.conftest import Served, wait_for
from tests.support.servers import uvicorn_in_thread
from tests.targets.test_agent_loop import TOOLS, script

CRITERIA = [
    {
        "type": "string_check",
        "name": "dated",
        "input": "{{sample.output_text}}",
        "reference": "2026-11-30",
        "operation": "like",
    }
]
ROWS = [{"item": {"query": "Where is order 42?"}}, {"item": {"query": "Refund order 7"}}]


@pytest.fixture
def with_tools(store, llm, tmp_path):
    (tmp_path / "tools.py").write_text(TOOLS)
    bot = ModelConfig(name="bot", model="m", base_url=llm.base_url, api_key="t", max_retries=0)
    tool_sets = {"orders": check_sources([{"python": "tools.py"}], "tools.orders", tmp_path)}
    registry = ModelRegistry([bot], cache=store, tool_sets=tool_sets)
    catalog = lambda project: load_catalog(store, project)  # noqa: E731
    app = create_app(store, catalog=catalog, models=lambda: registry)
    with uvicorn_in_thread(app) as url:
        stop, workers = start_workers(store, catalog, lambda: registry, 1)
        served = Served(url, store, app.state.assay)
        yield served
        for client in served.clients:
            client.close()
        stop.set()
        for worker in workers:
            worker.join(timeout=10)


def create_run(client, tools):
    created = client.evals.create(
        name="agent over the API",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}, "include_sample_schema": True},
        testing_criteria=CRITERIA,
    )
    run = client.evals.runs.create(
        eval_id=created.id,
        data_source={
            "type": "azure_ai_target_completions",
            "source": {"type": "file_content", "content": ROWS},
            "input_messages": {"type": "template", "template": [{"role": "user", "content": "{{item.query}}"}]},
            "target": {"type": "azure_ai_model", "model": "bot", "tools": tools},
        },
    )
    return created, run


def test_a_configured_tool_set_runs_in_the_loop(with_tools, llm):
    script(llm)
    client = with_tools.client()
    created, run = create_run(client, ["orders"])
    finished = wait_for(client, created.id, run.id)
    assert finished.status == "completed", finished.error
    items = {i.datasource_item_id: i for i in client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)}
    shipped = items[0].model_dump()["sample"]
    assert shipped["output_text"] == "Your order 42 shipped on 2026-11-30."
    assert [i["type"] for i in shipped["output_items"]] == ["function_call", "function_call_output", "message"]
    assert (finished.result_counts.passed, finished.result_counts.failed) == (1, 1)
    roles = (finished.model_extra or {})["per_role_usage"]  # an assay extension on the run object
    assert [(r["role"], r["model_name"], r["invocation_count"]) for r in roles] == [("target", "m", 4)]


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([{"python": "/tmp/tools.py"}], "a request names a tool set the server configured"),
        ([{"mcp": {"command": ["sh", "-c", "id"]}}], "a request names a tool set the server configured"),
        ([{"mcp": {"url": "http://169.254.169.254/mcp"}}], "a request names a tool set the server configured"),
        (["crm"], "no tool set 'crm' is configured here"),
        ("orders", "must be a list of tool set names"),
    ],
)
def test_tools_a_request_may_not_give_are_refused(with_tools, tools, message):
    client = with_tools.client()
    with pytest.raises(openai.BadRequestError) as refused:
        create_run(client, tools)
    assert message in str(refused.value)


def test_an_agent_runs_page_shows_its_answers_and_tool_calls(with_tools, llm, browser, tmp_path):
    script(llm)
    client = with_tools.client()
    created, run = create_run(client, ["orders"])
    finished = wait_for(client, created.id, run.id)
    page = browser.new_page()
    page.goto(finished.report_url)
    answers = page.locator("#items td.answer")
    assert answers.count() == 2 and "Your order 42 shipped on 2026-11-30." in answers.first.inner_text()
    assert "1 tool call:" in answers.first.locator("details.tools summary").inner_text()
    page.screenshot(path=str(tmp_path / "agent-run.png"), full_page=True)
    page.locator("#items a.item-link").first.click()
    steps = page.locator("#answer details.steps")
    assert "1 tool call" in steps.locator("summary").first.inner_text()
    call = page.locator("#answer details.tool-call").first
    call.locator("summary").click()
    assert "←" in call.inner_text() and "42" in call.inner_text()  # the call's arguments and its result
    assert page.locator("#next-item").count() == 1 and page.locator("#previous-item").count() == 0
    page.screenshot(path=str(tmp_path / "agent-item.png"), full_page=True)
    with page.expect_navigation():
        page.locator("#next-item").click()
    assert page.locator("h1").inner_text().startswith("Item 1") and page.locator("#previous-item").count() == 1
