"""Insights in the web UI (Chromium): the list, a cluster insight's page with its clusters'
suggestions and samples linked to their items, a comparison's table, and the CSV export."""

from __future__ import annotations

import csv
import io
import urllib.request

from assay.api.insights import accept
from tests.api.conftest import wait_for
from tests.api.test_evals_api import make_eval
from tests.support.fixtures import poll

CRITERIA = [
    {
        "type": "string_check",
        "name": "mentions",
        "input": "{{item.response}}",
        "reference": "{{item.ground_truth}}",
        "operation": "ilike",
    }
]


def generate(served, body):
    """The insight, once a worker has made it."""
    made = accept(served.app_state, "default", body)
    ended = poll(lambda: served.store.get_insight("default", made["id"]), lambda i: i["state"] != "Running", seconds=60)
    assert ended["state"] == "Succeeded", ended
    return ended


def test_an_insight_page_shows_clusters_with_linked_samples_and_exports_csv(served, browser, tmp_path):
    client = served.client()
    created = make_eval(client, criteria=CRITERIA)
    texts = ["no tracking number given"] * 5 + ["rude reply to the customer"] * 4 + ["Paris"] * 3
    rows = [{"query": f"q{i}", "response": t, "ground_truth": "Paris"} for i, t in enumerate(texts)]
    runs = []
    for content in (rows, [dict(r, response="Paris") for r in rows]):
        source = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in content]}}
        runs.append(wait_for(client, created.id, client.evals.runs.create(eval_id=created.id, data_source=source).id))
    request = {"type": "EvaluationRunClusterInsight", "evalId": created.id, "runIds": [runs[0].id]}
    clustered = generate(served, {"displayName": "why it fails", "request": request})
    comparison = {
        "type": "EvaluationComparison",
        "evalId": created.id,
        "baselineRunId": runs[0].id,
        "treatmentRunIds": [runs[1].id],
    }
    compared = generate(served, {"displayName": "the fix", "request": comparison})

    page = browser.new_page()
    page.goto(f"{served.url}/ui/insights")
    assert page.locator("#insights tr").count() == 3
    page.click("text=why it fails")
    page.wait_for_url(f"**/ui/insights/{clustered['id']}")
    page.wait_for_load_state()  # the click returns once the page is committed, not once it is read
    clusters = page.locator("section.cluster")
    assert clusters.count() == 2
    assert clusters.locator("table.samples tr").count() == 2 + 9  # a header each, and the nine failures
    assert page.locator("svg.chart").count() == 1
    page.screenshot(path=str(tmp_path / "insight.png"), full_page=True)
    page.locator("table.samples a").first.click()
    page.wait_for_url(f"**/ui/runs/{runs[0].id}/items/*")
    assert page.locator("h1").inner_text().startswith("Item")

    with urllib.request.urlopen(f"{served.url}/ui/insights/{clustered['id']}/export.csv") as answer:  # noqa: S310
        assert answer.headers["content-type"].startswith("text/csv")
        exported = list(csv.DictReader(io.StringIO(answer.read().decode())))
    assert len(exported) == 9 and {r["run_id"] for r in exported} == {runs[0].id}
    assert {r["criterion"] for r in exported} == {"mentions"} and len({r["cluster_id"] for r in exported}) == 2

    page.goto(f"{served.url}/ui/insights/{compared['id']}")
    assert "Improved" in page.locator("#comparisons").inner_text()
    with urllib.request.urlopen(f"{served.url}/ui/insights/{compared['id']}/export.csv") as answer:  # noqa: S310
        (row,) = list(csv.DictReader(io.StringIO(answer.read().decode())))
    assert row["effect"] == "Improved" and float(row["delta"]) == 0.75
