"""One eval, two doors: the testing criteria of an eval.yaml, pasted into a `/v1/evals` body,
judge the same `{item, sample}` rows to the same results through `assay run` and through the API
(no target either way: the rows carry their samples)."""

from __future__ import annotations

import json

import yaml

from tests.api.conftest import wait_for
from tests.cli.test_cli import assay

ROWS = [
    {"item": {"question": "2+2?", "answer": "4"}, "sample": {"output_text": "4"}},
    {"item": {"question": "3+3?", "answer": "6"}, "sample": {"output_text": "7"}},
    {"item": {"question": "capital of France?", "answer": "Paris"}, "sample": {"output_text": "paris"}},
]
CRITERIA = """
- type: string_check
  name: exact
  input: "{{sample.output_text}}"
  reference: "{{item.answer}}"
  operation: eq
- type: text_similarity
  name: similar
  input: "{{sample.output_text}}"
  reference: "{{item.answer}}"
  evaluation_metric: fuzzy_match
  pass_threshold: 0.7
- type: python
  name: py
  source: |
    def grade(sample, item):
        return 1.0 if sample["output_text"].lower() == item["answer"].lower() else 0.0
  pass_threshold: 0.5
- type: multi
  name: both
  graders:
    a: {type: string_check, name: a, input: "{{sample.output_text}}", reference: "{{item.answer}}", operation: ilike}
    b: {type: text_similarity, name: b, input: "{{sample.output_text}}", reference: "{{item.answer}}", evaluation_metric: fuzzy_match, pass_threshold: 0.5}
  calculate_output: "(a + b) / 2"
  pass_threshold: 0.75
- type: label_model
  name: labelled
  model: judge
  input: [{role: user, content: "Is {{sample.output_text}} right for {{item.question}}?"}]
  labels: [right, wrong]
  passing_labels: [right]
- type: score_model
  name: scored
  model: judge
  input: [{role: user, content: "Score {{sample.output_text}} for {{item.question}}."}]
  range: [0, 1]
  pass_threshold: 0.5
"""


def verdicts(items: list[dict]) -> dict[int, dict[str, tuple]]:
    return {
        item["datasource_item_id"]: {r["name"]: (r["passed"], round(r["score"], 6)) for r in item["results"]}
        for item in items
    }


def test_eval_yaml_and_the_evals_api_grade_alike(tmp_path, served, llm):
    llm.script(
        rules=[
            {"match": "Is 4 right", "reply": {"content": '{"label": "right"}'}},
            {"match": "Is paris right", "reply": {"content": '{"label": "right"}'}},
            {"match": "Score 4 ", "reply": {"content": '{"steps": [], "result": 0.9}'}},
            {"match": "Score 7 ", "reply": {"content": '{"steps": [], "result": 0.1}'}},
            {"match": "Score paris ", "reply": {"content": '{"steps": [], "result": 0.6}'}},
        ],
        default={"content": '{"label": "wrong"}'},
    )
    criteria = yaml.safe_load(CRITERIA)
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: one door\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  judge: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n"
        + yaml.safe_dump({"evaluators": criteria}, sort_keys=False)
    )
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = done.stdout.split("run id: ")[1].split()[0]
    local = verdicts(
        [json.loads(line) for line in assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()]
    )

    client = served.client()
    created = client.evals.create(
        name="one door",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}, "include_sample_schema": True},
        testing_criteria=criteria,
    )
    run = client.evals.runs.create(
        eval_id=created.id, data_source={"type": "jsonl", "source": {"type": "file_content", "content": ROWS}}
    )
    finished = wait_for(client, created.id, run.id)
    assert finished.status == "completed", finished.error
    pages = client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)
    served_items = [item.model_dump() for item in pages]
    assert verdicts(served_items) == local
    assert local[0]["exact"] == (True, 1.0) and local[1]["scored"] == (False, 0.1) and local[2]["labelled"][0] is True
    assert {name for name in local[0]} == {c["name"] for c in criteria}
