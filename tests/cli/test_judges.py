"""``assay judges agreement``: a run's verdicts against human labels, figures checked by hand."""

from __future__ import annotations

import json

import pytest

from assay.store import Store
from tests.cli.test_cli import assay
from tests.cli.test_compare import exact_run


def test_agreement_with_human_labels(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        run = exact_run(store, set(range(160)), items=200)  # the judge passes items 0–159 of 200
    finally:
        store.close()
    human = set(range(145)) | set(range(160, 175))  # people pass 145 of those and 15 others
    (tmp_path / "human.jsonl").write_text(
        "".join(
            json.dumps({"datasource_item_id": i, "label": "pass" if i in human else "fail"}) + "\n" for i in range(200)
        )
    )
    result = assay(
        "judges",
        "agreement",
        run,
        "--labels",
        str(tmp_path / "human.jsonl"),
        "--criterion",
        "exact",
        "--json",
        home=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    (figures,) = json.loads(result.stdout)
    assert figures["n"] == 200 and figures["agreement"] == 0.85
    assert figures["kappa"] == pytest.approx(0.53125)  # 85% agreement, both passing 80%: p_e = 0.68
    assert figures["alpha"] == pytest.approx(0.532421875)
    # κ's interval (its large-sample variance) and α's (bootstrap over items) contain the estimates.
    low, high = figures["kappa_ci"]
    assert low < figures["kappa"] < high and high - low < 0.4
    low, high = figures["alpha_ci"]
    assert low < figures["alpha"] < high and high - low < 0.4
    assert figures["tpr"] == pytest.approx(145 / 160) and figures["tnr"] == pytest.approx(25 / 40)


def test_a_bad_label_names_its_line(tmp_path):
    (tmp_path / "human.jsonl").write_text(
        '{"datasource_item_id": 0, "label": "pass"}\n{"datasource_item_id": 1, "label": "maybe"}\n'
    )
    result = assay(
        "judges", "agreement", "evalrun_x", "--labels", str(tmp_path / "human.jsonl"), "--criterion", "c", home=tmp_path
    )
    assert (
        result.returncode != 0
        and 'human.jsonl:2: label: expected true/false or pass/fail, got "maybe"' in result.stderr
    )
