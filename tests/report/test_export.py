"""``assay report``: the HTML file opens offline in Chromium and shows the run, the JUnit file is
valid against the JUnit XSD with one testcase per item × criterion, the Markdown compares with a
baseline; run ids are taken by prefix."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from lxml import etree

from assay.dataset import Dataset
from assay.evaluators import load_catalog
from assay.report.export import junit_report, markdown_report
from assay.run import EvalDefinition, finish_run, prepare, start
from assay.store import Store
from tests.cli.test_cli import assay

XSD = Path(__file__).resolve().parents[1] / "fixtures" / "junit-10.xsd"
CRITERIA = [
    {
        "type": "string_check",
        "name": "exact",
        "input": "{{item.response}}",
        "reference": "{{item.ground_truth}}",
        "operation": "eq",
    },
    {"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"},
    {
        "type": "azure_ai_evaluator",
        "name": "needs_context",
        "evaluator_name": "builtin.f1_score",
        "data_mapping": {"response": "{{item.response}}", "ground_truth": "{{item.context}}"},
    },
]


def make_run(store: Store, passing: set[int], items: int = 12) -> str:
    rows = [
        {
            "query": f"Where is the <b>capital</b> | number {i}?",
            "response": "Paris" if i in passing else "Lyon",
            "ground_truth": "Paris",
            **({"context": "Paris"} if i % 4 else {}),
        }
        for i in range(items)
    ]
    prepared = prepare(EvalDefinition("capitals", CRITERIA), Dataset.from_content(rows), load_catalog())
    return str(finish_run(prepared, start(prepared, store), store).run.id)


@pytest.fixture
def home(tmp_path):
    """An ASSAY_HOME whose store holds two runs: 9 of 12 passing, then 6 of 12."""
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        before = make_run(store, set(range(9)))
        after = make_run(store, set(range(6)))
    finally:
        store.close()
    return tmp_path, before, after


def test_junit_is_valid_and_has_a_testcase_per_item_and_criterion(home):
    tmp_path, _, run = home
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        text = junit_report(store, run)
    finally:
        store.close()
    document = etree.fromstring(text.encode())
    schema = etree.XMLSchema(etree.parse(str(XSD)))
    assert schema.validate(document), schema.error_log
    suites = {s.get("name"): s for s in document.findall("testsuite")}
    assert sorted(suites) == ["exact", "f1", "needs_context"]
    assert [len(s.findall("testcase")) for s in suites.values()] == [12, 12, 12]
    exact = suites["exact"]
    assert (exact.get("tests"), exact.get("failures"), exact.get("errors")) == ("12", "6", "0")
    failed = [c for c in exact.findall("testcase") if c.find("failure") is not None]
    assert failed[0].get("name") == "item 6: Where is the <b>capital</b> | number 6?"
    assert failed[0].find("failure").get("message") == "score 0 against threshold 1.0"
    # The items without a context cannot be scored by needs_context: errors with the reason, not failures.
    errors = [c.find("error") for c in suites["needs_context"].findall("testcase") if c.find("error") is not None]
    assert len(errors) == 3 and all("context" in e.get("message") for e in errors)
    assert document.get("tests") == "36"


def test_markdown_compares_with_the_baseline_and_lists_the_flips(home):
    tmp_path, before, after = home
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        alone = markdown_report(store, after)
        compared = markdown_report(store, after, before)
    finally:
        store.close()
    assert "| exact | 50% [" in alone and "6 / 6 / 0" in alone
    assert "Against" not in alone
    assert f"**Against `{before}`**" in compared
    assert "| exact | 12 | 75% | 50% | -25.0 [" in compared
    assert "8 verdicts went from pass to fail" in compared  # items 6-8 on exact and f1, 6-7 on needs_context
    assert "- exact, item 6" in compared and "- exact, item 8" in compared
    assert "\\|" in markdown_report_cell_check()


def markdown_report_cell_check() -> str:
    from assay.report.export import _cell

    return _cell("a | b\nc")


def test_the_command_writes_the_files_and_takes_an_id_prefix(home):
    tmp_path, before, after = home
    html, junit = tmp_path / "out" / "report.html", tmp_path / "out" / "junit.xml"
    prefix = after.removeprefix("evalrun_")[:6]
    result = assay(
        "report",
        prefix,
        "--html",
        str(html),
        "--junit",
        str(junit),
        "--markdown",
        "-",
        "--baseline",
        before,
        home=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert f"run `{after}`" in result.stdout and "wrote" in result.stdout
    page = html.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and junit.exists()
    # --baseline reaches the HTML report too: the comparison's table and its chart.
    assert f"<h2>Against {before}</h2>" in page and "<td>exact</td><td>12</td><td>75%</td><td>50%</td>" in page
    ambiguous = assay("report", "", "--junit", str(junit), home=tmp_path)
    assert ambiguous.returncode == 2 and "is the start of several run ids" in ambiguous.stderr
    missing = assay("report", "evalrun_ffff", "--junit", str(junit), home=tmp_path)
    assert missing.returncode == 2 and "no run with id 'evalrun_ffff'" in missing.stderr
    nothing = assay("report", after, home=tmp_path)
    assert nothing.returncode == 2 and "say what to write" in nothing.stderr


def test_the_html_report_opens_offline_and_shows_the_run(home, browser):
    tmp_path, _, run = home
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        from assay.report.export import html_report

        path = tmp_path / "report.html"
        path.write_text(html_report(store, run), encoding="utf-8")
    finally:
        store.close()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    asked: list[str] = []

    def offline(route):  # anything but the file itself would be a request to the network
        asked.append(route.request.url)
        route.abort() if not route.request.url.startswith("file:") else route.continue_()

    page.route("**/*", offline)
    page.goto(path.as_uri())
    assert asked == [path.as_uri()]
    counts = page.inner_text("#counts")
    assert "12 items" in counts and "4 passed" in counts and "2 errored" in counts
    assert page.locator("svg.pass-rates rect.bar").count() >= 1  # its criteria pass or fail: rates, no histogram
    assert page.locator("#items tr.item").count() == 12
    assert page.inner_text("#shown") == "12 of 12 items"
    page.select_option("#status", "fail")
    assert page.inner_text("#shown") == "6 of 12 items"
    page.select_option("#status", "")
    page.fill("#search", "number 11")
    assert page.inner_text("#shown") == "1 of 12 items"
    configuration = json.loads(page.inner_text("#configuration"))
    assert [c["name"] for c in configuration["eval"]["testing_criteria"]] == ["exact", "f1", "needs_context"]
    shot = page.screenshot(full_page=True)
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000
    (tmp_path / "report.png").write_bytes(shot)
    with sqlite3.connect(tmp_path / "assay.db") as conn:  # the report only read the store
        assert conn.execute("select count(*) from runs").fetchone()[0] == 2
