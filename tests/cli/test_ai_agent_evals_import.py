"""microsoft/ai-agent-evals' data file, imported and run: its ``data_mapping`` (evaluator input →
dataset column), ``evaluator_parameters`` and ``openai_graders``, the queries answered by a model
first as the action has its agent answer them."""

from __future__ import annotations

import json

from tests.cli.test_cli import assay

DATA = {
    "name": "dataset-with-custom-mappings",
    "evaluators": ["builtin.f1_score", "builtin.string_check", "builtin.text_similarity"],
    "evaluator_parameters": {"builtin.f1_score": {"threshold": 0.6}},
    "openai_graders": {
        "builtin.string_check": {"input": "{{sample.output_text}}", "operation": "ilike", "reference": "MACHINE"},
        "builtin.text_similarity": {
            "evaluation_metric": "fuzzy_match",
            "input": "{{sample.output_text}}",
            "reference": "{{item.expected_answer}}",
            "pass_threshold": 0.8,
        },
    },
    "data_mapping": {"query": "user_question", "ground_truth": "expected_answer"},
    "data": [
        {
            "user_question": "What is machine learning?",
            "expected_answer": "Machine learning learns patterns from data.",
        },
        {"user_question": "What is recursion?", "expected_answer": "Recursion is a function calling itself."},
    ],
}


def test_the_actions_data_file_runs_with_its_mappings_and_graders(tmp_path, llm):
    llm.reset()
    llm.script(
        rules=[{"match": "machine learning", "reply": {"content": "Machine learning learns patterns from data."}}],
        default={"content": "I do not know."},
    )
    (tmp_path / "data.json").write_text(json.dumps(DATA))
    env = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "t"}
    imported = assay(
        "import",
        "ai-agent-evals",
        str(tmp_path / "data.json"),
        "--out",
        str(tmp_path / "out"),
        "--model",
        "bot",
        home=tmp_path,
    )
    assert imported.returncode == 0, imported.stderr
    ran = assay("run", str(tmp_path / "out" / "eval.yaml"), home=tmp_path, env_extra=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    run_id = next(line.split()[-1] for line in ran.stdout.splitlines() if line.startswith("run id:"))
    rows = [json.loads(line) for line in assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()]
    verdicts = [{r["name"]: r["passed"] for r in row["results"]} for row in rows]
    assert verdicts == [
        {"f1_score": True, "string_check": True, "text_similarity": True},
        {"f1_score": False, "string_check": False, "text_similarity": False},
    ]
    assert rows[0]["results"][0]["threshold"] == 0.6  # evaluator_parameters' threshold
    assert "What is machine learning?" in json.dumps(rows[0]["sample"]["input"])  # the mapped query column


def test_a_data_file_without_rows_names_the_key(tmp_path):
    (tmp_path / "data.json").write_text(json.dumps({**DATA, "data": []}))
    done = assay("import", "ai-agent-evals", str(tmp_path / "data.json"), "--model", "bot", home=tmp_path)
    assert done.returncode != 0 and "data: expected a non-empty list of rows" in done.stderr
