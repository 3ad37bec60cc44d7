"""A run that only computes spreads over processes: each item is stored once, with what one process
would have stored, and a share's failure or an interruption leaves the run resumable."""

import os
import threading

import pytest

from assay.dataset import Dataset
from assay.evaluators import evaluator, load_catalog
from assay.evaluators.decorator import spec_from_function
from assay.run import EvalDefinition, RunOptions, engine, finish_run, prepare, start
from assay.run import processes as spreading
from assay.run.engine import RunJob, execute
from assay.sync import run_sync
from tests.support.fixtures import recorded_batches

WORDS = "refund order account the a shipping password reset delivery status".split()
CRITERIA = [
    {
        "type": "azure_ai_evaluator",
        "name": "f1",
        "evaluator_name": "builtin.f1_score",
        "data_mapping": {"response": "{{item.response}}", "ground_truth": "{{item.ground_truth}}"},
    },
    {
        "type": "string_check",
        "name": "exact",
        "input": "{{item.response}}",
        "reference": "{{item.ground_truth}}",
        "operation": "eq",
    },
]


def rows(count: int) -> list[dict[str, str]]:
    def text(i: int, shift: int) -> str:
        return " ".join(WORDS[(i * 7 + j * shift) % len(WORDS)] for j in range(6))

    return [{"response": text(i, 3), "ground_truth": text(i, 3 if i % 5 == 0 else 4)} for i in range(count)]


def stored(store, run_id):
    return {
        item.datasource_item_id: (item.status, [(r.name, r.score, r.passed) for r in item.results])
        for item in store.iter_output_items(run_id)
    }


@pytest.fixture
def forks(monkeypatch):
    """The children forked (the real fork, counted)."""
    made = []
    fork = os.fork

    def counted():
        pid = fork()
        if pid:
            made.append(pid)
        return pid

    monkeypatch.setattr(spreading.os, "fork", counted)
    return made


def run_with(store, data, processes, on_stored=None):
    prepared = prepare(EvalDefinition("spread", CRITERIA), Dataset.from_content(data), load_catalog())
    return finish_run(
        prepared, start(prepared, store), store, options=RunOptions(processes=processes), on_stored=on_stored
    )


def test_a_spread_run_stores_each_item_once_as_one_process_would(store, forks):
    data = rows(2400)
    progress = []
    spread = run_with(store, data, 2, on_stored=progress.append)
    assert len(forks) == 1  # this process and one child
    alone = run_with(store, data, 1)
    assert len(forks) == 1
    assert spread.run.status == alone.run.status == "completed"
    assert spread.evaluated_now == alone.evaluated_now == 2400
    assert sum(progress) == 2400  # the child's batches reached the progress callback too
    assert stored(store, spread.run.id) == stored(store, alone.run.id)
    assert len(stored(store, spread.run.id)) == 2400
    # Exactly the same summary, the scores' means included (summed exactly, whatever order the
    # processes took the items in), and the same as the rows read back give.
    assert spread.summary == alone.summary
    assert spread.summary == store.summarize(spread.run.id, [("f1", "f1_score"), ("exact", "string_check")])


def test_a_failing_share_fails_the_run_which_resumes_in_one_process(store, forks, monkeypatch):
    execute = spreading.execute

    async def failing(job):
        if job.share.process == 1:  # the child fails partway, in the middle of a run of items
            owns = job.share.owns

            def failing_owns(index):
                if index == 1010:
                    raise ValueError("share 1 could not go on")
                return owns(index)

            job.share.owns = failing_owns
        return await execute(job)

    monkeypatch.setattr(spreading, "execute", failing)
    data = rows(2000)
    prepared = prepare(EvalDefinition("spread", CRITERIA), Dataset.from_content(data), load_catalog())
    run = start(prepared, store)
    with pytest.raises(ValueError, match="share 1 could not go on"):
        finish_run(prepared, run, store, options=RunOptions(processes=2))
    assert len(forks) == 1
    failed = store.get_run(run.id)
    assert failed.status == "failed" and "share 1 could not go on" in failed.error["message"]
    kept = set(stored(store, run.id))
    # The parent went on to the end: only what the child had taken and not done (its last run) is missing.
    assert len(set(range(2000)) - kept) <= spreading.CHUNK_ITEMS

    monkeypatch.setattr(spreading, "execute", execute)
    store.update_run(run.id, status="in_progress")
    resumed = finish_run(prepared, run, store, options=RunOptions(processes=1))
    assert resumed.run.status == "completed" and resumed.evaluated_now == 2000 - len(kept)
    assert set(stored(store, run.id)) == set(range(2000))


def test_an_interrupted_spread_run_stops_its_children_and_resumes(store, forks, monkeypatch):
    execute = spreading.execute

    async def interrupted(job):
        if job.share.process == 0:
            raise KeyboardInterrupt
        return await execute(job)

    monkeypatch.setattr(spreading, "execute", interrupted)
    data = rows(2000)
    prepared = prepare(EvalDefinition("spread", CRITERIA), Dataset.from_content(data), load_catalog())
    run = start(prepared, store)
    with pytest.raises(KeyboardInterrupt):
        finish_run(prepared, run, store, options=RunOptions(processes=2))
    assert store.get_run(run.id).status == "canceled"
    with pytest.raises(ChildProcessError):  # the child was waited for: it is not left running
        os.waitpid(forks[0], os.WNOHANG)
    kept = set(stored(store, run.id))
    assert kept <= set(range(2000))  # only the child's items, each stored at most once

    monkeypatch.setattr(spreading, "execute", execute)
    store.update_run(run.id, status="in_progress")
    resumed = finish_run(prepared, run, store, options=RunOptions(processes=2))
    assert resumed.run.status == "completed" and resumed.evaluated_now == 2000 - len(kept)
    assert set(stored(store, run.id)) == set(range(2000))


def test_a_share_told_to_stop_leaves_the_run_canceled(store, forks, monkeypatch):
    """A cancel a child heard (from the API, through its lease) ends the whole run canceled."""
    execute = spreading.execute

    async def canceled_in_child(job):
        evaluated = await execute(job)
        if job.share.process == 1:
            job.stopped = True
        return evaluated

    monkeypatch.setattr(spreading, "execute", canceled_in_child)
    outcome = run_with(store, rows(2000), 2)
    assert len(forks) == 1
    assert outcome.run.status == "canceled"
    assert set(stored(store, outcome.run.id)) == set(range(2000))  # what was done is kept


@evaluator
def users_own(response: str) -> float:
    return float(len(response) > 10)


def job_for(store, criteria, catalog=None, processes=None) -> RunJob:
    prepared = prepare(EvalDefinition("spread", criteria), Dataset.from_content(rows(10)), catalog or load_catalog())
    return RunJob("run", prepared.dataset, prepared.criteria, store, RunOptions(processes=processes))


def test_how_many_processes_a_run_gets(store, monkeypatch):
    monkeypatch.setattr(spreading.os, "sched_getaffinity", lambda _: {0, 1, 2, 3})
    builtins = job_for(store, CRITERIA)
    assert spreading.processes_for(builtins, 10_000) == 4  # auto: one per core
    assert spreading.processes_for(builtins, 2_500) == 2  # each process must have enough items
    assert spreading.processes_for(builtins, 1_999) == 1
    assert spreading.processes_for(job_for(store, CRITERIA, processes=1), 10_000) == 1

    catalog = load_catalog()
    catalog.add(spec_from_function(users_own))
    own = [*CRITERIA, {"type": "azure_ai_evaluator", "name": "own", "evaluator_name": "users_own"}]
    assert spreading.processes_for(job_for(store, own, catalog), 10_000) == 1  # the user's code: only when asked
    assert spreading.processes_for(job_for(store, own, catalog, processes=3), 10_000) == 3
    monkeypatch.setenv("ASSAY_RUN_PROCESSES", "2")
    assert spreading.processes_for(job_for(store, own, catalog), 10_000) == 2

    counted = []
    thread = threading.Thread(target=lambda: counted.append(spreading.processes_for(builtins, 10_000)))
    thread.start()
    thread.join()
    assert counted == [1]  # forking is for the main thread only


def test_a_run_with_a_judge_is_not_spread(store, models):
    judged = [
        *CRITERIA,
        {
            "type": "azure_ai_evaluator",
            "name": "coherence",
            "evaluator_name": "builtin.coherence",
            "initialization_parameters": {"deployment_name": "judge"},
            "data_mapping": {"query": "{{item.response}}", "response": "{{item.response}}"},
        },
    ]
    prepared = prepare(EvalDefinition("judged", judged), Dataset.from_content(rows(10)), load_catalog(), models=models)
    job = RunJob("run", prepared.dataset, prepared.criteria, store, RunOptions(processes=4), models=prepared.models)
    assert spreading.processes_for(job, 10_000) == 1


def test_the_processes_of_a_run_take_turns_at_writing():
    """The turn is a POSIX lock: another process cannot take it while one holds it, and can once it
    is given back."""
    with spreading.WriteTurns() as turns:
        assert turns.take(wait=False)
        to_child, from_parent = os.pipe()
        to_parent, from_child = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: may it take the turn now, and once the parent gives it back?
            try:
                os.write(from_child, b"%d" % turns.take(wait=False))
                os.read(to_child, 1)
                os.write(from_child, b"%d" % turns.take(wait=False))
            finally:
                os._exit(0)
        refused = os.read(to_parent, 1)
        turns.give()
        os.write(from_parent, b"!")
        taken = os.read(to_parent, 1)
        os.waitpid(pid, 0)
        for end in (to_child, from_parent, to_parent, from_child):
            os.close(end)
        assert (refused, taken) == (b"0", b"1")  # refused while the parent held it, taken once given


class Refusing:
    """A write turn another process holds for the first ``refusals`` offers."""

    def __init__(self, refusals):
        self.refusals = refusals
        self.offers = []
        self.held = False

    def take(self, *, wait):
        self.offers.append(wait)
        if self.refusals and not wait:
            self.refusals -= 1
            return False
        self.held = True
        return True

    def give(self):
        assert self.held
        self.held = False


class FailingShare:
    """A share of every item that fails when asked about ``at``, as a child whose share broke."""

    process = 1

    def __init__(self, at: int) -> None:
        self.at = at

    def owns(self, index: int) -> bool:
        if index == self.at:
            raise ValueError("this share could not go on")
        return True


def test_what_a_failing_share_read_before_it_failed_is_stored(store):
    # Items are judged a block of 100 at a time: the 50 read since the last block are judged and
    # stored too, so a resume has only what was never read to do.
    prepared = prepare(EvalDefinition("share", CRITERIA), Dataset.from_content(rows(300)), load_catalog())
    run = start(prepared, store)
    job = RunJob(run.id, prepared.dataset, prepared.criteria, store, RunOptions())
    job.share = FailingShare(at=150)
    with pytest.raises(ValueError, match="could not go on"):
        run_sync(execute(job))
    assert sorted(stored(store, run.id)) == list(range(150))


def test_a_share_whose_turn_is_taken_evaluates_on_and_writes_later(store, monkeypatch):
    written = recorded_batches(store, monkeypatch)
    prepared = prepare(EvalDefinition("turns", CRITERIA), Dataset.from_content(rows(1000)), load_catalog())
    run = start(prepared, store)
    turn = Refusing(refusals=3)
    progress = []
    job = RunJob(run.id, prepared.dataset, prepared.criteria, store, RunOptions(flush_every=100), progress.append)
    job.write_turn = turn
    assert run_sync(execute(job)) == 1000
    assert turn.offers[:3] == [False] * 3 and not turn.held
    # One batch, bigger, once the turn was free (offered again as the next block of items is judged).
    assert written[0] >= 100 + 3 * engine.TURN_RETRY_ITEMS
    assert sum(written) == sum(progress) == 1000
    assert set(stored(store, run.id)) == set(range(1000))
