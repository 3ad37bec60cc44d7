"""Target repeats: the target runs K times per item with distinct seeds and each trial is judged;
pass@k and pass^k come from the unbiased estimators over each item's trials (τ-bench), with
intervals over items. Judge repeats are another thing (tests/run/test_repeats.py)."""

from __future__ import annotations

import json

import pytest

from assay.store import Store
from tests.cli.test_cli import assay
from tests.support.fixtures import start_llm_server

ITEMS, K, P = 200, 4, 0.7


@pytest.fixture
def llm():
    """A provider of this test's own: it counts calls, which another test's leftover work on the
    session's provider would add to."""
    server = start_llm_server()
    yield server
    server.stop()


def test_pass_hat_k_and_pass_at_k_of_a_target_that_succeeds_with_p_07(tmp_path, llm):
    # Each request (its item and its seed) succeeds with p = 0.7, decided by the request itself.
    llm.script(rules=[{"match": "", "chance": P, "reply": {"content": "yes"}, "otherwise": {"content": "no"}}])
    (tmp_path / "data.jsonl").write_text("".join(json.dumps({"query": f"question {i}"}) + "\n" for i in range(ITEMS)))
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: trials\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  bot: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n"
        "target: {type: model, model: bot}\n"
        f"repeats: {{target: {K}}}\n"
        "evaluators:\n  - {type: string_check, name: ok, input: '{{sample.output_text}}', reference: 'yes', operation: eq}\n"
    )
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = done.stdout.split("run id: ")[1].split()[0]
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        run = store.get_run(run_id)
        items = list(store.iter_output_items(run_id))
    finally:
        store.close()
    assert len(items) == ITEMS * K and llm.stats()["completions"] == ITEMS * K  # every trial its own call
    trials = [item.sample["trial"] for item in items if item.datasource_item_id // K == 0]
    assert trials == list(range(K))
    (ok,) = run.summary.trials.per_testing_criteria
    assert ok.items == ITEMS
    assert ok.pass_hat_k[K] == pytest.approx(P**K, abs=0.05)
    assert ok.pass_at_k[K] == pytest.approx(1 - (1 - P) ** K, abs=0.05)
    assert ok.pass_at_k[1] == ok.pass_hat_k[1] == pytest.approx(P, abs=0.05)
    low, high = ok.pass_hat_k_ci
    assert low < ok.pass_hat_k[K] < high and high - low < 0.2
    (criterion,) = run.summary.per_testing_criteria_results
    assert criterion.clusters == ITEMS  # the pass rate's interval counts an item's trials as one
    shown = next(line for line in done.stdout.splitlines() if line.strip().startswith("ok: pass@"))
    assert f"pass^{K}" in shown and f"over {ITEMS} items" in shown


def test_target_repeats_need_a_target(tmp_path):
    (tmp_path / "data.jsonl").write_text(json.dumps({"response": "a", "ground_truth": "a"}) + "\n")
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: t\ndataset: {local_uri: data.jsonl}\nrepeats: {target: 3}\nevaluators: [builtin.f1_score]\n"
    )
    done = assay("run", config, home=tmp_path)
    assert done.returncode != 0 and "needs a target" in done.stderr


def test_repeats_report_how_often_identical_runs_flip_and_plan_uses_it(tmp_path, llm):
    """Two identical runs of a target that succeeds with p = 0.7, four trials per item: the
    comparison reports the run-to-run flip rate (2·0.7·0.3 = 0.42 expected) and the difference
    that noise hides; ``assay plan`` counts those flips among the discordant pairs."""
    from assay.stats.compare import compare_runs, flip_rates

    assert flip_rates({0: {"ok": (True, None)}, 1: {"ok": (True, None)}, 2: {"ok": (False, None)}}, 3) == {
        "ok": pytest.approx(2 * 2 * 1 / (3 * 2))
    }
    items = 60
    (tmp_path / "data.jsonl").write_text("".join(json.dumps({"query": f"question {i}"}) + "\n" for i in range(items)))
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: flips\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  bot: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n"
        "target: {type: model, model: bot}\n"
        f"repeats: {{target: {K}}}\n"
        "evaluators:\n  - {type: string_check, name: ok, input: '{{sample.output_text}}', reference: 'yes', operation: eq}\n"
    )
    llm.script(rules=[{"match": "question", "chance": P, "reply": {"content": "yes"}, "otherwise": {"content": "no"}}])
    runs = []
    for _ in range(2):  # the same system twice; each run's own repeats show how much its verdicts vary
        done = assay("run", config, "--cache", "off", home=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        runs.append(done.stdout.split("run id: ")[1].split()[0])
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        (ok,) = compare_runs(store, *runs).criteria
    finally:
        store.close()
    assert ok.flip_rate == pytest.approx(2 * P * (1 - P), abs=0.12)
    assert ok.noise_floor is not None and ok.noise_floor > 0.2  # 60 items cannot see small changes under this noise
    shown = assay("runs", "compare", *runs, home=tmp_path)
    assert "identical runs flip" in " ".join(shown.stdout.split())
    planned = json.loads(assay("plan", "--baseline", runs[0], "--mde", "0.05", "--json", home=tmp_path).stdout)
    (row,) = planned["criteria"] if isinstance(planned, dict) else planned
    assert row["discordance"] >= ok.flip_rate - 0.12 and row["needed"] > 1000
