"""``assay run`` with judges: models from eval.yaml, --estimate, the cache across runs, --cache replay."""

from __future__ import annotations

import json

from tests.cli.test_cli import assay


def write_project(tmp_path, base_url):
    rows = [{"query": f"How do I reset password {i}?", "response": f"Use the reset link {i}."} for i in range(5)]
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: judged\n"
        "dataset: {local_uri: qa.jsonl}\n"
        "models:\n"
        f"  judge: {{model: gpt-4.1-mini, base_url: '{base_url}', api_key: test, price: {{input: 0.4, output: 1.6}}}}\n"
        "options: {eval_model: judge}\n"
        "evaluators:\n"
        "  - builtin.relevance\n"
        "  - builtin.fluency\n"
        "  - builtin.f1_score\n",
        encoding="utf-8",
    )
    return config


def test_estimate_then_run_then_replay(tmp_path, llm):
    llm.reset()
    llm.script(default={"content": '{"reason": "clear and on topic", "score": 4}'})
    config = write_project(tmp_path, llm.base_url)
    estimate = assay("run", str(config), "--estimate", home=tmp_path)
    assert estimate.returncode == 2 and "needs input 'ground_truth'" in estimate.stderr  # f1 lacks ground_truth
    config.write_text(config.read_text().replace("  - builtin.f1_score\n", ""), encoding="utf-8")
    estimate = assay("run", str(config), "--estimate", home=tmp_path, check=True)
    assert "gpt-4.1-mini: 10 calls (0 cached)" in estimate.stdout and "about $" in estimate.stdout
    assert llm.stats()["completions"] == 0

    first = assay("run", str(config), home=tmp_path, check=True)
    assert "model gpt-4.1-mini: 10 calls, 0 cached" in first.stdout and "$0.00" in first.stdout
    assert llm.stats()["completions"] == 10

    replay = assay("run", str(config), "--cache", "replay", home=tmp_path, check=True)
    assert "model gpt-4.1-mini: 0 calls, 10 cached" in replay.stdout
    assert llm.stats()["completions"] == 10
    assert "items: 5 total, 5 passed" in replay.stdout

    config.write_text(config.read_text().replace("builtin.fluency", "builtin.coherence"), encoding="utf-8")
    missed = assay("run", str(config), "--cache", "replay", home=tmp_path)
    assert missed.returncode == 0 and "0/0/5/0" in missed.stdout
    assert llm.stats()["completions"] == 10


def test_models_section_errors_name_the_line(tmp_path, llm):
    config = write_project(tmp_path, llm.base_url)
    config.write_text(config.read_text().replace("api_key: test", "api_key: test, colour: blue"), encoding="utf-8")
    result = assay("run", str(config), home=tmp_path)
    assert result.returncode == 2 and "eval.yaml:4: models.judge" in result.stderr and "colour" in result.stderr


def test_eval_yaml_target_generates_responses_then_judges(tmp_path, llm):
    llm.reset()
    llm.script(
        rules=[{"match": "# Property:", "reply": {"content": '{"reason": "on topic", "score": 5}'}}],
        default={"content": "Use the reset link on the sign-in page."},
    )
    (tmp_path / "q.jsonl").write_text(
        "".join(json.dumps({"query": f"How do I reset password {i}?"}) + "\n" for i in range(4))
    )
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: with-target\ndataset: {local_uri: q.jsonl}\n"
        f"models:\n  bot: {{model: bot-model, base_url: '{llm.base_url}', api_key: t}}\n"
        f"  judge: {{model: judge-model, base_url: '{llm.base_url}', api_key: t}}\n"
        "target: {type: model, model: bot, sampling_params: {temperature: 0.7},\n"
        "         input_messages: [{role: system, content: Be brief.}, {role: user, content: '{{item.query}}'}]}\n"
        "evaluators:\n  - {name: builtin.relevance, initialization_parameters: {model: judge}}\n"
    )
    result = assay("run", str(config), home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "items: 4 total, 4 passed" in result.stdout
    run_id = result.stdout.split("run id: ")[1].split()[0]
    first = json.loads(assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()[0])
    assert first["sample"]["output_text"] == "Use the reset link on the sign-in page."
    assert first["sample"]["input"][0] == {"role": "system", "content": "Be brief."}
