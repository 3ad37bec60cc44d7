"""Calibrated judges: a gate with ``--require-calibrated`` refuses to decide on a judge nobody
checked against people; ``assay judges agreement --save`` records the check, bound to the
criterion's definition and the judge model; a κ under ``--min-kappa`` is refused too; criteria no
model judged need no calibration."""

from __future__ import annotations

import json

import pytest

from assay.store import Store
from tests.cli.test_cli import assay
from tests.cli.test_compare import exact_run, judged_run


def test_the_gate_refuses_an_uncalibrated_judge_until_it_is_calibrated(tmp_path, llm):
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        first, second = judged_run(store, llm, seed=1), judged_run(store, llm, seed=2)
        passed = {row.datasource_item_id: row.results[0].passed for row in store.iter_output_items(second)}
        plain_a, plain_b = exact_run(store, set(range(300))), exact_run(store, set(range(300)))
    finally:
        store.close()
    gate = ("runs", "compare", first, second, "--fail-on", "regression", "--require-calibrated")
    refused = assay(*gate, home=tmp_path)
    assert refused.returncode == 1 and "gate refused: relevance: no calibration of this judge (m)" in refused.stdout
    # People agree with the judge on all but 20 of 400 items.
    labels = tmp_path / "human.jsonl"
    rows = [{"datasource_item_id": i, "label": "pass" if p != (i < 20) else "fail"} for i, p in sorted(passed.items())]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    saved = assay(
        "judges",
        "agreement",
        second,
        "--labels",
        str(labels),
        "--criterion",
        "relevance",
        "--save",
        "--json",
        home=tmp_path,
    )
    assert saved.returncode == 0 and "calibration saved: relevance (m) κ 0.90" in saved.stderr
    assert json.loads(saved.stdout)[0]["kappa"] == pytest.approx(0.9)  # stdout stays the figures
    assert assay(*gate, home=tmp_path).returncode == 0  # calibrated, and no regression
    strict = assay(*gate, "--min-kappa", "0.95", home=tmp_path)
    assert strict.returncode == 1 and "κ 0.90 with people, under 0.95" in strict.stdout
    # A string check is no judge: nothing to calibrate.
    assert (
        assay(
            "runs", "compare", plain_a, plain_b, "--fail-on", "regression", "--require-calibrated", home=tmp_path
        ).returncode
        == 0
    )
