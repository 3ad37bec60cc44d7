"""Items encoded where they were evaluated (``ItemRows``, as a Ray actor sends them) are stored and
counted as the same items handed to the writer whole."""

import pickle

from assay.store.item_rows import ItemRows, encode_item
from assay.store.tally import RunTally
from tests.store.test_tally import CRITERIA, judged, new_run


def stored(store, run_id: str) -> list[str]:
    """The run's items as JSON (a NaN score equals itself there), without what names the run."""
    return [item.model_dump_json(exclude={"run_id", "id", "created_at"}) for item in store.iter_output_items(run_id)]


def test_items_encoded_elsewhere_are_stored_and_counted_as_whole_ones(store):
    items = [judged(index) for index in range(70)]
    whole, encoded = new_run(store), new_run(store)
    whole_tally, encoded_tally = RunTally(), RunTally()
    assert store.add_output_items(whole.id, items, tally=whole_tally)
    # Encoded in another process (pickled across), and a batch that mixes both kinds.
    created = 1_700_000_000
    rows = pickle.loads(pickle.dumps([encode_item(encoded.id, item, created) for item in items[:50]]))
    assert all(isinstance(row, ItemRows) for row in rows)
    assert store.add_output_items(encoded.id, [*rows[:40], *items[50:]], tally=encoded_tally)
    assert store.add_output_items(encoded.id, rows[40:], tally=encoded_tally)

    assert encoded_tally.written == 70 and encoded_tally.complete
    assert stored(store, encoded.id) == stored(store, whole.id) and len(stored(store, whole.id)) == 70
    assert [item.created_at for item in store.iter_output_items(encoded.id, limit=50)] == [created] * 50
    summary = store.summarize(whole.id, CRITERIA, whole_tally)
    assert store.summarize(encoded.id, CRITERIA, encoded_tally) == summary == store.summarize(encoded.id, CRITERIA)
    assert summary.per_role_usage  # the target's, the simulated user's and the judges' calls came across


def test_an_encoded_item_already_stored_is_not_doubled(store):
    run = new_run(store)
    store.add_output_items(run.id, [judged(index) for index in range(5)])
    tally = RunTally()
    again = [encode_item(run.id, judged(index), 0) for index in range(3, 8)]
    assert store.add_output_items(run.id, again, tally=tally)
    assert [item.datasource_item_id for item in store.iter_output_items(run.id)] == list(range(8))
    assert not tally.complete  # 3 and 4 were there: the summary is read back from the rows
    assert store.summarize(run.id, CRITERIA, tally).result_counts.total == 8


def test_a_plain_result_is_written_as_the_general_encoding_writes_it():
    """``ResultForm.json`` splices the criterion's text around the score: for every score a float may
    hold (exponents either way, negative zero, the extremes) and both verdicts, the text is the one
    ``results_json`` writes for the same ``Result``. Where a criterion's own fields would not be
    written so (NUL, a lone surrogate), there is no form and its results take the general way."""
    import random

    from assay.store.item_rows import ResultForm, results_json

    form = ResultForm.of("azure_ai_evaluator", 'exact "é" \\ 名', "f1_score", 0.5)
    assert form is not None
    rng = random.Random(5)
    scores = [0.0, -0.0, 1.0, 0.1, 1e-7, 1e-300, 5e-324, 1e16, 1e22, 1.7976931348623157e308, -2.5]
    scores += [rng.random() * 10 ** rng.randint(-30, 30) for _ in range(500)]
    for score in scores:
        for passed in (False, True):
            assert f"[{form.json(score, passed)}]" == results_json([form.result(score, passed)])
    assert ResultForm.of("azure_ai_evaluator", "f1", "f1_score", 3.0) is not None
    assert ResultForm.of("azure_ai_evaluator", "nul\x00", "f1_score", 0.5) is None
    assert ResultForm.of("azure_ai_evaluator", "lone \ud800", "f1_score", 0.5) is None
