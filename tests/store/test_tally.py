"""A run's summary from the tally kept as its items were written is the summary its stored rows give."""

import math
import pickle
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.results import OutputItem, Result
from assay.store.tally import ExactSum, RunTally, ScoreSums

CRITERIA = [("f1", "f1_score"), ("judge", "coherence")]


def judged(index: int) -> OutputItem:
    """An item of every kind the summary tells apart: verdicts, errors, skips, odd scores, calls."""
    kind = index % 7
    usage = {"model": f"judge-{index % 2}", "calls": 1, "prompt_tokens": 10 + index, "completion_tokens": 3}
    scores = [0.25, -0.0015, float("nan"), 1e-9 * index, 0.1 + index / 1000, 3.0, None]
    results = [
        Result(
            name="f1",
            metric="f1_score",
            score=scores[kind],
            passed=None if kind == 6 else kind % 2 == 0,
            status="error" if kind == 6 else "completed",
        ),
        Result(
            name="judge",
            metric="coherence",
            score=None if kind == 5 else float(1 + index % 5),
            passed=None if kind == 5 else index % 3 != 0,
            status="skipped" if kind == 5 else "completed",
            properties={"usage": usage} if kind != 5 else {},
        ),
    ]
    if kind == 4:  # a criterion the definition does not name (a task's check)
        results.append(Result(name="extra", metric="extra", score=0.5, passed=True))
    sample = None
    if kind == 3:
        sample = {
            "model": "target-model",
            "usage": {"prompt_tokens": 7, "completion_tokens": 2},
            "usage_by_role": [{"role": "simulated_user", "model": "user-model", "calls": 2, "prompt_tokens": 5}],
        }
    return OutputItem(
        datasource_item_id=index,
        datasource_item={"q": index},
        sample=sample,
        results=results,
        status=OutputItem.status_of(results),
    )


def new_run(store):
    stored_eval = store.create_eval(name="e", data_source_config={"type": "custom"}, testing_criteria=[])
    return store.create_run(eval_id=stored_eval.id, data_source={"type": "jsonl"})


def test_the_tally_kept_while_writing_gives_the_summary_the_stored_rows_give(store):
    run = new_run(store)
    items = [judged(index) for index in range(300)]
    random.Random(3).shuffle(items)  # the order two processes might write them in
    tally = RunTally()
    for start in range(0, len(items), 64):
        assert store.add_output_items(run.id, items[start : start + 64], tally=tally)
    assert tally.written == 300 and tally.complete
    kept = store.summarize(run.id, CRITERIA, tally)
    read_back = store.summarize(run.id, CRITERIA)
    assert kept == read_back

    counts = read_back.result_counts
    assert counts.total == 300 and counts.errored + counts.passed + counts.failed + counts.skipped == 300
    f1, judge, extra = read_back.per_testing_criteria_results
    assert (f1.testing_criteria, judge.testing_criteria, extra.testing_criteria) == ("f1", "judge", "extra")
    assert f1.errored == sum(1 for index in range(300) if index % 7 == 6)
    assert judge.skipped == sum(1 for index in range(300) if index % 7 == 5)
    # A NaN is no score; the others are summed exactly.
    f1_scores = [r.score for i in items for r in i.results if r.name == "f1" and r.status == "completed"]
    numbers = [score for score in f1_scores if score is not None and not math.isnan(score)]
    assert f1.mean_score == math.fsum(numbers) / len(numbers)
    # Steps are a floor, below zero too.
    assert (-0.002, sum(1 for index in range(300) if index % 7 == 1)) in read_back.score_steps["f1"]
    roles = {(usage.role, usage.model_name): usage for usage in read_back.per_role_usage}
    assert [role for role, _ in roles] == ["target", "simulated_user", "judge", "judge"]
    assert roles[("target", "target-model")].invocation_count == sum(1 for index in range(300) if index % 7 == 3)
    assert (
        roles[("simulated_user", "user-model")].invocation_count
        == 2 * roles[("target", "target-model")].invocation_count
    )
    judge_calls = sum(1 for index in range(300) if index % 7 != 5)
    assert roles[("judge", "judge-0")].invocation_count + roles[("judge", "judge-1")].invocation_count == judge_calls


def test_a_tally_that_does_not_cover_every_stored_item_is_not_used(store):
    run = new_run(store)
    store.add_output_items(run.id, [judged(index) for index in range(10)])  # an earlier execution's
    tally = RunTally()
    store.add_output_items(run.id, [judged(index) for index in range(10, 20)], tally=tally)
    assert tally.complete and tally.written == 10
    assert store.summarize(run.id, CRITERIA, tally).result_counts.total == 20

    again = RunTally()
    store.add_output_items(run.id, [judged(index) for index in range(15, 25)], tally=again)  # 15..19 were there
    assert not again.complete
    assert store.summarize(run.id, CRITERIA, again) == store.summarize(run.id, CRITERIA)


def test_a_tally_crosses_a_process_boundary_whole():
    tally = RunTally()
    tally.statuses.update(["pass", "pass", "fail"])
    tally.scores["f1"] = ScoreSums()
    tally.scores["f1"].extend([0.1, 0.2, 0.3])
    copy = pickle.loads(pickle.dumps(tally))
    assert copy.statuses == tally.statuses
    assert copy.scores["f1"].count == 3 and copy.scores["f1"].total.value() == math.fsum([0.1, 0.2, 0.3])


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@given(st.lists(finite, max_size=200), st.integers(min_value=1, max_value=5), st.randoms())
def test_an_exact_sum_does_not_depend_on_order_or_on_how_it_was_split(values, pieces, rng):
    shuffled = values[:]
    rng.shuffle(shuffled)
    sums = [ExactSum() for _ in range(pieces)]
    for index, value in enumerate(shuffled):
        sums[index % pieces].extend([value])
    total = sums[0]
    for other in sums[1:]:
        total.merge(other)
    assert total.value() == math.fsum(values)


def test_an_exact_sum_folds_what_waits_without_losing_it():
    total = ExactSum()
    values = [1e16, 1.0, -1e16, 1e-16] * 3000  # more than one fold's worth, cancelling across folds
    total.extend(values)
    assert len(total.pending) < ExactSum.FOLD_AT
    assert total.value() == math.fsum(values)


def test_an_exact_sum_of_infinities_is_what_floats_give():
    assert ExactSum().value() == 0.0
    rising = ExactSum()
    rising.extend([math.inf, 1.0])
    assert rising.value() == math.inf
    rising.extend([-math.inf])
    assert math.isnan(rising.value())
    overflowing = ExactSum()
    overflowing.extend([1e308, 1e308])
    assert overflowing.value() == math.inf


@pytest.mark.parametrize("split", [1, 2, 3])
def test_tallies_merged_from_processes_give_one_tally(store, split):
    run = new_run(store)
    items = [judged(index) for index in range(120)]
    parts = [RunTally() for _ in range(split)]
    for index in range(0, 120, 10):
        store.add_output_items(run.id, items[index : index + 10], tally=parts[(index // 10) % split])
    merged = parts[0]
    for part in parts[1:]:
        merged.merge(part)
    assert merged.written == 120
    assert store.summarize(run.id, CRITERIA, merged) == store.summarize(run.id, CRITERIA)


def test_a_tally_read_back_a_page_at_a_time_is_the_whole_run(store, monkeypatch):
    from assay.store import runs

    run = new_run(store)
    items = [judged(index) for index in range(50)]
    tally = RunTally()
    store.add_output_items(run.id, items, tally=tally)
    whole = store.tally_of(run.id).summary(CRITERIA)
    monkeypatch.setattr(runs, "TALLY_PAGE", 7)  # pages end mid-item and mid-criterion
    assert store.tally_of(run.id).summary(CRITERIA) == whole == tally.summary(CRITERIA)


def test_a_role_model_name_the_column_clips_is_counted_as_stored(store):
    """Names past the column's 256 characters (two that differ only past it) and one holding a NUL:
    the tally counts the names as the rows keep them, so it gives what reading them back gives."""
    run = new_run(store)
    long = "m" * 256
    entries = [
        {"role": "simulated_user", "model": long + "-a", "calls": 1},
        {"role": "simulated_user", "model": long + "-b", "calls": 2},
        {"role": "attacker", "model": "bad\x00name", "calls": 1},
    ]
    item = judged(3).model_copy(update={"sample": {"usage_by_role": entries}})
    tally = RunTally()
    assert store.add_output_items(run.id, [item], tally=tally) and tally.complete
    kept, read_back = store.summarize(run.id, CRITERIA, tally), store.summarize(run.id, CRITERIA)
    assert kept == read_back
    roles = {(usage.role, usage.model_name): usage.invocation_count for usage in read_back.per_role_usage}
    assert roles[("simulated_user", long)] == 3 and roles[("attacker", "bad\ufffdname")] == 1


def test_a_target_or_judge_model_name_longer_than_its_column_is_stored_clipped(store):
    """A sample's model comes from the data ({item, sample} rows): one past the column's 256
    characters is stored and counted clipped, where it used to fail the whole batch's write."""
    run = new_run(store)
    long = "t" * 300
    item = judged(3).model_copy(update={"sample": {"model": long, "usage": {"prompt_tokens": 4}}})
    judge = item.results[1].model_copy(update={"properties": {"usage": {"model": "j" * 300, "calls": 1}}})
    item = item.model_copy(update={"results": [item.results[0], judge]})
    tally = RunTally()
    assert store.add_output_items(run.id, [item, judged(10)], tally=tally) and tally.complete
    kept, read_back = store.summarize(run.id, CRITERIA, tally), store.summarize(run.id, CRITERIA)
    assert kept == read_back and read_back.result_counts.total == 2
    roles = {(usage.role, usage.model_name): usage.invocation_count for usage in read_back.per_role_usage}
    assert roles[("target", "t" * 256)] == 1 and roles[("judge", "j" * 256)] == 1


def test_rows_inserted_many_to_a_statement_are_counted_one_by_one(store):
    """SQLite takes a large batch's rows many to a statement; what each statement inserted is still
    counted exactly, so a batch that meets stored items is told from one that does not."""
    run = new_run(store)
    fresh = RunTally()
    store.add_output_items(run.id, [judged(index) for index in range(250)], tally=fresh)
    assert fresh.complete and fresh.written == 250
    overlapping = RunTally()
    store.add_output_items(run.id, [judged(index) for index in range(240, 490)], tally=overlapping)  # 240..249 there
    assert not overlapping.complete
    assert store.done_item_ids(run.id) == set(range(490))
    assert store.summarize(run.id, CRITERIA).result_counts.total == 490
