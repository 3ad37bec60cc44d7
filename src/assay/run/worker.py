"""Run workers: claim runs from the store and execute them with the same engine as the CLI.

``assay serve`` runs workers in-process (threads); ``assay worker`` runs them on their own,
against the same database, on as many machines as wanted. A worker renews its run's lease while it
works; a run whose worker died is claimed again when the lease runs out and resumes where it
stopped, each item written once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator

from assay.dataset.ids import parse_dataset_id
from assay.errors import AssayError, ConfigError, RunStopped
from assay.evaluators.catalog import Catalog
from assay.llm import ModelRegistry
from assay.redteam.runs import attack_rows, plan_objectives, red_team_settings, save_attacks
from assay.results.stored import Run
from assay.run.engine import Executor, RunOptions
from assay.run.request import RunRequest, prepare_request
from assay.run.runner import finish_run
from assay.run.sources import definition_for
from assay.simulate.datasets import output_dataset, save_conversations
from assay.store import Store
from assay.store.base import lease_seconds
from assay.synth.runs import (
    generate_dataset,
    generate_scenario_dataset,
    scenario_generation_settings,
    synthetic_settings,
)
from assay.targets import TargetSpec

log = logging.getLogger("assay.worker")


class Worker:
    def __init__(
        self,
        store: Store,
        catalog: Callable[[str], Catalog],
        models: Callable[[], ModelRegistry],
        *,
        name: str | None = None,
        poll_seconds: float = 0.5,
        executor: Callable[[], Executor | None] | None = None,
        background: Callable[[], bool] | None = None,
    ) -> None:
        self.store = store
        self.background = background
        """Takes and does one of the API's jobs (insights, agent insight runs) when no run waits;
        whether there was one (``assay.api.background``)."""
        self.executor = executor
        """Makes each claimed run's executor (``assay worker --executor ray``); None: in this process."""
        self.catalog = catalog
        self.models = models
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
        self.poll_seconds = poll_seconds

    def serve(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                worked = self.work_once() or (self.background is not None and self.background())
            except Exception:  # noqa: BLE001 - a worker outlives any one run's failure
                log.exception("worker %s: unexpected error", self.name)
                worked = False
            if not worked:
                stop.wait(self.poll_seconds)

    def work_once(self) -> bool:
        run = self.store.claim_run(self.name)
        if run is None:
            return False
        log.info("worker %s: running %s", self.name, run.id)
        try:
            with self._lease_kept(run.id):  # generating a dataset or planning attacks outlasts a lease
                stored_eval = self.store.get_eval(run.eval_id)
                run = self._write_synthetic_items(run)
                run = self._plan_attacks(run)
                definition = definition_for(stored_eval, run)
                catalog, models = self.catalog(run.project), self.models()
                prepared = prepare_request(RunRequest.of(run), definition, self.store, catalog, models)
        except AssayError as exc:
            error = {"code": exc.__class__.__name__, "message": str(exc)}
            self.store.update_run(run.id, worker=self.name, status="failed", error=error)
            return True
        run_id = run.id
        options = RunOptions(
            keep_going=lambda: self.store.renew_lease(run_id, self.name) == "in_progress",
            worker=self.name,
            before_complete=self._outputs_of(run, prepared.binding.target if prepared.binding else None),
            executor=self.executor() if self.executor is not None else None,
            processes=1,  # workers are the unit of scale-out already: several share the cores
        )
        try:
            finish_run(prepared, run, self.store, options=options, claimed=True)
        except RunStopped as exc:  # a dead model endpoint, the store: the cause is the run's error
            log.warning("run %s stopped: %s", run.id, exc.message)
        except Exception:  # noqa: BLE001 - finish_run already marked the run failed with the cause
            log.exception("run %s failed", run.id)
        return True

    @contextlib.contextmanager
    def _lease_kept(self, run_id: str) -> Iterator[None]:
        """Renew the run's lease from a thread while the block runs, as the engine's watcher does
        while the run's items are evaluated: before, a synthetic dataset generated for longer than a
        lease was taken over by another worker, which generated it again (a second dataset version,
        every model call paid twice)."""
        done = threading.Event()

        def renew() -> None:
            while not done.wait(lease_seconds() / 3):
                try:
                    if self.store.renew_lease(run_id, self.name) != "in_progress":
                        return  # canceled or taken over: the run's next write says so to the worker
                except Exception as exc:  # noqa: BLE001 - the store away for a moment: try again
                    log.warning("run %s: its lease was not renewed (%s)", run_id, type(exc).__name__)

        keeper = threading.Thread(target=renew, name=f"lease of {run_id}", daemon=True)
        keeper.start()
        try:
            yield
        finally:
            done.set()
            keeper.join()

    def _write_synthetic_items(self, run: Run) -> Run:
        """A synthetic-data run's queries or test cases, written once and saved as a dataset the run
        names; a run picked up again reuses them."""
        queries, cases = synthetic_settings(run.data_source), scenario_generation_settings(run.data_source)
        if (queries is None and cases is None) or run.options.output_dataset_id:
            return run
        options = run.options.model_copy(deep=True)
        if queries is not None:
            written, shortfall = generate_dataset(self.store, run, self.models(), queries)
        else:
            assert cases is not None
            written, shortfall = generate_scenario_dataset(self.store, run, self.models(), cases)
            _, name, version = parse_dataset_id(written) or ("", "", "")
            options.output_datasets = [output_dataset("synthetic_test_cases", run.project, name, version)]
        options.output_dataset_id = written
        options.warnings += [shortfall] if shortfall else []
        self.store.update_run(run.id, worker=self.name, options=options)
        return dataclasses.replace(run, options=options)

    def _plan_attacks(self, run: Run) -> Run:
        """A red-team run's attacks, planned once and saved as a dataset; a run picked up again
        reuses them."""
        settings = red_team_settings(run.data_source)
        if settings is None or run.options.output_dataset_id:
            return run
        plan = plan_objectives(self.store, run.project, run.data_source, settings, self.models())
        rows = list(attack_rows(plan.objectives, settings))
        if not rows:
            raise ConfigError("nothing to attack: " + ("; ".join(plan.warnings) or "no objectives were chosen"))
        written, entry = save_attacks(self.store, run.project, run.id, rows)
        options = run.options.model_copy(deep=True)
        options.output_dataset_id, options.output_datasets, options.total_items = written, [entry], len(rows)
        options.warnings += plan.warnings
        self.store.update_run(run.id, worker=self.name, options=options)
        return dataclasses.replace(run, options=options)

    def _outputs_of(self, run: Run, target: TargetSpec | None) -> Callable[[], None] | None:
        """What the run saves before it completes: a simulation's conversations, when asked."""
        settings = target.simulation if target is not None else None
        if settings is None or settings.save_as is None:
            return None
        name = settings.save_as

        def save() -> None:
            saved = save_conversations(self.store, run.project, run.id, name)
            options = self.store.get_run(run.id).options.model_copy(deep=True)
            options.output_datasets.append(saved)
            self.store.update_run(run.id, worker=self.name, options=options)

        return save


def start_workers(
    store: Store,
    catalog: Callable[[str], Catalog],
    models: Callable[[], ModelRegistry],
    count: int,
    executor: Callable[[], Executor | None] | None = None,
    background: Callable[[], bool] | None = None,
) -> tuple[threading.Event, list[threading.Thread]]:
    """``count`` worker threads, each with a name of its own; set the event to stop them."""
    stop = threading.Event()
    prefix = f"{socket.gethostname()}:{os.getpid()}"
    workers = [
        Worker(store, catalog, models, name=f"{prefix}:{i}", executor=executor, background=background)
        for i in range(count)
    ]
    threads = [threading.Thread(target=w.serve, args=(stop,), name=f"assay-{w.name}", daemon=True) for w in workers]
    for thread in threads:
        thread.start()
    return stop, threads
