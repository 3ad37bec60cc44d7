"""``assay simulate``: scenarios against a scripted model, conversations evaluated, summarised by
how they ended, saved as a dataset and as JSONL; a rerun makes no model call; bad input is named."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_cli import assay
from tests.simulate.test_conversations import TWO_TURNS
from tests.support.fixtures import start_llm_server

SCENARIOS = [
    {"id": "late", "test_case_description": "Your order 1042 is late; ask when it arrives."},
    {"id": "again", "test_case_description": "Ask when order 1042 arrives, politely."},
]


@pytest.fixture
def provider():
    server = start_llm_server()
    server.script(rules=TWO_TURNS)
    yield server
    server.stop()


def files(tmp_path, provider):
    (tmp_path / "scenarios.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SCENARIOS))
    (tmp_path / "models.yaml").write_text(
        f"models:\n  sim: {{model: sim, base_url: '{provider.base_url}', api_key: t}}\n"
        f"  shop: {{model: shop, base_url: '{provider.base_url}', api_key: t}}\n"
    )
    return [
        "simulate",
        str(tmp_path / "scenarios.jsonl"),
        "--model",
        "sim",
        "--target",
        "shop",
        "--models",
        str(tmp_path / "models.yaml"),
        "--repetitions",
        "2",
    ]


def test_simulate_runs_summarises_saves_and_reruns_free(tmp_path, provider):
    args = files(tmp_path, provider)
    result = assay(*args, "--save", "shop-sims", "--out", str(tmp_path / "out.jsonl"), home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "4 conversations" in result.stdout and "ended: user_stop 4" in result.stdout
    assert "saved as dataset shop-sims version 1" in result.stdout
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(written) == 4 and all(len(c["messages"]) == 4 for c in written)
    calls = provider.stats()["completions"]
    again = assay(*args, home=tmp_path)
    assert again.returncode == 0 and provider.stats()["completions"] == calls  # the cache answered everything
    listed = assay("dataset", "list", home=tmp_path)
    assert "shop-sims" in listed.stdout


def test_estimate_calls_nothing(tmp_path, provider):
    result = assay(*files(tmp_path, provider), "--estimate", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "at most 80 calls" in result.stdout and provider.stats()["completions"] == 0


def test_bad_input_is_named(tmp_path, provider):
    args = files(tmp_path, provider)
    (tmp_path / "scenarios.jsonl").write_text('{"id": "x"}\n')
    result = assay(*args, home=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "scenarios.jsonl:1" in result.stderr and "test_case_description" in result.stderr
    nobody = assay("simulate", str(tmp_path / "scenarios.jsonl"), "--model", "sim", home=tmp_path)
    assert nobody.returncode == 2 and "--target MODEL or --agent" in nobody.stderr


def test_eval_yaml_runs_a_simulation(tmp_path, provider):
    files(tmp_path, provider)
    (tmp_path / "eval.yaml").write_text(
        "name: simulated support\n"
        f"models:\n  sim: {{model: sim, base_url: '{provider.base_url}', api_key: t}}\n"
        f"  shop: {{model: shop, base_url: '{provider.base_url}', api_key: t}}\n"
        "dataset: {local_uri: scenarios.jsonl}\n"
        "target: {type: model, model: shop}\n"
        "simulation: {model: sim, max_turns: 4, repetitions: 2, save_as: yaml-sims}\n"
        "evaluators:\n"
        "  - {type: string_check, name: user_ended, input: '{{item.termination_reason}}', reference: user_stop, operation: eq}\n"
    )
    result = assay("run", str(tmp_path / "eval.yaml"), home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "items: 4 total" in result.stdout and "4 passed" in result.stdout
    assert "conversations saved as dataset yaml-sims version 1" in result.stdout


def test_eval_yaml_simulation_errors_name_their_line(tmp_path, provider):
    files(tmp_path, provider)
    (tmp_path / "eval.yaml").write_text(
        "name: bad\ndataset: {local_uri: scenarios.jsonl}\ntarget: {type: model, model: shop}\n"
        "simulation: {model: sim, max_turns: 99}\nevaluators: [builtin.coherence]\n"
    )
    result = assay("run", str(tmp_path / "eval.yaml"), home=tmp_path)
    assert result.returncode == 2 and "eval.yaml:4: simulation.max_turns: 99 is over the limit of 50" in result.stderr
