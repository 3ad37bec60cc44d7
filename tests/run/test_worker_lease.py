"""A worker keeps its run's lease while it prepares the run (generates its synthetic dataset, plans
its attacks): before, preparing for longer than a lease let another worker take the run over and do
it all again (a second dataset version, every model call paid twice)."""

from __future__ import annotations

import threading

from assay.evaluators import load_catalog
from assay.llm import ModelRegistry
from assay.run.worker import Worker


def test_a_worker_preparing_a_run_renews_its_lease_until_it_is_done(store, monkeypatch):
    monkeypatch.setenv("ASSAY_LEASE_SECONDS", "3")
    created = store.create_eval(name="e", data_source_config={"type": "custom"}, testing_criteria=[])
    store.create_run(eval_id=created.id, data_source={"type": "jsonl"})
    worker = Worker(store, lambda project: load_catalog(store, project), ModelRegistry, name="server:1")
    run = store.claim_run(worker.name)
    assert run is not None
    claimed_until = store.get_run(run.id).lease_until
    renewed = threading.Event()
    renew = store.renew_lease

    def observed(run_id: str, name: str) -> str:
        answer = renew(run_id, name)
        renewed.set()
        return answer

    monkeypatch.setattr(store, "renew_lease", observed)
    with worker._lease_kept(run.id):
        assert renewed.wait(timeout=60)  # a third of the lease after the block began
        assert store.get_run(run.id).lease_until > claimed_until
        assert store.claim_run("server:2") is None
    assert not any(thread.name == f"lease of {run.id}" for thread in threading.enumerate())
