"""Foundry's evaluator catalog REST."""

from __future__ import annotations

import json
import urllib.error
import urllib.request


def call(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


def test_catalog_lists_builtins_with_levels_and_metrics(served):
    listed = call(f"{served.url}/api/projects/default/evaluators?api-version=v1&type=builtin")["value"]
    coherence = next(e for e in listed if e["name"] == "builtin.coherence")
    assert coherence["supported_evaluation_levels"] == ["conversation", "turn"]
    metric = coherence["definition"]["metrics"]["coherence"]
    assert (metric["min_value"], metric["max_value"], metric["threshold"], metric["desirable_direction"]) == (
        1,
        5,
        3,
        "increase",
    )
    assert all(e["evaluator_type"] == "builtin" for e in listed)


def test_custom_rubric_versions_through_rest(served):
    url = f"{served.url}/api/projects/default/evaluators/support_rubric/versions"
    dims = [{"id": "accuracy", "description": "Correct facts", "weight": 5}]
    first = call(url, {"definition": {"type": "rubric", "dimensions": dims}})
    second = call(
        url,
        {"definition": {"type": "rubric", "dimensions": [*dims, {"id": "tone", "description": "Kind", "weight": 2}]}},
    )
    assert (first["version"], second["version"]) == ("1", "2")
    assert [v["version"] for v in call(url)["value"]] == ["1", "2"]
    try:
        call(url, {"definition": {"type": "rubric", "dimensions": [{"id": "Bad Id", "description": "x", "weight": 5}]}})
        raise AssertionError("a broken rubric was accepted")
    except urllib.error.HTTPError as exc:
        assert exc.code == 400 and "snake_case" in json.loads(exc.read())["error"]["message"]


def test_datasets_by_name_and_version(served):
    import io

    client = served.client()
    uploaded = client.files.create(file=("qa.jsonl", io.BytesIO(b'{"query": "a"}\n')), purpose="evals")
    url = f"{served.url}/api/projects/default/datasets/support-qa/versions"
    request = urllib.request.Request(f"{url}/1", data=json.dumps({"type": "uri_file", "dataUri": uploaded.id}).encode(),
                                     headers={"Content-Type": "application/json"}, method="PUT")  # fmt: skip
    with urllib.request.urlopen(request) as response:
        created = json.loads(response.read())
    assert (created["name"], created["version"], created["dataUri"]) == ("support-qa", "1", uploaded.id)
    assert call(f"{url}/1")["dataUri"] == uploaded.id
    assert [v["version"] for v in call(url)["value"]] == ["1"]
