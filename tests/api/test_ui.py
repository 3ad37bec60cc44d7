"""The web UI in a real browser: Debian's Chromium driven by Playwright."""

from __future__ import annotations

import json

import openai
import pytest

from assay.api import agent_insights
from tests.api.conftest import wait_for
from tests.api.test_agent_insights import DENIED, FINE, QUESTION
from tests.api.test_evals_api import make_eval
from tests.support.fixtures import poll
from tests.support.otel import export_agent_turns


def test_report_url_opens_the_run_page_with_charts_filter_and_pages(served, browser, tmp_path):
    client = served.client()
    rows = [{"query": f"q{i}", "response": "Paris" if i % 3 else "London", "ground_truth": "Paris"} for i in range(120)]
    created = make_eval(client)
    run = client.evals.runs.create(
        eval_id=created.id,
        name="ui check",
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in rows]}},
    )
    run = wait_for(client, created.id, run.id)
    page = browser.new_page()
    page.goto(run.report_url)
    assert page.locator("h1").inner_text().startswith("ui check")
    assert page.locator("#counts").inner_text().startswith("120 items")
    bars = page.locator("svg.pass-rates rect.bar")
    assert bars.count() == 2 and float(bars.first.get_attribute("width")) > 0
    assert page.locator("svg.histogram").count() == 0  # every score here is 0 or 1: the pass rates say it all
    assert page.locator("#items tr").count() == 51  # header + one page of 50
    with page.expect_navigation():  # the first page's rows would answer otherwise
        page.locator("#next").click()
    assert page.locator("#items tr td").first.inner_text() == "50"
    page.select_option("select[name=status]", "fail")
    page.wait_for_url("**status=fail**")
    statuses = page.locator("#items tr td:nth-child(2)").all_inner_texts()
    assert statuses and set(statuses) == {"fail"} and len(statuses) == 40
    page.screenshot(path=str(tmp_path / "run.png"), full_page=True)
    page.goto(f"{served.url}/ui")
    assert run.id in page.locator("#runs").inner_text()


def test_with_api_keys_the_ui_asks_for_one_and_shows_only_its_project(served, browser):
    from tests.api.test_evals_api import ROWS

    alpha, beta = served.store.create_key("alpha"), served.store.create_key("beta")
    runs = {}
    for name, key in (("alpha", alpha), ("beta", beta)):
        client = served.client(key)
        created = make_eval(client)
        run = client.evals.runs.create(
            eval_id=created.id,
            name=f"{name} run",
            data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in ROWS]}},
        )
        runs[name] = wait_for(client, created.id, run.id)
    page = browser.new_page()
    page.goto(runs["alpha"].report_url)
    assert "/ui/login" in page.url  # no key shown yet: nothing of any project is visible
    page.fill("input[name=key]", "assay-not-a-key")
    page.click("button[type=submit]")
    assert "not one of this server's API keys" in page.locator("#problem").inner_text()
    page.fill("input[name=key]", alpha)
    page.click("button[type=submit]")
    page.wait_for_url(runs["alpha"].report_url)  # back where the link pointed
    assert page.locator("h1").inner_text().startswith("alpha run")
    page.goto(f"{served.url}/ui")
    listed = page.locator("#runs").inner_text()
    assert runs["alpha"].id in listed and runs["beta"].id not in listed
    assert page.locator("header .who").inner_text().startswith("project alpha")
    assert page.goto(runs["beta"].report_url).status == 404  # another project's run is not there
    page.goto(f"{served.url}/ui")
    page.click("text=sign out")
    page.wait_for_url("**/ui/login")
    page.goto(f"{served.url}/ui")
    assert "/ui/login" in page.url


def test_a_trace_run_links_each_item_to_its_trace_as_a_span_waterfall(served, browser):
    """Spans from the real OpenTelemetry SDK; the run's item links to a page drawing them on one axis."""
    import json
    import time

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import Status, StatusCode

    from tests.traces import otlp_fixtures as fx

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{served.url}/v1/traces")))
    tracer = provider.get_tracer("ui-test")
    agent_attributes = {
        **fx.agent_attributes(),
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": fx.QUESTION}]}]),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": fx.ANSWER}]}]
        ),
    }
    with tracer.start_as_current_span("invoke_agent weather", attributes=agent_attributes) as agent:
        with tracer.start_as_current_span(
            "chat gpt-4.1-mini", attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1-mini"}
        ):
            time.sleep(0.02)
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather"},
        ) as tool:
            tool.set_status(Status(StatusCode.ERROR, "weather service down"))
    provider.shutdown()
    trace_id = format(agent.get_span_context().trace_id, "032x")

    client = served.client()
    created = client.evals.create(
        name="traced",
        data_source_config={"type": "azure_ai_source", "scenario": "traces"},
        testing_criteria=[
            {
                "type": "azure_ai_evaluator",
                "name": "coherence",
                "evaluator_name": "builtin.coherence",
                "initialization_parameters": {"model": "judge"},
            }
        ],
    )
    run = client.evals.runs.create(eval_id=created.id, data_source={"type": "azure_ai_traces", "trace_ids": [trace_id]})
    run = wait_for(client, created.id, run.id)
    assert run.status == "completed" and run.result_counts.total == 1, run

    page = browser.new_page()
    page.goto(run.report_url)
    page.click("a.trace")
    page.wait_for_url(f"**/ui/traces/{trace_id}")
    bars = page.locator("svg.waterfall rect.span")
    assert [bars.nth(i).get_attribute("data-operation") for i in range(bars.count())] == [
        "invoke_agent",
        "chat",
        "execute_tool",
    ]  # tree order: the agent, then its children by start
    chat, tool = float(bars.nth(1).get_attribute("x")), float(bars.nth(2).get_attribute("x"))
    assert tool > chat and float(bars.nth(1).get_attribute("width")) > 2  # the 20 ms call has a length
    assert bars.nth(2).get_attribute("stroke") == "#c62828"  # the failed tool call is outlined
    assert page.locator("svg.waterfall text.tick").count() >= 4
    spans = page.locator("#spans").inner_text()
    assert "weather service down" in spans and "gen_ai.request.model=gpt-4.1-mini" in spans
    assert fx.QUESTION in page.locator("pre.turn").first.inner_text()
    page.goto(f"{served.url}/ui/traces")
    assert trace_id in page.locator("#traces").inner_text()


def test_a_conversation_item_is_shown_as_a_transcript(served, browser, tmp_path):
    client = served.client()
    conversation = [
        {"role": "user", "content": "What's my account balance?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_account_balance", "arguments": '{"account_id": "ACCT-7890"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"balance": 1234.56}'},
        {"role": "assistant", "content": "Your current balance is 1,234.56."},
    ]
    check = [
        {
            "type": "string_check",
            "name": "ended",
            "input": "{{item.termination_reason}}",
            "reference": "user_stop",
            "operation": "eq",
        }
    ]
    created = client.evals.create(
        data_source_config={"type": "custom", "item_schema": {"type": "object"}}, testing_criteria=check
    )
    rows = [{"item": {"messages": conversation, "termination_reason": "user_stop"}}]
    run = client.evals.runs.create(
        eval_id=created.id, data_source={"type": "jsonl", "source": {"type": "file_content", "content": rows}}
    )
    run = wait_for(client, created.id, run.id)
    page = browser.new_page()
    page.goto(run.report_url)
    chat = page.locator("details.transcript")
    assert "4 messages" in chat.locator("summary").first.inner_text() and "user_stop" in chat.inner_text()
    chat.locator("summary").first.click()
    messages = chat.locator(".msg")
    assert messages.count() == 3  # the tool result is folded under the call
    assert messages.nth(1).locator("details.tools summary").inner_text().startswith("1 tool call: get_account_balance")
    messages.nth(1).locator("details.tools summary").click()
    assert '← {"balance": 1234.56}' in messages.nth(1).inner_text()
    assert "1,234.56" in messages.nth(2).inner_text()
    page.screenshot(path=str(tmp_path / "transcript.png"), full_page=True)


def test_a_criterion_that_errored_everywhere_says_why(served, browser, llm):
    llm.script(default={"status": 400})
    client = served.client()
    relevance = [
        {
            "type": "azure_ai_evaluator",
            "name": "relevance",
            "evaluator_name": "builtin.relevance",
            "initialization_parameters": {"model": "judge"},
        }
    ]
    created = client.evals.create(
        data_source_config={"type": "custom", "item_schema": {"type": "object"}}, testing_criteria=relevance
    )
    rows = [{"item": {"query": f"q{i}", "response": "a"}} for i in range(3)]
    run = client.evals.runs.create(
        eval_id=created.id, data_source={"type": "jsonl", "source": {"type": "file_content", "content": rows}}
    )
    run = wait_for(client, created.id, run.id)
    page = browser.new_page()
    page.goto(run.report_url)
    assert "– (3 errored, 0 skipped)" in page.locator("svg.pass-rates").text_content()
    assert "3 × model 'judge': 400" in page.locator("#causes").inner_text()


def test_items_filter_by_criterion_verdict_sort_search_and_open_in_full(served, browser, llm, tmp_path):
    llm.script(
        rules=[
            {"match": f"question {i}\\n", "reply": {"content": f'{{"reason": "judged {i}", "score": {1 + i % 5}}}'}}
            for i in range(30)
        ]
    )
    client = served.client()
    criteria = [
        *CRITERIA_F1,
        {
            "type": "azure_ai_evaluator",
            "name": "relevance",
            "evaluator_name": "builtin.relevance",
            "initialization_parameters": {"model": "judge"},
        },
    ]
    created = client.evals.create(
        data_source_config={"type": "custom", "item_schema": {"type": "object"}}, testing_criteria=criteria
    )
    rows = [
        {
            "item": {
                "query": f"question {i}",
                "response": f"answer {i}" + (" Paris" if i % 2 else ""),
                "ground_truth": f"answer {i} Paris",
            }
        }
        for i in range(30)
    ]
    run = client.evals.runs.create(
        eval_id=created.id,
        name="filters",
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": rows}},
    )
    run = wait_for(client, created.id, run.id)
    page = browser.new_page()
    page.goto(run.report_url)
    page.select_option("select[name=criterion]", "relevance")
    page.wait_for_url("**criterion=relevance**")
    page.select_option("select[name=verdict]", "fail")
    page.wait_for_url("**verdict=fail**")
    assert page.locator("#matching").inner_text().startswith("12 matching")  # scores 1 and 2 of 1..5: 12 of 30
    page.select_option("select[name=sort]", "-score")
    page.wait_for_url("**sort=-score**")
    ids = [int(t) for t in page.locator("#items a.item-link").all_inner_texts()]
    assert ids[:6] == [1, 6, 11, 16, 21, 26]  # the score 2s first, then the 1s
    page.fill("input[name=q]", "judged 11")
    page.locator("#filter button").click()
    page.wait_for_url("**q=judged+11**")
    assert page.locator("#items a.item-link").all_inner_texts() == ["11"]
    page.locator("#items a.item-link").first.click()
    page.wait_for_url(f"**/ui/runs/{run.id}/items/11")
    verdicts = page.locator("#verdicts").inner_text()
    assert "relevance" in verdicts and "judged 11" in verdicts and "in /" in verdicts and " ms" in verdicts
    page.locator("#verdicts details summary", has_text="raw answer").first.click()
    assert '"score": 2' in page.locator("pre.raw").first.inner_text()
    assert "question 11" in page.locator("#data").inner_text()
    page.screenshot(path=str(tmp_path / "item.png"), full_page=True)
    page.goto(f"{served.url}/ui")
    listed = page.locator("#runs tr", has_text="filters").inner_text()
    cells = listed.split("\t")[1:]  # after the tick box that picks runs to compare
    assert (
        cells[1].endswith(" UTC")
        and cells[2].endswith("s")
        and cells[3:] == ["completed", "gpt-4.1-mini", "30", "18", "12", "0", "–", "60%"]
    )  # no price configured: no cost
    missing = page.goto(f"{served.url}/ui/runs/{run.id}/items/999")
    assert missing is not None and missing.status == 404


CRITERIA_F1 = [{"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"}]


def test_an_agent_insight_monitor_is_shown_with_its_insights_evidence_and_runs(served, browser, llm, tmp_path):
    llm.script(
        rules=[{"match": "We never give refunds", "reply": {"content": json.dumps(DENIED)}}],
        default={"content": json.dumps(FINE)},
    )
    answers = ["We never give refunds."] * 3 + ["Yes, refunded within 30 days."]
    export_agent_turns(served.url, "desk", [(QUESTION, answer) for answer in answers])
    ctx = served.app_state
    monitor = agent_insights.create_monitor(
        ctx, "default", {"agent_name": "desk", "model_deployment_name": "judge", "enabled": False}
    )
    accepted = agent_insights.create_run(ctx, "default", monitor["id"], {"lookback_hours": 1})
    job = poll(
        lambda: served.store.get_job("default", "insight_run", accepted.job["id"]),
        lambda job: job["status"] in ("succeeded", "failed"),
        seconds=60,
    )  # a worker took it
    assert job["status"] == "succeeded", job

    page = browser.new_page()
    page.goto(f"{served.url}/ui/insights")
    row = page.locator("#monitors tr", has_text="desk")
    assert "high" in row.inner_text() and row.locator("td").nth(1).inner_text() == "1"
    row.locator("a").click()
    page.wait_for_url(f"**/ui/monitors/{monitor['id']}")
    assert page.locator("h1").inner_text().startswith("desk")
    assert page.locator("svg.rate-intervals rect").count() >= 1
    (section,) = page.locator("section.cluster").all()
    assert (
        "Denies refunds the policy allows" in section.locator("h2").inner_text() and "3 traces" in section.inner_text()
    )
    assert "30 days" in section.inner_text()  # the proposed fix
    assert section.locator("a[href^='/ui/traces/']").count() == 3
    assert "succeeded" in page.locator("#runs").inner_text()
    page.screenshot(path=str(tmp_path / "monitor.png"), full_page=True)
    section.locator("a[href^='/ui/traces/']").first.click()
    page.wait_for_url("**/ui/traces/**")
    assert "invoke_agent desk" in page.content()


def test_the_alerts_page_lists_each_alert_with_every_attempt(served, browser, tmp_path):
    store = served.store
    for run_key, state, log in (
        ("run_flaky", "delivered", [(500, None), (500, None), (200, None)]),
        ("run_dead", "failed", [(None, "timed out")] * 2),
    ):
        store.claim_alert("default", run_key, "schedule", "nightly")
        attempts = [
            {"attempt": n, "at": 1_780_000_000.0 + n, "seconds": 0.01, "status": status, **({"error": e} if e else {})}
            for n, (status, e) in enumerate(log, start=1)
        ]
        store.record_alert(
            "default",
            run_key,
            kind="run_failed",
            payload={"type": "run_failed", "runId": run_key},
            target={"url": f"https://hooks.example.com/{run_key}"},
            state=state,
            attempts=len(attempts),
            attempt_log=attempts,
        )
    page = browser.new_page()
    page.goto(f"{served.url}/ui/alerts")
    rows = page.locator("#alerts tr.alert")
    assert rows.count() == 2
    flaky = page.locator("#alerts tr.alert", has_text="run_flaky")
    assert flaky.locator(".state").inner_text() == "delivered"
    assert flaky.locator(".attempt").all_inner_texts() == ["#1 500", "#2 500", "#3 200"]
    dead = page.locator("#alerts tr.alert", has_text="run_dead")
    assert dead.locator(".state").inner_text() == "failed"
    assert dead.locator(".attempt.bad").count() == 2 and "timed out" in dead.inner_text()
    page.screenshot(path=str(tmp_path / "alerts.png"), full_page=True)


def test_a_ui_error_is_a_page_of_the_ui_and_the_api_still_answers_json(served, browser, tmp_path):
    page = browser.new_page()
    missing = page.goto(f"{served.url}/ui/runs/evalrun_nosuchrun")
    assert missing is not None and missing.status == 404
    assert missing.headers["content-type"].startswith("text/html")
    assert page.locator("h1").inner_text() == "Not found"
    assert "evalrun_nosuchrun" in page.locator("#error").inner_text()
    page.screenshot(path=str(tmp_path / "not-found.png"), full_page=True)
    page.locator("main a[href='/ui']").click()  # the way back is a link, not the browser's back button
    page.wait_for_url("**/ui")
    wrong = page.goto(f"{served.url}/ui/runs/evalrun_x/items/not-a-number")
    assert wrong is not None and wrong.status == 400
    assert page.locator("h1").inner_text() == "Bad request" and "item_id" in page.locator("#error").inner_text()
    nowhere = page.goto(f"{served.url}/ui/no-such-page")
    assert nowhere is not None and nowhere.status == 404
    assert page.locator("#error").inner_text() == "there is no page at /ui/no-such-page"
    with pytest.raises(openai.NotFoundError) as refused:  # the API keeps OpenAI's JSON errors
        served.client().with_options(max_retries=0).evals.retrieve("eval_nosuch")
    assert "eval_nosuch" in refused.value.message
