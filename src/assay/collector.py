"""The garbage collector of a process assay owns (a server, a worker, a run from the command line),
set for throughput rather than for the smallest heap. A Ray actor keeps Ray's defaults: tuned, an
actor evaluating NLP metrics spent the same time an item.

Python's defaults collect the young generation every 700 allocations of container objects, and a
full collection walks every object alive, the interpreter's modules and the app included. A server
answering a hundred clients builds a page of dicts per request: young collections ran about a
hundred times a second, and each full collection stalled every request for 50–85 ms, which set the
slowest pages (``bench/api_load.py``). Tuned, the same server answered uncached pages at 1.1x the
rate with a p99 a fifth lower. Library calls (``assay.evaluate()`` in a user's process) leave the
collector as the user set it, but for the length of a run (``frozen_during``).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNG_THRESHOLD = 10_000
"""Allocations between young collections (Python's default is 700)."""
OLDER_THRESHOLD = 10
"""Collections of one generation between collections of the next (Python's default is 10)."""


_tuned = False


def tune_for_throughput() -> None:
    """Freeze what is alive now (modules, the app, the catalog: it lives as long as the process, so a
    full collection need never walk it again) and collect the young generation less often. Once per
    process: what a second freeze took in could never be collected, were it garbage later."""
    global _tuned
    if _tuned:
        return
    _tuned = True
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, OLDER_THRESHOLD, OLDER_THRESHOLD)


@contextlib.contextmanager
def frozen_during(*, even_if_tuned: bool = False) -> Iterator[None]:
    """Leave what is alive now out of the collector's walks until the block ends, then give it back,
    and collect the young generation as a tuned process does meanwhile (a 5,000-item F1 run made 80
    young collections at Python's default, 2% of its instructions).

    A run evaluated in a process nobody tuned (a library call) made a full collection walk the whole
    heap, the dataset it had just read and the catalog included, once every few thousand items: 55–90
    ms of a 5,000-item F1 run's 450. In a tuned process what lived at startup is frozen already, and
    a second freeze would keep for good what it took in; ``even_if_tuned`` freezes anyway (before a
    fork, when a collection in a child would copy the pages it shares) and gives nothing back."""
    tuned = gc.get_freeze_count() > 0
    if tuned and not even_if_tuned:
        yield
        return
    gc.freeze()
    thresholds = gc.get_threshold()
    if 0 < thresholds[0] < YOUNG_THRESHOLD:  # 0: the user turned collections off
        gc.set_threshold(YOUNG_THRESHOLD, OLDER_THRESHOLD, OLDER_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if not tuned:
            gc.unfreeze()
