"""Target repeats: the target runs K times per item (``repeats: {target: K}``), each trial judged on
its own; pass@k and pass^k are computed over an item's trials with the unbiased estimators (Chen et
al.; τ-bench) and averaged over items, the interval taken over items, so an item's trials count as
one cluster. Judge repeats (``repeats: K``) are another thing: one response judged K times.

Trial ``t`` of item ``i`` is output item ``i·K + t``; a model target gets ``seed`` offset by ``t``
(a distinct sample each trial, each kept by the model-call cache), a Python target a ``trial``
argument when it takes one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError
from assay.results.records import TrialCriterion, TrialSummary
from assay.stats.core import pass_at_k, pass_hat_k, t_interval

if TYPE_CHECKING:
    from assay.store import Store

MAX_TRIALS = 50


def check_trials(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TRIALS:
        raise ConfigError(f"{where}: a whole number of trials from 1 to {MAX_TRIALS}, got {value!r}")
    return value


def split_repeats(value: Any, where: str) -> tuple[Any, int]:
    """``repeats: K`` (the judge's) or ``repeats: {judge: J, target: K}``: (the judge's, the target's)."""
    if not isinstance(value, dict):
        return value, 1
    unknown = set(value) - {"judge", "target"}
    if unknown:
        raise ConfigError(f"{where}: unknown key {sorted(unknown)[0]!r}", hint="use {judge: J, target: K}")
    trials = check_trials(value["target"], f"{where}.target") if value.get("target") is not None else 1
    return value.get("judge"), trials


def summarize_trials(store: Store, run_id: str, trials: int) -> TrialSummary:
    passes: dict[str, dict[int, list[int]]] = {}
    for output in store.iter_output_items(run_id):
        item = output.datasource_item_id // trials
        for result in output.results:
            if result.status != "completed" or result.passed is None:
                continue
            tally = passes.setdefault(result.name, {}).setdefault(item, [0, 0])
            tally[0] += result.passed
            tally[1] += 1
    summary = TrialSummary(trials=trials)
    for name, items in passes.items():
        criterion = TrialCriterion(testing_criteria=name, items=len(items))
        for k in range(1, trials + 1):
            judged = [(c, n) for c, n in items.values() if n >= k]
            if judged:
                criterion.pass_at_k[k] = sum(pass_at_k(n, c, k) for c, n in judged) / len(judged)
                criterion.pass_hat_k[k] = sum(pass_hat_k(n, c, k) for c, n in judged) / len(judged)
        whole = [(c, n) for c, n in items.values() if n == trials]
        at = t_interval([pass_at_k(n, c, trials) for c, n in whole])
        hat = t_interval([pass_hat_k(n, c, trials) for c, n in whole])
        criterion.pass_at_k_ci = [max(0.0, at[0]), min(1.0, at[1])] if at else None
        criterion.pass_hat_k_ci = [max(0.0, hat[0]), min(1.0, hat[1])] if hat else None
        summary.per_testing_criteria.append(criterion)
    return summary
