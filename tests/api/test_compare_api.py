"""A comparison through the API (``GET .../runs/{id}/compare?baseline=``) and on its web page."""

from __future__ import annotations

import httpx2 as httpx

from assay.store import tables
from tests.api.conftest import wait_for

EXACT = [
    {
        "type": "string_check",
        "name": "exact",
        "input": "{{item.response}}",
        "reference": "{{item.ground_truth}}",
        "operation": "eq",
    }
]
SCHEMA = {
    "type": "custom",
    "item_schema": {
        "type": "object",
        "properties": {"response": {"type": "string"}, "ground_truth": {"type": "string"}},
    },
}


def rows(passing: set[int]) -> list[dict]:
    return [{"item": {"response": "Paris" if i in passing else "Lyon", "ground_truth": "Paris"}} for i in range(200)]


def test_compare_in_the_api_and_the_ui(served, browser, tmp_path):
    client = served.client()
    created = client.evals.create(data_source_config=SCHEMA, testing_criteria=EXACT)
    runs = []
    for passing in (set(range(160)), set(range(130))):  # 80% then 65%
        source = {"type": "jsonl", "source": {"type": "file_content", "content": rows(passing)}}
        runs.append(wait_for(client, created.id, client.evals.runs.create(created.id, data_source=source).id))
    a, b = runs
    with httpx.Client(timeout=10) as http:
        found = http.get(f"{served.url}/v1/evals/{created.id}/runs/{b.id}/compare", params={"baseline": a.id}).json()
    (exact,) = found["criteria"]
    assert found["regression"] is True and exact["delta"] == -0.15 and len(exact["flipped"]) == 30
    page = browser.new_page()
    page.goto(f"{served.url}/ui/compare?a={a.id}&b={b.id}")
    assert "degraded" in page.locator("#comparison").inner_text()
    assert page.locator("#flips tr").count() == 31 and page.locator("svg.differences path.interval").count() == 1
    page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)


def test_the_compare_page_is_reached_from_the_runs_list_and_a_run_with_answers_side_by_side(served, browser, tmp_path):
    client = served.client()
    created = client.evals.create(data_source_config=SCHEMA, testing_criteria=EXACT)
    runs = []
    for passing in (set(range(16)), set(range(10))):
        source = {"type": "jsonl", "source": {"type": "file_content", "content": rows(passing)[:20]}}
        runs.append(wait_for(client, created.id, client.evals.runs.create(created.id, data_source=source).id))
    a, b = runs
    with served.store.engine.begin() as conn:  # timestamps are seconds: a is made the older beyond a tie
        conn.execute(
            tables.runs.update().where(tables.runs.c.id == a.id).values(created_at=tables.runs.c.created_at - 10)
        )
    page = browser.new_page()
    page.goto(f"{served.url}/ui")
    assert page.locator("#runs").inner_text().count(a.id) == 1  # a run without a name: its id, once
    for run in (b, a):  # ticked newest first: the older is still the baseline
        page.check(f"#runs input[value={run.id}]")
    page.click("#pick-two button")
    page.wait_for_url("**/ui/compare?**")
    assert page.locator("h1").inner_text() == f"Run {b.id} against {a.id}"
    flipped = page.locator("section.flipped")
    assert flipped.count() == 6  # items 10 to 15: Paris in A, Lyon in B
    first = flipped.first
    assert first.locator(".side").nth(0).locator(".answer").inner_text() == "Paris"
    assert first.locator(".side").nth(1).locator(".answer").inner_text() == "Lyon"
    page.screenshot(path=str(tmp_path / "compare-side-by-side.png"), full_page=True)
    page.locator("#flips a").first.click()
    assert page.url.endswith("#item-10")
    first.locator(".side").nth(1).locator("a").click()
    page.wait_for_url(f"**/ui/runs/{b.id}/items/10")

    # From a run's page: its header, and a baseline named by a short id.
    page.goto(f"{served.url}/ui/runs/{b.id.removeprefix('evalrun_')[:10]}")
    header = page.locator("#run-header").inner_text()
    assert b.id in header and created.id in header and "jsonl" in header
    page.click("#only-failed")  # the filters start at the top of the page
    assert page.locator("#matching").inner_text().startswith("10 matching")
    page.fill("#compare-with input[name=a]", a.id.removeprefix("evalrun_")[:8])
    page.click("#compare-with button")
    page.wait_for_url("**/ui/compare?**")  # count() does not wait: the page must have loaded
    assert page.locator("section.flipped").count() == 6
    with httpx.Client(timeout=10) as http:
        exported = http.get(f"{served.url}/ui/runs/{b.id}/export.jsonl").text.splitlines()
        report = http.get(f"{served.url}/ui/runs/{b.id}/report.html")
    assert len(exported) == 20 and report.status_code == 200 and "<svg" in report.text
