"""τ-bench's published pass^k table, reproduced from its own trajectories: the 200 rewards behind
the README's airline "TC (gpt-4o)" row (50 tasks × 4 trials, ``tests/fixtures/tau_bench``) run
through assay's engine as one verdict per trial, then assay's trial summary (the unbiased
estimator of pass^k) gives the table to the published precision; the run-to-run flip rate is
read from the same trials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.dataset import Dataset
from assay.evaluators import load_catalog
from assay.run import EvalDefinition, finish_run, prepare, start
from assay.run.trials import summarize_trials
from assay.stats.compare import flip_rates, verdicts

REWARDS = Path(__file__).parents[1] / "fixtures" / "tau_bench" / "gpt-4o-airline-rewards.jsonl"
PUBLISHED = {1: 0.420, 2: 0.273, 3: 0.220, 4: 0.200}
"""sierra-research/tau-bench README, Leaderboard, Airline, TC (gpt-4o)."""
TRIALS = 4


def test_tau_benchs_published_pass_hat_k_for_gpt_4o_airline(store):
    rows = [json.loads(line) for line in REWARDS.read_text().splitlines()]
    assert [(r["task_id"], r["trial"]) for r in rows] == [(t, k) for t in range(50) for k in range(TRIALS)]
    solved = {
        "type": "string_check",
        "name": "solved",
        "input": "{{item.reward}}",
        "reference": "1.0",
        "operation": "eq",
    }
    prepared = prepare(EvalDefinition("tau-bench airline", [solved]), Dataset.from_content(rows), load_catalog())
    run = finish_run(prepared, start(prepared, store), store).run
    (criterion,) = summarize_trials(store, run.id, TRIALS).per_testing_criteria
    assert criterion.items == 50
    assert {k: round(v, 3) for k, v in criterion.pass_hat_k.items()} == PUBLISHED
    flips = flip_rates(verdicts(store, run.id), TRIALS)["solved"]
    # Two identical runs of this agent disagree on 29% of tasks (tau2-bench#540 saw 10–55% across its runs).
    assert flips == pytest.approx(44 / 150, abs=1e-9)
