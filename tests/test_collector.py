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
