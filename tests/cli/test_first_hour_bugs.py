"""Bugs a new user met in the first hour (issue #18), each pinned by a test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.llm import Model, ModelConfig
from tests.cli.test_cli import assay


def test_a_named_model_without_base_url_calls_openai_base_url_and_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = Model(ModelConfig(name="llama", model="llama3.1"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="would call api.openai.com but no API key is set"):
        model.check_credentials()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")  # the README's Ollama command
    model.check_credentials()  # a local endpoint needs no key


def test_a_partial_data_mapping_keeps_the_same_name_defaults():
    import assay

    rows = [{"query": "Capital of France?", "answer": "Paris", "ground_truth": "Paris"}]
    result = assay.evaluate(
        data=rows,
        evaluators={"f1": "builtin.f1_score"},
        evaluator_config={"f1": {"column_mapping": {"response": "${data.answer}"}}},
    )
    assert result["rows"][0]["outputs.f1.f1_score"] == 1.0


def write(tmp_path, text):
    (tmp_path / "d.jsonl").write_text(json.dumps({"response": "a", "ground_truth": "a"}) + "\n")
    (tmp_path / "eval.yaml").write_text(text)
    return assay("run", str(tmp_path / "eval.yaml"), home=tmp_path)


def test_an_unknown_top_level_key_is_named_at_its_line(tmp_path):
    result = write(
        tmp_path, "name: x\ndataset: {local_uri: d.jsonl}\noption: {concurrency: 2}\nevaluators: [builtin.f1_score]\n"
    )
    assert result.returncode == 2
    assert "eval.yaml:3: unknown key 'option'" in result.stderr and "options" in result.stderr


def test_a_hints_example_is_printed_whole_not_eaten_as_markup(tmp_path):
    result = write(tmp_path, "name: x\ndataset: {local_uri: d.jsonl}\nevaluators: []\n")
    assert result.returncode == 2
    assert "hint: e.g. evaluators: [builtin.f1_score]" in result.stderr


def test_an_unknown_criterion_key_is_named_at_its_own_line(tmp_path):
    result = write(
        tmp_path,
        "name: x\ndataset: {local_uri: d.jsonl}\nevaluators:\n  - builtin.f1_score\n"
        "  - {evaluator_name: builtin.bleu_score, treshold: 0.3}\n",
    )
    assert result.returncode == 2 and "eval.yaml:5:" in result.stderr and "'treshold'" in result.stderr


def test_a_dataset_given_as_a_path_is_read(tmp_path):
    result = write(tmp_path, "name: x\ndataset: d.jsonl\nevaluators: [builtin.f1_score]\n")
    assert result.returncode == 0, result.stderr
    assert "d.jsonl: 1 item checked · 1 criterion · run" in result.stdout


def test_resuming_a_cache_off_run_keeps_the_cache_off(tmp_path):
    from tests.support.fixtures import start_llm_server

    server = start_llm_server()
    try:
        rows = [{"query": f"question {i}", "response": f"answer {i}"} for i in range(3)]
        (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (tmp_path / "eval.yaml").write_text(
            f"name: cached\nmodels:\n  judge: {{model: m, base_url: '{server.base_url}', api_key: t}}\n"
            "dataset: {local_uri: d.jsonl}\nevaluators:\n"
            "  - {name: builtin.relevance, initialization_parameters: {model: judge}}\n"
        )
        config = str(tmp_path / "eval.yaml")
        server.script(default={"content": '{"reason": "old answer", "score": 2}'})
        assert assay("run", config, home=tmp_path).returncode == 0  # the cache now holds the old answers
        server.script(
            rules=[{"match": "question 1", "reply": {"status": 400}}],
            default={"content": '{"reason": "new answer", "score": 5}'},
        )
        first = assay("run", config, "--cache", "off", home=tmp_path)
        run_id = next(w for w in first.stdout.split() if w.startswith("evalrun_"))
        server.script(default={"content": '{"reason": "new answer", "score": 5}'})
        resumed = assay("run", config, "--resume", run_id, "--retry-errors", home=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        results = assay("results", run_id, "--format", "jsonl", home=tmp_path)
        reasons = [json.loads(line)["results"][0]["reason"] for line in results.stdout.splitlines()]
        assert reasons == ["new answer"] * 3  # the retried item was asked again, not answered from the cache
    finally:
        server.stop()


def test_importing_a_file_without_spans_says_so(tmp_path):
    (tmp_path / "empty.json").write_text('{"resourceSpans": []}')
    result = assay("traces", "import", str(tmp_path / "empty.json"), home=tmp_path)
    assert result.returncode == 2 and "empty.json: no spans in this file" in result.stderr


def test_a_criterion_that_errors_everywhere_is_reported_with_its_cause(tmp_path):
    from tests.support.fixtures import start_llm_server

    server = start_llm_server()
    try:
        server.script(default={"status": 400})
        rows = [{"query": f"q{i}", "response": "a", "ground_truth": "b"} for i in range(3)]
        (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (tmp_path / "eval.yaml").write_text(
            f"name: errors\nmodels:\n  judge: {{model: m, base_url: '{server.base_url}', api_key: t}}\n"
            "dataset: {local_uri: d.jsonl}\nevaluators:\n  - builtin.f1_score\n"
            "  - {name: builtin.relevance, initialization_parameters: {model: judge}}\n"
        )
        result = assay("run", str(tmp_path / "eval.yaml"), home=tmp_path)
        assert "3 failed, 0 errored" in result.stdout  # f1 fails every item first, as the peer counts rows
        assert "errors by cause" in result.stdout and "relevance: 3 errors" in result.stdout
        assert "3 × model 'judge': 400" in result.stdout
    finally:
        server.stop()


# The first hour, part two (issue #32): mistakes named, not swallowed.


def test_a_typo_in_an_evaluate_keyword_is_named_with_the_right_one():
    import assay

    rows = [{"response": "a", "ground_truth": "a"}]
    with pytest.raises(
        TypeError, match="unexpected keyword argument 'evaluator_confg' \\(did you mean 'evaluator_config'"
    ):
        assay.evaluate(data=rows, evaluators={"f1": "builtin.f1_score"}, evaluator_confg={})
    # The peer's own arguments, unused here, are still taken: code written for it runs.
    assay.evaluate(data=rows, evaluators={"f1": "builtin.f1_score"}, azure_ai_project=None, _use_pf_client=False)


def test_a_mapping_key_a_builtin_does_not_take_is_named():
    import assay

    rows = [{"response": "a", "ground_truth": "a"}]
    mapping = {"f1": {"column_mapping": {"respnse": "${data.response}"}}}
    with pytest.raises(ConfigError, match="takes no input 'respnse'") as found:
        assay.evaluate(data=rows, evaluators={"f1": "builtin.f1_score"}, evaluator_config=mapping)
    assert found.value.hint == "did you mean 'response'?"


def test_a_missing_data_file_says_where_it_looked(tmp_path, monkeypatch):
    import assay

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=f"dataset not found: nope.jsonl \\(looked for {tmp_path}/nope.jsonl\\)"):
        assay.evaluate(data="nope.jsonl", evaluators={"f1": "builtin.f1_score"})


def test_a_judge_class_without_its_model_config_is_named_as_called():
    from assay.azure import CoherenceEvaluator

    with pytest.raises(TypeError, match=r"^CoherenceEvaluator.__init__\(\) missing 1 required positional argument"):
        CoherenceEvaluator()


def test_runs_show_prints_json(tmp_path):
    write(tmp_path, "name: x\ndataset: d.jsonl\nevaluators: [builtin.f1_score]\n")
    listed = json.loads(assay("runs", "list", "--json", home=tmp_path, check=True).stdout)
    shown = json.loads(
        assay("runs", "show", listed[0]["id"].removeprefix("evalrun_")[:8], "--json", home=tmp_path, check=True).stdout
    )
    assert shown["id"] == listed[0]["id"] and shown["summary"]["result_counts"]["total"] == 1


def test_azds_standard_mapping_keys_pass_for_every_evaluator():
    import assay

    rows = [{"query": "q", "response": "the answer", "ground_truth": "the answer", "tool_calls": []}]
    standard = {"query": "${data.query}", "response": "${data.response}", "tool_calls": "${data.tool_calls}"}
    config = {"f1": {"column_mapping": {**standard, "ground_truth": "${data.ground_truth}"}}}
    result = assay.evaluate(data=rows, evaluators={"f1": "builtin.f1_score"}, evaluator_config=config)
    assert result["rows"][0]["outputs.f1.f1_score"] == 1.0  # f1 reads neither query nor tool_calls: no matter


def test_a_typo_of_a_configured_models_name_is_named_as_one(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = write(
        tmp_path,
        "name: x\ndataset: d.jsonl\nmodels:\n  judge: {model: m, base_url: 'http://127.0.0.1:9/v1', api_key: t}\n"
        "options: {eval_model: judg}\nevaluators: [builtin.coherence]\n",
    )
    assert result.returncode != 0 and "model 'judg' is not in models: (did you mean 'judge'?)" in result.stderr


def test_a_missing_dataset_file_is_named_at_its_eval_yaml_line_not_a_traceback(tmp_path):
    (tmp_path / "eval.yaml").write_text("name: x\ndataset:\n  local_uri: data/nothing.jsonl\nevaluators: [f1_score]\n")
    result = assay("run", str(tmp_path / "eval.yaml"), home=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"eval.yaml:3: dataset data/nothing.jsonl: not found (looked for {tmp_path}/data/nothing.jsonl)" in (
        result.stderr
    )
    assert "relative to its folder" in result.stderr


def test_the_commands_a_run_summary_prints_run_as_printed(tmp_path):
    """Pasted into a shell, each command of the summary's ``details:`` line runs (``--format
    jsonl|csv`` was a pipe into a program named csv)."""
    (tmp_path / "d.jsonl").write_text(json.dumps({"response": "a", "ground_truth": "a"}) + "\n")
    (tmp_path / "eval.yaml").write_text("name: x\ndataset: {local_uri: d.jsonl}\nevaluators: [f1_score]\n")
    env = {**os.environ, "ASSAY_HOME": str(tmp_path / ".assay"), "COLUMNS": "200"}
    env.pop("ASSAY_DATABASE_URL", None)
    assay_dir = Path(sys.executable).parent  # `assay` itself, as the user's shell finds it
    env["PATH"] = f"{assay_dir}:{env['PATH']}"
    ran = subprocess.run(["assay", "run", "eval.yaml"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    details = next(line for line in ran.stdout.splitlines() if line.startswith("details: "))
    commands = [part.split(": ", 1)[1] for part in details.split(" · ")]
    assert len(commands) == 2 and all("|" not in command for command in commands)
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.strip(), (command, done.stderr)


def test_a_mistyped_command_gets_the_nearest_one_suggested(tmp_path):
    result = assay("rnu", "eval.yaml", home=tmp_path)
    assert result.returncode == 2 and "No such command 'rnu'. Did you mean 'run'?" in result.stderr
    assert "Did you mean" not in assay("xyzzy", home=tmp_path).stderr  # nothing near: no guess


def test_keys_create_says_the_key_is_shown_once_and_prints_it_alone_on_stdout(tmp_path):
    result = assay("keys", "create", "--project", "alpha", home=tmp_path, cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.strip().startswith("assay-") and len(result.stdout.split()) == 1
    assert "shown once" in result.stderr and "'alpha'" in result.stderr
