"""A comparison through the API (``GET .../runs/{id}/compare?baseline=``) and on its web page."""

from __future__ import annotations

import httpx2 as httpx

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
