"""A due schedule is fired by one server: of two stores on one database claiming the same firing
at once, exactly one moves ``next_fire`` on."""

from __future__ import annotations

import threading

from assay.store import Store

BODY = {"trigger": {"type": "OneTime", "triggerAt": "2026-01-01T00:00:00Z"}, "task": {"type": "Evaluation"}}


def test_two_servers_fire_a_trigger_once(store):
    store.put_schedule("p", "s", BODY, 100.0)
    other = Store(store.url)
    won: list[bool] = []
    barrier = threading.Barrier(2)

    def claim(each: Store) -> None:
        (due,) = each.due_schedules(200.0)
        barrier.wait()
        won.append(each.claim_firing("p", "s", due["next_fire"], None))

    threads = [threading.Thread(target=claim, args=(each,)) for each in (store, other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    other.close()
    assert sorted(won) == [False, True]
    assert store.due_schedules(200.0) == [] and store.get_schedule("p", "s")["next_fire"] is None
