"""Calibrated judges: a judge's agreement with people, kept so a gate can ask for it.

``assay judges agreement RUN --labels human.jsonl --save`` records, per criterion, Cohen's κ with
its interval, bound to what made the verdicts: the criterion's definition (its evaluator, version
and parameters, the judge model left out: the model is bound on its own) hashed, and the model
that judged. A gate run with ``--require-calibrated`` (``assay run``, ``assay runs compare``)
refuses to decide on a judge criterion without a calibration for that definition and model at
κ ≥ ``--min-kappa`` (0.6 by default): a verdict from a judge nobody checked against people does
not gate a release. Criteria no model judged (string checks, F1) need none.

Calibrations live in ``$ASSAY_HOME/calibrations.json``.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from assay.config.settings import settings
from assay.results.criterion import Criterion
from assay.store import Store

DEFAULT_MIN_KAPPA = 0.6
MODEL_KEYS = {"model", "deployment_name", "azure_deployment", "model_config"}


def fingerprint(criterion: Criterion) -> str:
    """The criterion's definition without its model: what a calibration is bound to besides the model."""
    clean = {k: v for k, v in criterion.items() if k not in ("id", "name")}
    parameters = clean.get("initialization_parameters")
    if isinstance(parameters, dict):
        clean["initialization_parameters"] = {k: v for k, v in parameters.items() if k not in MODEL_KEYS}
    return hashlib.sha256(json.dumps(clean, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _path() -> Path:
    return settings().home / "calibrations.json"


def load() -> list[dict[str, Any]]:
    path = _path()
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def judged_criteria(store: Store, run_id: str) -> dict[str, tuple[str, str]]:
    """criterion name → (its fingerprint, its judge model), for the criteria a model judged in the run."""
    run = store.get_run(run_id)
    criteria = {c.get("name"): c for c in store.get_eval(run.eval_id).testing_criteria}
    models = store.judge_models(run_id)
    return {name: (fingerprint(criteria.get(name) or {"name": name}), model) for name, model in models.items()}


def save(store: Store, run_id: str, figures: list[dict[str, Any]], labels: str) -> list[dict[str, Any]]:
    """Record the agreement figures of the run's judged criteria (a newer record replaces one for the
    same definition and model)."""
    judged = judged_criteria(store, run_id)
    records = load()
    saved = []
    for figure in figures:
        if figure["criterion"] not in judged or figure.get("kappa") is None:
            continue
        key, model = judged[figure["criterion"]]
        record = {
            "criterion": figure["criterion"],
            "fingerprint": key,
            "model": model,
            "kappa": figure["kappa"],
            "kappa_ci": figure.get("kappa_ci"),
            "n": figure["n"],
            "labels": labels,
            "run_id": run_id,
            "created_at": int(time.time()),
        }
        records = [r for r in records if (r["fingerprint"], r["model"]) != (key, model)] + [record]
        saved.append(record)
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    return saved


def uncalibrated(store: Store, run_id: str, min_kappa: float = DEFAULT_MIN_KAPPA) -> dict[str, str]:
    """criterion → why it may not gate: no calibration for its definition and model, or κ too low."""
    records = {(r["fingerprint"], r["model"]): r for r in load()}
    missing = {}
    for name, (key, model) in judged_criteria(store, run_id).items():
        record = records.get((key, model))
        if record is None:
            missing[name] = f"no calibration of this judge ({model}) against human labels"
        elif record["kappa"] < min_kappa:
            missing[name] = f"κ {record['kappa']:.2f} with people, under {min_kappa:.2f}"
    return missing
