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
