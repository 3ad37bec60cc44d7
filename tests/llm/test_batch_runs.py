"""Batch mode against the scripted server's Batch API: the same results as a run without it, at the
batch price, and a run killed while its batch is out resumes by collecting that batch."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import assay
from tests.support.fixtures import poll

ITEMS = 6


def judge_scores(llm, **script) -> None:
    """The judge gives item i the score 1 + i % 5, whichever way the call reaches it."""
    rules = [
        {"match": f"topic {i}", "reply": {"content": json.dumps({"reason": f"item {i}", "score": 1 + i % 5})}}
        for i in range(ITEMS)
    ]
    llm.script(rules=rules, default={"content": '{"reason": "unmatched", "score": 3}'}, **script)


def eval_folder(
    tmp_path: Path, llm, *, batch_option: bool = False, provider: str = "openai", api: str = "chat"
) -> Path:
    rows = [{"query": f"a question on topic {i}", "response": f"an answer on topic {i}"} for i in range(ITEMS)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    options = "options: {batch: true}\n" if batch_option else ""
    where = f"base_url: '{llm.base_url}'" + (", api: responses" if api == "responses" else "")
    if provider == "azure":  # Azure OpenAI's global batch: the same routes under /openai, with an api-version
        where = f"provider: azure, azure_endpoint: '{llm.base_url.removesuffix('/v1')}', api_version: '2024-10-21'"
    (tmp_path / "eval.yaml").write_text(
        "name: batched\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  judge: {{model: gpt-4.1-mini, {where}, api_key: t, price: {{input: 0.4, output: 1.6}}}}\n"
        f"{options}evaluators:\n  - {{name: builtin.relevance, initialization_parameters: {{model: judge}}}}\n",
        encoding="utf-8",
    )
    return tmp_path / "eval.yaml"


def stored(home: Path) -> tuple[str, str, dict[int, float], dict]:
    """The last run's id and status, each item's relevance score, and its summary."""
    with sqlite3.connect(home / "assay.db") as conn:
        run_id, status, summary = conn.execute(
            "select id, status, summary from runs order by created_at desc, id desc"
        ).fetchone()
        scores = dict(conn.execute("select datasource_item_id, score from results where run_id = ?", (run_id,)))
    return run_id, status, scores, json.loads(summary or "{}")


def judge_cost(summary: dict) -> float:
    (usage,) = [u for u in summary["per_model_usage"] if u["model_name"] == "gpt-4.1-mini"]
    return float(usage["cost_usd"])


@pytest.mark.parametrize("provider", ["openai", "azure"])
def test_a_batch_run_gives_the_results_of_one_without_at_half_the_price(tmp_path, own_llm, provider):
    judge_scores(own_llm)
    plain_home, batch_home = tmp_path / "plain", tmp_path / "batched"
    plain_home.mkdir(), batch_home.mkdir()
    plain = assay("run", eval_folder(plain_home, own_llm, provider=provider), "--cache", "off", home=plain_home)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert own_llm.stats()["batches_created"] == 0
    config = eval_folder(batch_home, own_llm, batch_option=True, provider=provider)
    batched = assay("run", config, "--cache", "off", home=batch_home)
    assert batched.returncode == 0, batched.stdout + batched.stderr
    stats = own_llm.stats()
    assert stats["batches_created"] == 1 and stats["batched_requests"] == ITEMS  # every judge call in one batch
    _, _, plain_scores, plain_summary = stored(plain_home)
    _, status, batch_scores, batch_summary = stored(batch_home)
    assert status == "completed" and batch_scores == plain_scores
    assert sorted(batch_scores.values()) == sorted(float(1 + i % 5) for i in range(ITEMS))
    assert judge_cost(batch_summary) == pytest.approx(judge_cost(plain_summary) / 2)


def test_a_responses_models_calls_are_batched_as_responses_requests(tmp_path, own_llm):
    judge_scores(own_llm)
    plain_home, batch_home = tmp_path / "plain", tmp_path / "batched"
    plain_home.mkdir(), batch_home.mkdir()
    plain = assay("run", eval_folder(plain_home, own_llm, api="responses"), "--cache", "off", home=plain_home)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    before = own_llm.stats()
    config = eval_folder(batch_home, own_llm, batch_option=True, api="responses")
    batched = assay("run", config, "--cache", "off", home=batch_home)
    assert batched.returncode == 0, batched.stdout + batched.stderr
    stats = own_llm.stats()
    assert stats["batches_created"] - before["batches_created"] == 1
    assert stats["batched_requests"] - before["batched_requests"] == ITEMS  # every judge call in the batch
    assert list(stats["batch_endpoints"].values())[-1] == "/v1/responses"
    assert stored(batch_home)[2] == stored(plain_home)[2]  # the same scores, read from Responses answers


def test_a_run_killed_while_its_batch_is_out_resumes_by_collecting_it(tmp_path, own_llm):
    judge_scores(own_llm, batch_hold=True)
    config = eval_folder(tmp_path, own_llm)
    env = {**os.environ, "ASSAY_HOME": str(tmp_path)}
    env.pop("ASSAY_DATABASE_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "run", str(config), "--batch", "--cache", "off"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        out = poll(lambda: own_llm.stats()["batches_created"] == 1 and _recorded(tmp_path), bool, seconds=60)
        assert out, "the run made no batch"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    run_id, status, scores, _ = stored(tmp_path)
    assert status == "in_progress" and scores == {}  # killed with the batch out, nothing stored yet
    judge_scores(own_llm)  # the provider finishes the batch now
    resumed = assay("run", config, "--resume", run_id, home=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _, status, scores, _ = stored(tmp_path)
    assert status == "completed" and sorted(scores.values()) == sorted(float(1 + i % 5) for i in range(ITEMS))
    stats = own_llm.stats()
    assert stats["batches_created"] == 1  # the resumed run collected the batch it had paid for
    assert stats["completions"] == ITEMS  # and no request went again, batched or not


def _recorded(home: Path) -> bool:
    try:
        with sqlite3.connect(home / "assay.db") as conn:
            return conn.execute("select count(*) from model_batches").fetchone()[0] == 1
    except sqlite3.OperationalError:  # the store is not made yet
        return False
