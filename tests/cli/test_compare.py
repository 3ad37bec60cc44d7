"""``assay runs compare``: runs that differ only by judge noise show no regression; a real
10-point drop on 400 items is one, with its flipped items, and ``--fail-on regression`` exits 1."""

from __future__ import annotations

import random

from assay.dataset import Dataset
from assay.evaluators import load_catalog
from assay.llm import ModelConfig, ModelRegistry
from assay.run import EvalDefinition, finish_run, prepare, start
from assay.stats.compare import compare_runs, compare_verdicts, verdicts
from assay.store import Store
from tests.cli.test_cli import assay

RELEVANCE = [
    {
        "type": "azure_ai_evaluator",
        "name": "relevance",
        "evaluator_name": "builtin.relevance",
        "initialization_parameters": {"model": "judge"},
    }
]
GOOD, POOR = '{"reason": "good", "score": 5}', '{"reason": "poor", "score": 1}'


def judged_run(store, llm, seed: int) -> str:
    """The judge's noise, drawn with a fixed seed: half the items, chosen at random, pass."""
    passing = set(random.Random(seed).sample(range(400), 200))
    llm.script(
        rules=[{"match": f"answer {i}\\n", "reply": {"content": GOOD if i in passing else POOR}} for i in range(400)]
    )
    models = ModelRegistry([ModelConfig(name="judge", model="m", base_url=llm.base_url, api_key="t")])  # no cache
    rows = [{"query": f"question {i}", "response": f"answer {i}"} for i in range(400)]
    prepared = prepare(EvalDefinition("noise", RELEVANCE), Dataset.from_content(rows), load_catalog(), models=models)
    return str(finish_run(prepared, start(prepared, store), store).run.id)


def test_judge_noise_is_not_a_regression(store, llm):
    first, second = judged_run(store, llm, seed=1), judged_run(store, llm, seed=2)
    (relevance,) = compare_runs(store, first, second).criteria
    assert relevance.n == 400 and relevance.flips  # the verdicts do move, at random
    assert relevance.verdict == "inconclusive" and relevance.interval[0] < 0 < relevance.interval[1]
    assert relevance.p_value > 0.05


EXACT = [
    {
        "type": "string_check",
        "name": "exact",
        "input": "{{item.response}}",
        "reference": "{{item.ground_truth}}",
        "operation": "eq",
    }
]


def exact_run(store, passing: set[int], items: int = 400) -> str:
    """A run of string_check over ``items`` rows, passing exactly those in ``passing``."""
    rows = [{"response": "Paris" if i in passing else "Lyon", "ground_truth": "Paris"} for i in range(items)]
    prepared = prepare(EvalDefinition("exact", EXACT), Dataset.from_content(rows), load_catalog())
    return str(finish_run(prepared, start(prepared, store), store).run.id)


def test_a_ten_point_drop_on_400_items_is_a_regression_with_its_flips(tmp_path):
    before = set(range(320))  # 80%
    after = (before - set(range(0, 50))) | set(range(320, 330))  # 50 lost, 10 gained: 70%
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")  # the store `assay` uses under this ASSAY_HOME
    try:
        a, b = exact_run(store, before), exact_run(store, after)
        report = compare_runs(store, a, b).as_dict()
        within = compare_runs(store, a, b, margin=0.15)
    finally:
        store.close()
    result = assay("runs", "compare", a, b, "--fail-on", "regression", "--flips", "3", home=tmp_path)
    assert result.returncode == 1, result.stderr
    text = " ".join(result.stdout.replace("│", " ").split())
    assert "exact 400 80% 70% -10.0 [" in text and "degraded" in text and "regression: exact (-10.0 points)" in text
    assert "exact item 0: pass → fail" in text and "... 57 more flipped items" in text
    (exact,) = report["criteria"]
    assert exact["delta"] == -0.1 and exact["delta_ci"][1] < 0 and len(exact["flipped"]) == 60
    assert exact["mcnemar_p"] < 1e-5 and report["regression"] is True
    low, high = exact["pass_rate_b_ci"]  # Wilson with continuity correction, as ai-agent-evals reports it
    assert low < 0.7 < high and round(low, 4) == 0.6521 and round(high, 4) == 0.744  # scipy
    assert not within.regressed  # within a margin of 15 points, the same drop is not a regression
    narrow = assay("runs", "compare", a, b, "--flips", "0", home=tmp_path, env_extra={"COLUMNS": "80"}).stdout
    assert "exact      400  80%  70%  -10.0 [-13.8, -6.5]   0.000  5.4  degraded" in narrow  # 80 columns: whole


def planted_run(store, failing: dict[str, set[int]], items: int = 200) -> str:
    """Ten string_check criteria reading pass/fail fields: criterion c fails exactly on ``failing[c]``."""
    names = [f"c{i}" for i in range(10)]
    criteria = [
        {"type": "string_check", "name": name, "input": f"{{{{item.{name}}}}}", "reference": "pass", "operation": "eq"}
        for name in names
    ]
    rows = [{name: "fail" if i in failing.get(name, set()) else "pass" for name in names} for i in range(items)]
    prepared = prepare(EvalDefinition("planted", criteria), Dataset.from_content(rows), load_catalog())
    return str(finish_run(prepared, start(prepared, store), store).run.id)


def test_the_gate_corrects_for_ten_criteria(store):
    import random

    rng = random.Random(5)
    noise = {f"c{i}": set(rng.sample(range(200), 20)) for i in range(10)}
    base = planted_run(store, noise)
    marginal = dict(noise)
    # One criterion with 14 verdicts flipped down and 4 up: McNemar p = 0.031 alone, 0.31 after Holm over ten.
    passing = sorted(set(range(200)) - noise["c3"])
    failing_now = set(noise["c3"]) - set(sorted(noise["c3"])[:4]) | set(passing[:14])
    marginal["c3"] = failing_now
    report = compare_runs(store, base, planted_run(store, marginal))
    c3 = next(c for c in report.criteria if c.name == "c3")
    assert (c3.only_a, c3.only_b) == (14, 4) and c3.p_value < 0.05 and c3.p_holm > 0.05
    assert c3.interval is not None and c3.interval[1] < 0  # its own interval excludes 0 ...
    assert not report.regressed  # ... but ten criteria were tested: no regression
    dropped = dict(noise)
    dropped["c7"] = set(noise["c7"]) - set(sorted(noise["c7"])[:2]) | set(sorted(set(range(200)) - noise["c7"])[:40])
    real = compare_runs(store, base, planted_run(store, dropped))
    assert [c.name for c in real.regressed] == ["c7"]


def test_compare_resamples_clusters_when_the_run_names_them(store):
    # 10 documents × 20 questions; B loses every question of three documents: 60 items, 3 clusters.
    def run(failing: set[int]) -> str:
        rows = [
            {"doc": f"d{i // 20}", "response": "Lyon" if i in failing else "Paris", "ground_truth": "Paris"}
            for i in range(200)
        ]
        definition = EvalDefinition("clustered", EXACT, cluster_by="doc")
        prepared = prepare(definition, Dataset.from_content(rows), load_catalog())
        return str(finish_run(prepared, start(prepared, store), store).run.id)

    a, b = run(set()), run(set(range(60)))
    (clustered,) = compare_runs(store, a, b).criteria
    (by_item,) = compare_verdicts(verdicts(store, a), verdicts(store, b), a, b).criteria
    assert clustered.delta == by_item.delta == -0.3
    width = lambda c: c.interval[1] - c.interval[0]  # noqa: E731
    assert width(clustered) > 2 * width(by_item)  # three documents moved, not sixty independent items


def test_clustered_noise_is_not_a_regression_once_the_run_names_its_clusters():
    """The false-alarm bench's clustered noise (documents whose pass probability drifts as a whole
    between runs), forty comparisons of ten criteria: with ``cluster_by`` the gate holds its 5%
    family-wise rate (McNemar took each item for independent evidence: 25–33% false alarms)."""
    import random

    from bench.gate_false_alarms import clustered_runs

    rng = random.Random(20261206)
    alarms = independent = 0
    for n in range(40):
        a, b, documents = clustered_runs(rng, criteria=10, documents=20, size=10, tau=1.5)
        alarms += bool(compare_verdicts(a, b, "a", "b", seed=n, resamples=500, clusters=documents).regressed)
        independent += bool(compare_verdicts(a, b, "a", "b", seed=n, resamples=500).regressed)
    assert alarms <= 2, f"{alarms} false alarms in 40 comparisons"  # 5%
    assert independent >= 8, independent  # 20%: the noise is clustered enough to fool a test that ignores it


def test_verdicts_in_foundrys_words_with_margins_per_criterion(store):
    before = set(range(160))  # 80% of 200
    after = before - set(range(30))  # 30 lost: 65%, on criterion "exact" only
    a, b = exact_run(store, before, items=200), exact_run(store, after, items=200)
    assert [c.verdict for c in compare_runs(store, a, b).criteria] == ["degraded"]
    # A non-inferiority margin for this criterion wider than the drop: not a regression.
    assert [c.verdict for c in compare_runs(store, a, b, margin={"exact": 0.3}).criteria] == ["inconclusive"]
    few_a, few_b = exact_run(store, set(range(9)), items=9), exact_run(store, set(), items=9)
    assert [c.verdict for c in compare_runs(store, few_a, few_b).criteria] == ["too few samples"]


def test_scores_beyond_pass_fail_get_their_own_test(store, llm):
    """A 1–5 judge: its verdicts are compared by McNemar, its scores by Wilcoxon (ordinal); the
    better direction is read from which scores pass."""
    rows = [{"query": f"question {i}", "response": f"answer {i}"} for i in range(60)]

    def run(good: set[int]) -> str:
        llm.script(
            rules=[{"match": f"answer {i}\\n", "reply": {"content": GOOD if i in good else POOR}} for i in range(60)]
        )
        models = ModelRegistry([ModelConfig(name="judge", model="m", base_url=llm.base_url, api_key="t")])
        prepared = prepare(
            EvalDefinition("scores", RELEVANCE), Dataset.from_content(rows), load_catalog(), models=models
        )
        return str(finish_run(prepared, start(prepared, store), store).run.id)

    a, b = run(set(range(50))), run(set(range(20)))
    found = compare_runs(store, a, b)
    (score,) = found.scores
    assert (score.kind, score.test, score.direction, score.verdict) == (
        "ordinal",
        "wilcoxon_pratt",
        "increase",
        "degraded",
    )
    assert score.mean_a > score.mean_b and score.p_value < 0.001
    assert found.as_dict()["scores"][0]["metric"] == "score"
