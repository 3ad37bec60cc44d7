import json

import pytest

import assay
from assay.errors import ConfigError


def test_public_names_are_pinned():
    assert assay.__all__ == sorted(assay.__all__)
    assert assay.__all__ == [
        "AssayError",
        "ConfigError",
        "DataError",
        "Dataset",
        "EvaluatorSpec",
        "ItemError",
        "Message",
        "Metric",
        "OutputItem",
        "Result",
        "RunSummary",
        "Score",
        "Store",
        "UserError",
        "evaluate",
        "evaluator",
        "load_catalog",
        "load_dataset",
        "normalize",
    ]


def test_evaluate_returns_the_peers_rows_and_metrics(tmp_path):
    data = tmp_path / "data.jsonl"
    rows = [
        {"question": "Capital of France?", "answer": "The capital of France is Paris.", "ground_truth": "Paris"},
        {"question": "Capital of Japan?", "answer": "Tokyo", "ground_truth": "Tokyo"},
        {"question": "Capital of Germany?", "answer": "I don't know.", "ground_truth": "Berlin"},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    @assay.evaluator(threshold=1.0)
    def exact(response: str, ground_truth: str) -> bool:
        return response.strip() == ground_truth.strip()

    result = assay.evaluate(
        data=str(data),
        evaluators={"f1": "builtin.f1_score", "exact": exact},
        evaluator_config={
            "default": {"column_mapping": {"response": "${data.answer}", "ground_truth": "${data.ground_truth}"}}
        },
        output_path=tmp_path,
    )
    first = result["rows"][0]
    assert first["inputs.question"] == "Capital of France?"
    assert round(first["outputs.f1.f1_score"], 4) == 0.3333
    assert first["outputs.f1.f1_score_result"] == "fail" and first["outputs.f1.f1_score_threshold"] == 0.5
    assert first["outputs.exact.exact"] == 0.0
    assert result["metrics"]["f1.f1_score"] == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert result["metrics"]["f1.binary_aggregate"] == 0.33
    assert result["metrics"]["exact.binary_aggregate"] == 0.33
    assert result["run"]["result_counts"]["total"] == 3 and result["run"]["status"] == "completed"
    assert json.loads((tmp_path / "evaluation_results.json").read_text())["metrics"] == result["metrics"]


def test_evaluate_refuses_mappings_the_peer_refuses():
    with pytest.raises(ConfigError, match=r"use \$\{data.<column>\}"):
        assay.evaluate(
            data=[{"a": "x"}],
            evaluators={"f1": "builtin.f1_score"},
            evaluator_config={"f1": {"column_mapping": {"response": "answer"}}},
        )


def test_load_dataset_streams_items(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"q": 1}\n{"q": 2}\n', encoding="utf-8")
    assert list(assay.load_dataset(str(path)).items()) == [{"q": 1}, {"q": 2}]


def test_evaluate_with_a_target_function_like_the_peer(tmp_path):
    def answer(query: str) -> dict:
        return {"response": "Paris" if "France" in query else "unsure", "context": "from the bot"}

    result = assay.evaluate(
        data=[
            {"query": "Capital of France?", "ground_truth": "Paris"},
            {"query": "Capital of Peru?", "ground_truth": "Lima"},
        ],
        target=answer,
        evaluators={"f1": "builtin.f1_score"},
        evaluator_config={
            "f1": {"column_mapping": {"response": "${target.response}", "ground_truth": "${data.ground_truth}"}}
        },
    )
    first, second = result["rows"]
    assert first["outputs.response"] == "Paris" and first["outputs.f1.f1_score"] == 1.0
    assert second["outputs.f1.f1_score"] == 0.0 and result["metrics"]["f1.binary_aggregate"] == 0.5


def test_an_evaluate_run_is_stored_where_the_cli_and_the_ui_look(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    data = [
        {"response": "paris france", "ground_truth": "paris france"},
        {"response": "paris berlin", "ground_truth": "paris france"},
        {"response": "tokyo", "ground_truth": "paris france"},
    ]
    result = assay.evaluate(data=data, evaluators={"f1": "builtin.f1_score"})
    from assay.store import Store
    from tests.cli.test_cli import assay as assay_cli

    store = Store()
    try:
        (run,) = store.list_runs()
        assert run.id == result["run"]["id"] == result.run_id and run.status == "completed"
        assert str(tmp_path / "home") in store.url
    finally:
        store.close()
    listed = assay_cli("runs", "list", home=tmp_path / "home", check=True).stdout
    assert result.run_id.removeprefix("evalrun_")[:8] in listed
    # The typed result and the peer's view are one run seen twice.
    scores = [item.results[0].score for item in result.output_items]
    assert [row["outputs.f1.f1_score"] for row in result["rows"]] == scores == [1.0, 0.5, 0.0]
    (f1,) = result.summary.per_testing_criteria_results
    assert result["metrics"]["f1.binary_aggregate"] == round(f1.passed / (f1.passed + f1.failed), 2) == 0.67
    assert result["metrics"]["f1.f1_score"] == pytest.approx(sum(scores) / 3)
    assert result["run"]["result_counts"] == result.summary.result_counts.model_dump()


def test_assay_evaluate_stays_the_function_whatever_was_imported_first():
    """Importing a module that uses the engine's evaluate (assay.azure) must not rebind
    ``assay.evaluate`` to a module, as a submodule of that name would."""
    import subprocess
    import sys

    probe = "import assay.azure, assay; assert callable(assay.evaluate), assay.evaluate; print('ok')"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr
