"""``assay plan``: the items a comparison needs to see a drop. The sample size is checked by
simulation: at the planned n, McNemar's mid-p test (what the gate uses) finds the drop about as
often as the power asked for."""

from __future__ import annotations

import json
import random

from assay.stats.paired import mcnemar_mid_p
from assay.stats.plan import items_needed
from tests.cli.test_cli import assay
from tests.cli.test_compare import exact_run


def test_at_the_planned_size_the_drop_is_found_with_the_power_asked_for():
    mde, discordance = 0.05, 0.10
    n = items_needed(mde, discordance, alpha=0.05, power=0.8)
    assert n == 312  # Connor (1987): (1.96·√0.10 + 0.84·√(0.10 − 0.05²))² / 0.05²
    rng = random.Random(7)
    found = 0
    for _ in range(400):
        lost = gained = 0
        for _ in range(n):  # each item flips with the discordance, down more often than up by the drop
            roll = rng.random()
            lost += roll < (discordance + mde) / 2
            gained += (discordance + mde) / 2 <= roll < discordance
        found += mcnemar_mid_p(lost, gained) < 0.05 and lost > gained
    assert 0.72 <= found / 400 <= 0.90


def test_plan_reads_the_baseline_and_splits_alpha_over_its_criteria(tmp_path):
    from assay.store import Store

    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        run = exact_run(store, set(range(160)), items=200)
    finally:
        store.close()
    done = assay("plan", "--baseline", run, "--mde", "0.05", "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    (exact,) = json.loads(done.stdout)
    assert exact["pass_rate"] == 0.8 and exact["items"] == 200 and exact["discordance"] == 0.05
    assert exact["needed"] == items_needed(0.05, 0.05, alpha=0.05, power=0.8) == 155 and exact["enough"] is True
    (small,) = json.loads(assay("plan", "--baseline", run, "--mde", "0.02", "--json", home=tmp_path).stdout)
    assert small["needed"] > 200 and small["enough"] is False
    table = assay("plan", "--baseline", run, "--mde", "0.2", home=tmp_path)
    assert "items needed" in table.stdout and table.returncode == 0
