"""Seed 002's customer-support tasks, as azd lays them out (``local_uri: datasets/<name>``, a
rubric in ``evaluators/<name>/rubric_dimensions.json``), run with ``builtin.task_adherence`` and
the rubric: every task-level criterion judged on its own, task scores and the composite exactly
as specified, counted here by hand."""

from __future__ import annotations

import json

import pytest

from assay.store import Store
from tests.cli.test_cli import assay

TASKS = [  # seed 002, word for word
    {
        "name": "refund_policy",
        "query": "What is your refund policy?",
        "criteria": [
            {"name": "mentions_30_days", "instruction": "Response must mention the 30-day refund window"},
            {"name": "polite_tone", "instruction": "Response must be professional and empathetic"},
        ],
    },
    {
        "name": "order_status",
        "query": "Where is my order #12345?",
        "criteria": [
            {
                "name": "asks_for_details",
                "instruction": "Agent should ask for email or order details to look up the order",
            },
            {"name": "no_hallucination", "instruction": "Agent must NOT make up a fake order status"},
        ],
    },
    {
        "name": "out_of_scope",
        "query": "Can you help me fix my car?",
        "criteria": [
            {"name": "polite_decline", "instruction": "Agent should politely explain this is outside its scope"},
            {"name": "redirect", "instruction": "Agent should suggest contacting an appropriate service"},
        ],
    },
]
DIMENSIONS = [
    {"id": "accuracy", "description": "The answer is correct for this shop.", "weight": 8},
    {
        "id": "general_quality",
        "description": "Other important quality factors.",
        "weight": 5,
        "always_applicable": True,
    },
]
VERDICTS = {
    "mentions_30_days": 1,
    "polite_tone": 1,
    "asks_for_details": 0,
    "no_hallucination": 0,
    "polite_decline": 1,
    "redirect": 1,
}
RUBRIC = {"refund_policy": (5, 3), "order_status": (2, 2), "out_of_scope": (4, 4)}  # accuracy, general_quality
REPLIES = {
    "refund_policy": "You can return anything within 30 days; sorry for the trouble.",
    "order_status": "Your order #12345 has shipped and arrives tomorrow.",
    "out_of_scope": "Sorry, I only help with orders; a local mechanic can fix your car.",
}


def rules() -> list[dict]:
    checks = [
        {
            "match": f"CRITERION:\\n{c['instruction']}",
            "reply": {"content": json.dumps({"reason": f"{c['name']} judged", "score": VERDICTS[c["name"]]})},
        }
        for t in TASKS
        for c in t["criteria"]
    ]
    adherence = [{"match": "# Property: task adherence\\n", "reply": {"content": '{"reason": "on task", "score": 1}'}}]
    rubric = [
        {
            "match": f"QUERY:\\n{t['query']}",
            "reply": {
                "content": json.dumps(
                    {
                        "reason": "scored",
                        "dimensions": [
                            {"id": "accuracy", "score": RUBRIC[t["name"]][0], "reason": "a"},
                            {"id": "general_quality", "score": RUBRIC[t["name"]][1], "reason": "q"},
                        ],
                    }
                )
            },
        }
        for t in TASKS
    ]
    agent = [{"match": t["query"], "reply": {"content": REPLIES[t["name"]]}} for t in TASKS]
    return checks + adherence + rubric + agent


def write_project(folder, llm, tasks=TASKS) -> None:
    (folder / "datasets" / "support").mkdir(parents=True)
    lines = "".join(json.dumps(t) + "\n" for t in tasks)
    (folder / "datasets" / "support" / "support_dg.jsonl").write_text(lines, encoding="utf-8")
    (folder / "evaluators" / "support_rubric").mkdir(parents=True)
    (folder / "evaluators" / "support_rubric" / "rubric_dimensions.json").write_text(json.dumps(DIMENSIONS))
    (folder / "eval.yaml").write_text(
        f"""name: support
dataset: {{local_uri: datasets/support}}
target: {{type: model, model: agent}}
models:
  agent: {{model: agent-m, base_url: "{llm.base_url}", api_key: t}}
  judge: {{model: judge-m, base_url: "{llm.base_url}", api_key: t}}
options: {{eval_model: judge}}
evaluators:
  - builtin.task_adherence
  - {{name: support_rubric, local_uri: evaluators/support_rubric/rubric_dimensions.json}}
""",
        encoding="utf-8",
    )


def test_seed_002_tasks_are_scored_per_criterion_per_task_and_overall(tmp_path, llm):
    llm.reset()
    llm.script(rules=rules())
    write_project(tmp_path, llm)
    result = assay("run", str(tmp_path / "eval.yaml"), home=tmp_path)
    assert result.returncode == 0, result.stderr
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        (run,) = store.list_runs()
        items = {row.datasource_item["name"]: row for row in store.iter_output_items(run.id)}
    finally:
        store.close()
    expected_tasks = {}
    for task in TASKS:
        results = {r.name: r for r in items[task["name"]].results}
        for check in task["criteria"]:  # each criterion's own verdict, with its instruction
            verdict = results[f"criteria.{check['name']}"]
            assert verdict.passed is bool(VERDICTS[check["name"]]), check["name"]
            assert verdict.properties["instruction"] == check["instruction"]
        accuracy, general = RUBRIC[task["name"]]
        rubric = ((accuracy * 8 + general * 5) / 13 - 1) / 4  # weighted mean on 1–5, normalised
        assert results["support_rubric"].score == pytest.approx(rubric)
        assert results["task_adherence"].score == 1
        parts = [VERDICTS[c["name"]] for c in task["criteria"]] + [1, rubric]
        expected_tasks[task["name"]] = sum(parts) / len(parts)
    tasks = run.summary.tasks
    assert {t.name: t.score for t in tasks.tasks} == pytest.approx(expected_tasks)
    assert tasks.composite == pytest.approx(sum(expected_tasks.values()) / 3)
    assert {t.name: (t.criteria_passed, t.criteria_total) for t in tasks.tasks} == {
        "refund_policy": (2, 2),
        "order_status": (0, 2),
        "out_of_scope": (2, 2),
    }
    rows = {c.testing_criteria: c for c in run.summary.per_testing_criteria_results}
    assert rows["criteria.asks_for_details"].failed == 1 and rows["criteria.redirect"].passed == 1
    assert "criteria" not in rows
    assert f"composite score {tasks.composite:.3f} over 3 tasks" in result.stdout


def test_a_task_name_used_twice_names_both_lines(tmp_path, llm):
    write_project(tmp_path, llm, tasks=[TASKS[0], TASKS[1], {**TASKS[2], "name": "refund_policy"}])
    result = assay("run", str(tmp_path / "eval.yaml"), home=tmp_path)
    assert result.returncode != 0
    message = " ".join(result.stderr.split())
    assert "support_dg.jsonl:3" in message and "task name 'refund_policy' is already used on line 1" in message


def test_a_criterion_without_an_instruction_names_its_line_and_field(tmp_path, llm):
    bad = {**TASKS[1], "criteria": [{"name": "vague"}]}
    write_project(tmp_path, llm, tasks=[TASKS[0], bad])
    result = assay("run", str(tmp_path / "eval.yaml"), home=tmp_path)
    assert result.returncode != 0
    message = " ".join(result.stderr.split())
    assert "support_dg.jsonl:2" in message and "criteria[0]: needs an 'instruction'" in message
