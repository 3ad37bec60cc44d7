"""Custom evaluators: rubric files, prompt files, code files, versions, and eval.yaml local_uri."""

from __future__ import annotations

import json

import pytest

from assay.errors import ConfigError
from assay.evaluators.custom import spec_from_file
from tests.cli.test_cli import assay

DIMENSIONS = [
    {"id": "accuracy", "description": "States the right refund window", "weight": 8, "always_applicable": True},
    {"id": "tone", "description": "Polite and empathetic", "weight": 4},
    {"id": "next_steps", "description": "Says what to do next", "weight": 2},
]
ROW = {"query": "What is your refund policy?", "response": "30 days, full refund."}


def rubric_file(tmp_path, dimensions=DIMENSIONS):
    path = tmp_path / "rubric_dimensions.json"
    path.write_text(json.dumps(dimensions), encoding="utf-8")
    return path


def answer(**scores):
    return json.dumps(
        {
            "reason": "overall fine",
            "dimensions": [{"id": k, "score": v, "reason": f"{k} ok"} for k, v in scores.items()],
        }
    )


@pytest.mark.parametrize(
    "scores, expected, passed",
    [
        ({"accuracy": 5, "tone": 4, "next_steps": None}, ((5 * 8 + 4 * 4) / 12 - 1) / 4, True),
        ({"accuracy": 3, "tone": 3, "next_steps": 3}, 0.5, True),
        ({"accuracy": 5, "tone": 5, "next_steps": 1}, ((5 * 8 + 5 * 4 + 1 * 2) / 14 - 1) / 4, False),
        ({"accuracy": 2, "tone": 3, "next_steps": 2}, ((2 * 8 + 3 * 4 + 2 * 2) / 14 - 1) / 4, False),
    ],
)
def test_rubric_weighted_mean_normalised_and_any_one_fails(tmp_path, llm, models, store, scores, expected, passed):
    from assay.evaluators import load_catalog

    llm.script(default={"content": answer(**scores)})
    catalog = load_catalog()
    catalog.add(spec_from_file(rubric_file(tmp_path), "support_rubric", "1"))
    criteria = [
        {
            "type": "azure_ai_evaluator",
            "name": "rubric",
            "evaluator_name": "support_rubric",
            "initialization_parameters": {"model": "judge"},
        }
    ]
    from assay.dataset import Dataset
    from assay.run import EvalDefinition, finish_run, prepare, start

    prepared = prepare(EvalDefinition("r", criteria), Dataset.from_content([ROW]), catalog, models=models)
    outcome = finish_run(prepared, start(prepared, store), store)
    result = next(store.iter_output_items(outcome.run.id)).results[0]
    assert result.score == pytest.approx(expected) and result.passed is passed
    dimension_scores = {d["id"]: d for d in result.properties["dimension_scores"]}
    assert dimension_scores["accuracy"]["weight"] == 8
    assert dimension_scores["next_steps"]["applicable"] is (scores["next_steps"] is not None)


def test_rubric_file_errors_name_the_dimension(tmp_path):
    bad = [{"id": "Accuracy", "description": "x", "weight": 5}]
    with pytest.raises(ConfigError, match=r"dimension \[0\].id 'Accuracy' must be snake_case"):
        spec_from_file(rubric_file(tmp_path, bad), "r")
    with pytest.raises(ConfigError, match=r"dimension \[0\].weight"):
        spec_from_file(rubric_file(tmp_path, [{"id": "a", "description": "x", "weight": 11}]), "r")


def test_prompt_and_code_evaluators(tmp_path, llm, models, store):
    from assay.evaluators import load_catalog

    prompt = tmp_path / "polite.md"
    prompt.write_text("---\nscale: [1, 10]\nthreshold: 7\n---\nHow polite is this reply?\nReply: {{ response }}\n")
    code = tmp_path / "mentions.py"
    code.write_text(
        "THRESHOLD = 1.0\n\ndef evaluate(response: str, query: str) -> bool:\n    return '30' in response\n"
    )
    catalog = load_catalog()
    catalog.add(spec_from_file(prompt, "polite"))
    catalog.add(spec_from_file(code, "mentions_30"))
    llm.script(default={"content": '{"reason": "courteous", "score": 8}'})
    criteria = [
        {"type": "azure_ai_evaluator", "name": n, "evaluator_name": n, "initialization_parameters": {"model": "judge"}}
        for n in ("polite",)
    ] + [{"type": "azure_ai_evaluator", "name": "mentions_30", "evaluator_name": "mentions_30"}]
    from assay.dataset import Dataset
    from assay.run import EvalDefinition, finish_run, prepare, start

    prepared = prepare(EvalDefinition("c", criteria), Dataset.from_content([ROW]), catalog, models=models)
    outcome = finish_run(prepared, start(prepared, store), store)
    polite, mentions = next(store.iter_output_items(outcome.run.id)).results
    assert (polite.score, polite.passed, polite.threshold) == (8, True, 7)
    assert "Reply: 30 days, full refund." in llm.stats()["last"]["messages"][0]["content"]
    assert (mentions.score, mentions.passed) == (1.0, True)


def test_evaluators_add_versions_and_local_uri(tmp_path, llm):
    path = rubric_file(tmp_path)
    first = assay("evaluators", "add", "support_rubric", str(path), home=tmp_path, check=True)
    assert "registered support_rubric@1" in first.stdout
    again = assay("evaluators", "add", "support_rubric", str(path), home=tmp_path, check=True)
    assert "unchanged: support_rubric@1" in again.stdout
    path.write_text(json.dumps([*DIMENSIONS, {"id": "brevity", "description": "Short", "weight": 1}]))
    changed = assay("evaluators", "add", "support_rubric", str(path), home=tmp_path, check=True)
    assert "registered support_rubric@2" in changed.stdout
    listed = assay("evaluators", "list", home=tmp_path, check=True).stdout
    assert "support_rubric" in listed
    shown = json.loads(assay("evaluators", "show", "support_rubric@1", home=tmp_path, check=True).stdout)
    assert shown["version"] == "1" and "brevity" not in shown["description"]
    broken = tmp_path / "broken.json"
    broken.write_text("[{]")
    refused = assay("evaluators", "add", "x", str(broken), home=tmp_path)
    assert refused.returncode == 2 and "broken.json: not valid JSON" in refused.stderr

    (tmp_path / "qa.jsonl").write_text(json.dumps(ROW) + "\n")
    llm.reset()
    llm.script(default={"content": answer(accuracy=4, tone=4, next_steps=4)})
    (tmp_path / "eval.yaml").write_text(
        f"name: r\ndataset: {{local_uri: qa.jsonl}}\nmodels:\n  judge: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n"
        "evaluators:\n  - {name: support_rubric, version: 2}\n"
        "  - {name: local_rubric, local_uri: rubric_dimensions.json, initialization_parameters: {model: judge}}\n"
    )
    result = assay("run", str(tmp_path / "eval.yaml"), home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (
        "support_rubric" in result.stdout
        and "local_rubric" in result.stdout
        and "items: 1 total, 1 passed" in result.stdout
    )


def test_foundry_rubric_dimensions_with_dimension_id_and_fractional_weights():
    from assay.evaluators.custom.rubric import parse_dimensions

    text = json.dumps({"dimensions": [{"dimension_id": "accuracy", "description": "Right facts", "weight": 0.6}]})
    (dimension,) = parse_dimensions(text, "rubric.json")
    assert dimension.id == "accuracy" and dimension.weight == 0.6
    with pytest.raises(ConfigError, match=r"dimension \[0\].weight"):
        parse_dimensions(json.dumps([{"id": "a", "description": "x", "weight": 0}]), "rubric.json")
