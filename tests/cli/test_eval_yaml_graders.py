"""What one door accepts, every door accepts: OpenAI's graders (string_check, python, multi,
label_model) written in eval.yaml as the Evals API takes them, judging rows that carry their own
sample ({"item": ..., "sample": ...}) with no target (the API's side: tests/api/test_evals_api.py)."""

from __future__ import annotations

import json

from tests.cli.test_cli import assay

ROWS = [
    {"item": {"question": "2+2?", "answer": "4"}, "sample": {"output_text": "4"}},
    {"item": {"question": "3+3?", "answer": "6"}, "sample": {"output_text": "7"}},
]
EVAL_YAML = """name: graders
dataset: {{local_uri: data.jsonl}}
models:
  judge: {{model: m, base_url: '{base_url}', api_key: t}}
evaluators:
  - type: string_check
    name: exact
    input: "{{{{sample.output_text}}}}"
    reference: "{{{{item.answer}}}}"
    operation: eq
  - type: python
    name: py
    source: |
      def grade(sample, item):
          return 1.0 if sample["output_text"] == item["answer"] else 0.0
    pass_threshold: 0.5
  - type: multi
    name: both
    graders:
      a: {{type: string_check, name: a, input: "{{{{sample.output_text}}}}", reference: "{{{{item.answer}}}}", operation: eq}}
      b: {{type: text_similarity, name: b, input: "{{{{sample.output_text}}}}", reference: "{{{{item.answer}}}}",
          evaluation_metric: fuzzy_match, pass_threshold: 0.5}}
    calculate_output: "(a + b) / 2"
    pass_threshold: 0.75
  - type: label_model
    name: labelled
    model: judge
    input: [{{role: user, content: "Is {{{{sample.output_text}}}} right for {{{{item.question}}}}?"}}]
    labels: [right, wrong]
    passing_labels: [right]
"""


def test_openai_graders_in_eval_yaml_judge_rows_with_their_samples(tmp_path, llm):
    llm.reset()
    llm.script(
        rules=[{"match": "Is 4 right", "reply": {"content": '{"label": "right"}'}}],
        default={"content": '{"label": "wrong"}'},
    )
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    config = tmp_path / "eval.yaml"
    config.write_text(EVAL_YAML.format(base_url=llm.base_url))
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = done.stdout.split("run id: ")[1].split()[0]
    items = [json.loads(line) for line in assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()]
    verdicts = {i["datasource_item_id"]: {r["name"]: r["passed"] for r in i["results"]} for i in items}
    assert verdicts == {
        0: {"exact": True, "py": True, "both": True, "labelled": True},
        1: {"exact": False, "py": False, "both": False, "labelled": False},
    }


def test_a_misspelt_grader_key_in_eval_yaml_names_the_line_and_the_keys(tmp_path):
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: g\ndataset: {local_uri: data.jsonl}\nevaluators:\n"
        "  - {type: python, name: py, sorce: 'def grade(sample, item): return 1'}\n"
    )
    done = assay("run", config, home=tmp_path)
    assert done.returncode != 0
    assert "eval.yaml:4" in done.stderr and "'sorce'" in done.stderr and "source" in done.stderr
