"""Foundry's evaluator catalog REST."""

from __future__ import annotations

import json
import urllib.error
import urllib.request


def call(url, body=None, key=None):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", **({"api-key": key} if key else {})}
    request = urllib.request.Request(url, data=data, headers=headers)
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
    request = urllib.request.Request(
        f"{url}/1",
        data=json.dumps({"type": "uri_file", "dataUri": uploaded.id}).encode(),
        headers={"Content-Type": "application/json"},
        method="PUT",
    )
    with urllib.request.urlopen(request) as response:
        created = json.loads(response.read())
    assert (created["name"], created["version"], created["dataUri"]) == ("support-qa", "1", uploaded.id)
    assert call(f"{url}/1")["dataUri"] == uploaded.id
    assert [v["version"] for v in call(url)["value"]] == ["1"]


def test_a_projects_custom_evaluators_are_its_own(served):
    """Posted under one project's key: listed, versioned and usable there, absent from another's."""
    import openai
    import pytest

    from tests.api.conftest import wait_for
    from tests.api.test_evals_api import ROWS, make_eval

    alpha, beta = served.store.create_key("alpha"), served.store.create_key("beta")
    prompt = 'Is the answer {{response}} a capital city? Reply with JSON: {"score": 1 to 5, "reason": "..."}'
    posted = call(
        f"{served.url}/api/projects/alpha/evaluators/capital_check/versions",
        {"definition": {"type": "prompt", "prompt_text": prompt}},
        key=alpha,
    )
    assert posted["version"] == "1"

    def names(key: str, project: str) -> set[str]:
        return {e["name"] for e in call(f"{served.url}/api/projects/{project}/evaluators", key=key)["value"]}

    assert "capital_check" in names(alpha, "alpha") and "capital_check" not in names(beta, "beta")
    with pytest.raises(urllib.error.HTTPError) as missing:
        call(f"{served.url}/api/projects/beta/evaluators/capital_check/versions", key=beta)
    assert missing.value.code == 404
    missing.value.close()
    criteria = [
        {
            "type": "azure_ai_evaluator",
            "name": "capital",
            "evaluator_name": "capital_check",
            "initialization_parameters": {"deployment_name": "judge"},
        }
    ]
    with pytest.raises(openai.BadRequestError, match="capital_check"):
        make_eval(served.client(beta), criteria=criteria)
    a = served.client(alpha)
    created = make_eval(a, criteria=criteria)
    run = a.evals.runs.create(
        eval_id=created.id,
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in ROWS]}},
    )
    finished = wait_for(a, created.id, run.id)
    assert finished.status == "completed" and finished.result_counts.errored == 0
