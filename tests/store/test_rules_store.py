"""Evaluation rules' events are taken once: two servers (two stores on one database, here two
threads with a store each) firing the same rule at once never take one event twice, and events
taken for a run that was never made (its server died in between) are taken again."""

from __future__ import annotations

import threading

from assay.store import Store

RULE = {"action": {"type": "continuousEvaluation", "evalId": "e"}, "eventType": "responseCompleted"}


def test_two_servers_take_each_event_once(store):
    store.put_rule("p", "r", RULE)
    for i in range(60):
        store.add_rule_event("p", "r", f"resp_{i}")
    store.add_rule_event("p", "r", "resp_0")  # a client's retry: one event
    eval_id = store.create_eval(name="e", data_source_config={"type": "custom"}, testing_criteria=[], project="p").id
    other = Store(store.url)
    taken: dict[str, list[str]] = {"a": [], "b": []}

    def fire(name: str, each: Store) -> None:
        for _ in range(20):  # each taking for a run it made, as the firer does
            run = each.create_run(eval_id=eval_id, data_source={"type": "jsonl"}, name=name, project="p")
            taken[name] += each.take_events("p", "r", name, run.id, lease=30)
            each.release_rule("p", "r", name)
            each.add_rule_event("p", "r", f"late_{name}_{run.id}")  # events keep coming meanwhile

    threads = [threading.Thread(target=fire, args=("a", store)), threading.Thread(target=fire, args=("b", other))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    taken["a"] += store.take_events("p", "r", "a", run_after(store, eval_id), lease=30)  # the last ones
    other.close()
    everything = taken["a"] + taken["b"]
    assert len(everything) == len(set(everything)) == 60 + 40  # each event once, none lost
    assert store.pending_since("p", "r")[0] == 0


def run_after(store: Store, eval_id: str) -> str:
    return str(store.create_run(eval_id=eval_id, data_source={"type": "jsonl"}, name="z", project="p").id)


def test_events_taken_for_a_run_never_made_are_taken_again(store):
    store.put_rule("p", "r", RULE)
    store.add_rule_event("p", "r", "resp_1")
    assert store.take_events("p", "r", "server-a", "pending:a", lease=0.0) == ["resp_1"]
    # server-a died before making its run (and its lease ran out): server-b takes the event again.
    assert store.take_events("p", "r", "server-b", "pending:b", lease=30) == ["resp_1"]
    assert store.take_events("p", "r", "server-c", "pending:c", lease=30) == []  # b holds the rule now
    assert store.pending_since("p", "r")[0] == 0
