"""Human review: feedback sent as OpenTelemetry ``gen_ai.evaluation.result`` events (with the
OpenTelemetry SDK, as log records and as span events) becomes labels on the items made from those
responses and spans; assay's own verdicts leave as such events for an OTLP receiver, parented to
the span judged; a review queue in Chromium hides the evaluator's verdict until the reviewer
answers, keeps every answer, and its labels feed the judges' agreement and calibration."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys

import pytest
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from assay.review.labels import human_verdicts
from tests.api.conftest import wait_for
from tests.api.test_evals_api import make_eval
from tests.support.fixtures import poll
from tests.support.servers import post_receiver, ui_form_token

EVENT = "gen_ai.evaluation.result"


def assay(*args, store, home):
    """``assay ARGS`` in a process of its own on the server's store (PostgreSQL or SQLite)."""
    env = {**os.environ, "ASSAY_DATABASE_URL": store.url, "ASSAY_HOME": str(home), "COLUMNS": "120"}
    done = subprocess.run([sys.executable, "-m", "assay", *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_of(client, rows, name="reviewed"):
    created = make_eval(client)
    run = client.evals.runs.create(
        eval_id=created.id,
        name=name,
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in rows]}},
    )
    return wait_for(client, created.id, run.id)


def capitals(n, prefix="resp"):
    """n items, a third of them wrong (``mentions`` fails those), each with a response id."""
    return [
        {
            "query": f"q{i}",
            "response": "London" if i % 3 == 0 else "Paris",
            "ground_truth": "Paris",
            "resp_id": f"{prefix}_{i}",
        }
        for i in range(n)
    ]


@pytest.fixture
def otlp_receiver():
    """An OTLP/HTTP logs receiver: the export requests it got, decoded."""
    with post_receiver("/v1/logs", status=200) as (url, got):
        yield url, got


def decoded(got) -> list[ExportLogsServiceRequest]:
    requests = []
    for _, body in got:
        request = ExportLogsServiceRequest()
        request.ParseFromString(body)
        requests.append(request)
    return requests


def test_feedback_events_sent_with_the_otel_sdk_become_labels_and_feed_agreement(served, tmp_path):
    # A span whose turn is judged, its feedback given as a span event (the older way).
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{served.url}/v1/traces")))
    with tracing.get_tracer("app").start_as_current_span("chat") as span:
        span.add_event(
            EVENT, {"gen_ai.evaluation.name": "mentions", "gen_ai.evaluation.score.label": "fail", "user.id": "carol"}
        )
        context = span.get_span_context()
    tracing.shutdown()
    rows = capitals(12)
    rows.append(
        {
            "query": "traced",
            "response": "Paris",
            "ground_truth": "Paris",
            "trace_id": f"{context.trace_id:032x}",
            "span_id": f"{context.span_id:016x}",
        }
    )
    run = run_of(served.client(), rows)
    # The people's verdicts on the responses, as log events (the current way): they disagree with
    # the judge on item 1 only.
    logging = LoggerProvider()
    logging.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"{served.url}/v1/logs")))
    logger = logging.get_logger("feedback")
    for i, row in enumerate(rows[:12]):
        verdict = "fail" if i % 3 == 0 or i == 1 else "pass"
        logger.emit(
            event_name=EVENT,
            attributes={
                "gen_ai.evaluation.name": "mentions",
                "gen_ai.evaluation.score.label": verdict,
                "gen_ai.evaluation.explanation": "checked by hand",
                "gen_ai.response.id": row["resp_id"],
                "microsoft.gen_ai.evaluation.actor.type": "human",
                "user.id": "alice",
            },
        )
    # An evaluator's verdict (not a person's) on the same response is not a label of a person.
    logger.emit(
        event_name=EVENT,
        attributes={
            "gen_ai.evaluation.name": "mentions",
            "gen_ai.evaluation.score.label": "pass",
            "gen_ai.response.id": "resp_0",
            "microsoft.gen_ai.evaluation.actor.type": "evaluator",
        },
    )
    logging.shutdown()

    stored = served.store.get_run(run.id)
    verdicts = human_verdicts(served.store, stored)["mentions"]
    assert len(verdicts) == 13
    assert verdicts[12] == {"passed": False, "score": None, "annotators": ["carol"]}  # through the span
    assert [verdicts[i]["passed"] for i in range(12)] == [not (i % 3 == 0 or i == 1) for i in range(12)]

    (figure,) = json.loads(assay("judges", "agreement", run.id, "--json", store=served.store, home=tmp_path))
    # The judge agrees with the people on 11 of 13 items: item 1 (people: fail) and the traced turn.
    assert figure["criterion"] == "mentions" and figure["n"] == 13
    assert figure["agreement"] == pytest.approx(11 / 13)
    lines = assay("review", "labels", run.id, store=served.store, home=tmp_path).splitlines()
    assert len(lines) == 13 and {json.loads(line)["annotator"] for line in lines} == {"alice", "carol"}


def test_verdicts_leave_as_evaluation_events_parented_to_the_span_judged(served, otlp_receiver, monkeypatch):
    endpoint, got = otlp_receiver
    monkeypatch.setenv("ASSAY_EVALUATION_EVENTS_ENDPOINT", endpoint)
    trace_id, span_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    rows = capitals(3)
    rows[0].update(trace_id=trace_id, span_id=span_id)
    run = run_of(served.client(), rows)
    assert run.status == "completed"

    def received() -> list:
        return [
            r
            for request in decoded(got)
            for rl in request.resource_logs
            for sl in rl.scope_logs
            for r in sl.log_records
        ]

    records = poll(received, lambda found: len(found) >= 6, seconds=30)  # sent once the run has completed
    assert len(records) == 6  # 3 items × 2 criteria
    assert {r.event_name for r in records} == {EVENT}
    events = [
        {a.key: a.value for a in r.attributes} | {"_trace": r.trace_id.hex(), "_span": r.span_id.hex()} for r in records
    ]
    first = [e for e in events if e["assay.datasource_item_id"].int_value == 0]
    assert {e["_trace"] for e in first} == {trace_id} and {e["_span"] for e in first} == {span_id}
    assert all(e["_trace"] == "" for e in events if e["assay.datasource_item_id"].int_value != 0)
    mentions = {
        e["gen_ai.response.id"].string_value: e["gen_ai.evaluation.score.label"].string_value
        for e in events
        if e["gen_ai.evaluation.name"].string_value == "mentions"
    }
    assert mentions == {"resp_0": "fail", "resp_1": "pass", "resp_2": "pass"}
    assert {e["microsoft.gen_ai.evaluation.actor.type"].string_value for e in events} == {"evaluator"}
    assert all(e["assay.run.id"].string_value == run.id for e in events)


def test_a_review_queue_hides_the_verdict_until_answered_and_keeps_every_answer(served, browser, tmp_path):
    client = served.client()
    run = run_of(client, capitals(6), "to review")
    page = browser.new_page()
    page.goto(f"{served.url}/ui/runs/{run.id}")
    page.click("#review-form summary")
    page.fill("input[name=reviewers]", "alice, bob")
    page.click("#review-form button[type=submit]")
    page.wait_for_url("**/ui/reviews/queue_*")
    assert page.locator("#items tr").count() == 7  # the header and six items, dealt to alice and bob in turn
    assert page.locator("#items").inner_text().count("alice") == 3
    page.select_option("select[name=as]", "alice")
    page.click("#who button")
    with page.expect_navigation():
        page.click("#start")
    assert (
        page.locator("#revealed").count() == 0
        and "shown once you have answered" in page.locator("#hidden").inner_text()
    )
    asked = page.locator("#asked").inner_text()
    item = int(asked.removeprefix("q"))
    page.check("input[name='verdict:f1'][value=pass]")
    page.check("input[name='verdict:mentions'][value=fail]")
    page.fill("input[name=comment]", "not what was asked")
    with page.expect_navigation():
        page.click("#answer button[type=submit]")
    revealed = page.locator("#revealed").inner_text()
    assert "mentions" in revealed and ("fail" if item % 3 == 0 else "pass") in revealed
    page.screenshot(path=str(tmp_path / "review-item.png"), full_page=True)
    # Changing one's mind adds a label; the newest counts, the first is kept.
    page.check("input[name='verdict:mentions'][value=pass]")
    with page.expect_navigation():
        page.click("#answer button[type=submit]")
    queue_id = page.url.split("/ui/reviews/")[1].split("/")[0]
    labels = [label for label in served.store.labels_of(None, queue_id=queue_id) if label["criterion"] == "mentions"]
    assert [label["label"] for label in labels] == ["fail", "pass"] and {label["annotator"] for label in labels} == {
        "alice"
    }
    assert human_verdicts(served.store, served.store.get_run(run.id))["mentions"] == {
        item: {"passed": True, "score": None, "annotators": ["alice"]}
    }
    # Every item of alice's, answered as the judge did: the queue page then shows the agreement.
    while page.locator("#next").count():
        with page.expect_navigation():  # count() does not wait: it would read the page being left
            page.click("#next")
        if page.locator("#revealed").count():
            continue
        wrong = int(page.locator("#asked").inner_text().removeprefix("q")) % 3 == 0
        page.check("input[name='verdict:f1'][value=pass]")
        page.check(f"input[name='verdict:mentions'][value={'fail' if wrong else 'pass'}]")
        with page.expect_navigation():
            page.click("#answer button[type=submit]")
    page.goto(f"{served.url}/ui/reviews/{queue_id}?as=alice")
    assert "nothing left for alice" in page.locator("#who").inner_text()
    assert page.locator("#agreement tr").count() >= 2
    page.screenshot(path=str(tmp_path / "review-queue.png"), full_page=True)
    shown = assay("judges", "agreement", run.id, "--json", store=served.store, home=tmp_path)
    figures = {f["criterion"]: f for f in json.loads(shown)}
    assert figures["mentions"]["n"] == 3 and figures["f1"]["n"] == 3  # alice's three items


def test_a_pairwise_queue_shows_both_outputs_and_records_the_preference(served, browser, tmp_path):
    client = served.client()
    first = run_of(client, capitals(4), "first")
    second = run_of(client, [dict(r, response="Paris, of course") for r in capitals(4)], "second")
    page = browser.new_page()
    page.goto(f"{served.url}/ui/runs/{first.id}")
    page.click("#review-form summary")
    page.fill("input[name=against]", second.id)
    page.click("#review-form button[type=submit]")
    page.wait_for_url("**/ui/reviews/queue_*")
    page.fill("input[name=as]", "dana")
    page.click("#who button")
    page.click("#start")
    sides = page.locator("#sides .side")
    assert sides.count() == 2
    texts = sides.all_inner_texts()
    assert any("Paris, of course" in t for t in texts)
    page.screenshot(path=str(tmp_path / "review-pairwise.png"), full_page=True)
    better = 0 if "Paris, of course" in texts[0] else 1
    page.locator("input[name='verdict:preference']").nth(better).check()
    with page.expect_navigation():
        page.click("#answer button[type=submit]")
    queue_id = page.url.split("/ui/reviews/")[1].split("/")[0]
    (label,) = served.store.labels_of(None, queue_id=queue_id)
    assert label["criterion"] == "preference" and label["label"] == second.id and label["annotator"] == "dana"
    revealed = page.locator("#revealed").inner_text()
    assert first.id in revealed and second.id in revealed and "mentions" in revealed
    page.screenshot(path=str(tmp_path / "review-pairwise-answered.png"), full_page=True)


def test_an_answer_the_queue_does_not_ask_for_is_refused(served):
    import urllib.error
    import urllib.parse
    import urllib.request

    from assay.review.queues import create_queue

    client = served.client()
    run = run_of(client, capitals(2))
    queue = create_queue(served.store, "default", run.id, criteria=["mentions"])
    token = ui_form_token(f"{served.url}/ui/reviews/{queue['id']}/items/0?as=eve")
    form = urllib.parse.urlencode({"reviewer": "eve", "verdict:mentions": "maybe", "csrf": token}).encode()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{served.url}/ui/reviews/{queue['id']}/items/0", data=form)  # noqa: S310 - loopback
    assert refused.value.code == 400 and "'maybe' is not one of fail, pass" in html.unescape(
        refused.value.read().decode()
    )
    assert served.store.labels_of(None, queue_id=queue["id"]) == []


@pytest.mark.parametrize(
    ("body", "content_type", "status", "said"),
    [
        (b"\xff\xff\xff", "application/x-protobuf", 400, "not an OTLP ExportLogsServiceRequest"),
        (b"[1, 2]", "application/json", 400, "expected {resourceLogs: [...]}"),
        (b"{}", "text/plain", 415, "is not OTLP"),
    ],
)
def test_a_logs_body_that_is_not_otlp_is_refused_naming_why(served, body, content_type, status, said):
    import urllib.error
    import urllib.request

    sent = urllib.request.Request(f"{served.url}/v1/logs", data=body, headers={"content-type": content_type})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(sent)  # noqa: S310 - loopback
    assert refused.value.code == status and said in refused.value.read().decode(errors="replace")
