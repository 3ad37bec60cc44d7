"""A process assay owns tunes its garbage collector once: what is alive is frozen, young
collections come less often; a second call changes nothing (a second freeze could keep garbage)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import gc, json
from assay.collector import tune_for_throughput
before = gc.get_threshold()
tune_for_throughput()
first = gc.get_freeze_count()
junk = [[i] for i in range(1000)]
tune_for_throughput()
print(json.dumps({"before": before, "after": gc.get_threshold(), "first": first, "second": gc.get_freeze_count()}))
"""


def test_the_collector_is_tuned_once_per_process():
    found = json.loads(subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout)
    assert found["before"][0] == 700  # Python's default, untouched by importing assay
    assert found["after"] == [10_000, 10, 10]
    assert found["first"] > 0 and found["second"] == found["first"]


LIBRARY_RUN = """
import gc, json, sys, tempfile
from pathlib import Path
from assay.dataset import Dataset
from assay.evaluators import load_catalog
from assay.run import EvalDefinition, RunOptions, finish_run, prepare, start
from assay.store import Store

if sys.argv[1] == "tuned":
    from assay.collector import tune_for_throughput
    tune_for_throughput()
if sys.argv[1] == "off":
    gc.set_threshold(0)
before, thresholds = gc.get_freeze_count(), gc.get_threshold()
young = []
seen = []
folder = Path(tempfile.mkdtemp())
(folder / "data.jsonl").write_text('{"response": "a b", "ground_truth": "a c"}\\n' * 3)
criteria = [{"type": "string_check", "name": "same", "input": "{{item.response}}", "reference": "a b", "operation": "eq"}]
prepared = prepare(EvalDefinition(name="probe", testing_criteria=criteria), Dataset.from_path(folder / "data.jsonl"), load_catalog())
store = Store(f"sqlite:///{folder / 'store.db'}")
outcome = finish_run(prepared, start(prepared, store), store, options=RunOptions(processes=1), on_stored=lambda n: (seen.append(gc.get_freeze_count()), young.append(gc.get_threshold()[0])))
print(json.dumps({"before": before, "during": seen, "after": gc.get_freeze_count(), "status": outcome.run.status,
                  "thresholds": [thresholds, young, gc.get_threshold()]}))
"""


def _library_run(mode: str) -> dict[str, object]:
    probe = subprocess.run([sys.executable, "-c", LIBRARY_RUN, mode], capture_output=True, text=True, check=True)
    found: dict[str, object] = json.loads(probe.stdout)
    return found


def test_a_library_run_leaves_what_lived_before_it_out_of_collections_and_gives_it_back():
    found = _library_run("untuned")
    assert found["status"] == "completed"
    assert found["before"] == 0 and found["after"] == 0  # the user's collector as they left it
    assert found["during"] and all(count > 0 for count in found["during"])  # type: ignore[union-attr]
    # Young collections as a tuned process makes them, for the run's length only.
    assert found["thresholds"] == [[700, 10, 10], [10_000], [700, 10, 10]]


def test_a_library_run_leaves_collections_off_when_the_user_turned_them_off():
    found = _library_run("off")
    assert found["status"] == "completed"
    assert found["thresholds"] == [[0, 10, 10], [0], [0, 10, 10]]


def test_a_tuned_process_freezes_nothing_more_for_a_run():
    found = _library_run("tuned")
    assert found["status"] == "completed"
    before = found["before"]
    assert isinstance(before, int) and before > 0
    # Frozen objects that die leave the count; a second freeze would have added the catalog and the
    # dataset, loaded after the process was tuned.
    assert found["during"] and all(count <= before for count in found["during"])  # type: ignore[union-attr]
    assert found["after"] <= before  # type: ignore[operator]
