"""openai/evals registry files (tests/fixtures/openai_evals_registry: files from the openai/evals
repository as published) imported as assay evals and run: each verdict is the one the eval class
gives (Match: the answer starts with an ideal; Includes: contains one; FuzzyMatch: normalised
containment, and token F1). The registry's samples are Git LFS files the repository does not carry,
so the samples here are written in its documented format."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

from tests.cli.test_cli import assay

REGISTRY = Path(__file__).resolve().parents[1] / "fixtures" / "openai_evals_registry"


def chat(question: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": question}]


CAPITALS = [
    {"input": chat("What is the capital of France?"), "ideal": ["Paris", "paris"]},
    {"input": chat("What is the capital of Spain?"), "ideal": "Madrid"},
    {"input": chat("What is the capital of Italy?"), "ideal": "ROME"},
]
ANSWERS = {"France": "The capital is Paris.", "Spain": "Barcelona, I think.", "Italy": "Rome, of course."}
ANAGRAMS = [
    {"input": chat("Unscramble: tac"), "ideal": "cat"},
    {"input": chat("Unscramble: nur"), "ideal": "run"},
]
SHOTS = [
    {"sample": [{"role": "user", "content": "Unscramble: god"}, {"role": "assistant", "content": "dog"}]},
    {"sample": [{"role": "user", "content": "Unscramble: tsi"}, {"role": "assistant", "content": "sit"}]},
]


@pytest.fixture
def registry(tmp_path):
    folder = tmp_path / "registry"
    shutil.copytree(REGISTRY, folder)
    (folder / "data" / "test_fuzzy_match").mkdir(parents=True)
    (folder / "data" / "anagrams").mkdir()
    lines = lambda rows: "".join(json.dumps(r) + "\n" for r in rows)  # noqa: E731
    (folder / "data" / "test_fuzzy_match" / "samples.jsonl").write_text(lines(CAPITALS))
    (folder / "data" / "anagrams" / "samples.jsonl").write_text(lines(ANAGRAMS))
    (folder / "data" / "anagrams" / "fewshot.jsonl").write_text(lines(SHOTS))
    return folder


def scores(home: Path, run_name: str) -> dict[str, list[float]]:
    with sqlite3.connect(home / "assay.db") as conn:
        (run_id,) = conn.execute("select id from runs where name = ?", (run_name,)).fetchone()
        rows = conn.execute(
            "select criterion, datasource_item_id, score from results where run_id = ? order by datasource_item_id",
            (run_id,),
        ).fetchall()
    found: dict[str, list[float]] = {}
    for criterion, _, score in rows:
        found.setdefault(criterion, []).append(score)
    return found


def test_registry_evals_run_with_their_classes_verdicts(tmp_path, registry, own_llm):
    rules = [{"match": country, "reply": {"content": answer}} for country, answer in ANSWERS.items()]
    rules += [
        {"match": "Unscramble: tac", "reply": {"content": "cat"}},
        {"match": "Unscramble: nur", "reply": {"content": "urn"}},
    ]
    own_llm.script(rules=rules, default={"content": "no idea"})
    home, out = tmp_path / "home", tmp_path / "imported"
    env = {"OPENAI_BASE_URL": own_llm.base_url, "OPENAI_API_KEY": "test"}
    for registry_file in ("test-basic.yaml", "anagrams.yaml"):
        done = assay("import", "evals-registry", registry / "evals" / registry_file, "--out", out, home=home)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "test-match" not in {p.name for p in out.iterdir()}  # TestMatch makes its samples in code: refused
    for name in ("test-fuzzy-match", "test-includes", "test-includes-ignore-case", "anagrams"):
        ran = assay("run", out / name / "eval.yaml", "--cache", "off", home=home, env_extra=env)
        assert ran.returncode == 0, (name, ran.stdout[-2000:], ran.stderr[-2000:])
    # FuzzyMatch: "the capital is paris" contains "paris"; Barcelona is not Madrid; "rome of course" contains "rome".
    assert scores(home, "test-fuzzy-match")["fuzzy_match"] == [1.0, 0.0, 1.0]
    f1 = scores(home, "test-fuzzy-match")["f1_score"]
    assert f1[0] == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1)) and f1[1] == 0.0 and f1[2] == pytest.approx(0.5)
    # Includes: "Paris" is in the answer; "ROME" only when case is ignored.
    assert scores(home, "test-includes")["includes"] == [1.0, 0.0, 0.0]
    assert scores(home, "test-includes-ignore-case")["includes"] == [1.0, 0.0, 1.0]
    # Match: the answer must start with the ideal ("urn" does not start with "run").
    assert scores(home, "anagrams")["match"] == [1.0, 0.0]
    rows = [json.loads(line) for line in (out / "anagrams" / "samples.jsonl").read_text().splitlines()]
    assert [m["content"] for m in rows[0]["messages"]] == [
        "Answer briefly.",
        "Unscramble: god",
        "dog",
        "Unscramble: tsi",
        "sit",
        "Unscramble: tac",
    ]  # Match's few-shot prompt: the shots before the last message
    config = yaml.safe_load((out / "anagrams" / "eval.yaml").read_text())
    assert config["target"]["sampling_params"] == {"temperature": 0, "max_completion_tokens": 500}


def test_what_cannot_be_imported_is_said(tmp_path, registry):
    home = tmp_path / "home"
    (registry / "data" / "anagrams" / "samples.jsonl").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 1\n"
    )
    done = assay("import", "evals-registry", registry / "evals" / "anagrams.yaml", "--out", tmp_path / "o", home=home)
    assert done.returncode == 2 and "is a Git LFS pointer" in done.stderr and "git lfs pull" in done.stderr
    done = assay("import", "evals-registry", registry / "evals" / "test-basic.yaml", "--eval", "test-match", home=home)
    assert done.returncode == 2 and "the class evals.elsuite.test.match:TestMatch is not imported" in done.stderr
    done = assay("import", "evals-registry", registry / "evals" / "test-basic.yaml", "--eval", "nope", home=home)
    assert done.returncode == 2 and "no eval 'nope'" in done.stderr and "test-includes" in done.stderr


COQA = [
    {"input": chat("Who wrote the letter in the story?"), "ideal": "Her grandmother"},
    {"input": chat("Where did they travel?"), "ideal": "To the coast"},
]


def test_model_graded_closedqa_is_a_label_model_grader_with_the_specs_prompt(tmp_path, registry, own_llm):
    """coqa-ex.yaml as the registry publishes it: Match, ModelBasedClassify on the fact spec (no
    choice_scores: left, saying why) and on the closedqa spec with three criteria (imported)."""
    (registry / "data" / "coqa").mkdir()
    lines = "".join(json.dumps(r) + "\n" for r in COQA)
    (registry / "data" / "coqa" / "samples.jsonl").write_text(lines)
    (registry / "data" / "coqa" / "match.jsonl").write_text(lines)
    home, out = tmp_path / "home", tmp_path / "imported"
    done = assay("import", "evals-registry", registry / "evals" / "coqa-ex.yaml", "--out", out, home=home)
    assert done.returncode == 0, done.stderr
    assert "coqa-fact: the spec fact gives no choice_scores" in " ".join(done.stdout.split())
    made = sorted(p.name for p in out.iterdir())
    assert made == ["coqa-closedqa-conciseness", "coqa-closedqa-correct", "coqa-closedqa-relevance", "coqa-match"]
    config = yaml.safe_load((out / "coqa-closedqa-correct" / "eval.yaml").read_text())
    (grader,) = config["evaluators"]
    assert grader["type"] == "label_model" and grader["labels"] == ["Y", "N"] and grader["passing_labels"] == ["Y"]
    prompt = grader["input"][0]["content"]
    assert "[Task]: {{item.input_text}}" in prompt and "[Submission]: {{sample.output_text}}" in prompt
    assert "[Criterion]: correctness: Is the answer correct?" in prompt  # the spec arg, filled in
    # closedqa asks for its reasoning in its own prompt, and the eval names no eval_type: nothing is appended.
    assert prompt.count("Reasoning:") == 1 and prompt.endswith("Reasoning:")
    assert grader["model"] == "gpt-4.1-mini"

    # Run: the target answers; the grader, shown the task and the answer, says Y for the first only.
    own_llm.script(
        rules=[
            {"match": "[Submission]: Her grandmother wrote it.", "reply": {"content": '{"label": "Y"}'}},
            {"match": "[Submission]: Nobody knows.", "reply": {"content": '{"label": "N"}'}},
            {"match": "Who wrote the letter", "reply": {"content": "Her grandmother wrote it."}},
            {"match": "Where did they travel", "reply": {"content": "Nobody knows."}},
        ]
    )
    env = {"OPENAI_BASE_URL": own_llm.base_url, "OPENAI_API_KEY": "test"}
    ran = assay("run", out / "coqa-closedqa-correct" / "eval.yaml", "--cache", "off", home=home, env_extra=env)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert scores(home, "coqa-closedqa-correct")["closedqa_correctness"] == [1.0, 0.0]
    done = assay("import", "evals-registry", registry / "evals" / "coqa-ex.yaml", "--eval", "coqa-fact", home=home)
    assert done.returncode == 2 and "gives no choice_scores" in done.stderr


def test_an_evals_eval_type_appends_the_classes_answer_prompt(registry):
    from assay.formats.evals_registry import load_registry

    (registry / "data" / "coqa").mkdir()
    (registry / "data" / "coqa" / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in COQA))
    (registry / "evals" / "typed.yaml").write_text(
        "typed:\n  id: typed.dev.v0\ntyped.dev.v0:\n  class: evals.elsuite.modelgraded.classify:ModelBasedClassify\n"
        "  args: {samples_jsonl: coqa/samples.jsonl, modelgraded_spec: closedqa, eval_type: classify,\n"
        "         modelgraded_spec_args: {criteria: 'brevity: Is it short?'}}\n"
    )
    (found,) = load_registry(registry / "evals" / "typed.yaml").evals
    (grader,) = found.graders
    assert grader["name"] == "closedqa_brevity"
    assert grader["input"][0]["content"].endswith(
        'Answer the question by printing only a single choice from "Y" or "N" (without quotes or punctuation) '
        "corresponding to the correct answer with no other text."
    )
