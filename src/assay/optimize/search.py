"""The search: GEPA's loop on assay's run engine.

Tasks are split by a seeded hash of their name into train, validation and test. The baseline is
scored on validation. Each iteration picks a parent from the per-task Pareto front (weighted by
the validation tasks it is best on), scores it on a minibatch of train tasks (epoch-shuffled),
has the reflection model rewrite one component (instructions, then tool descriptions, in turn)
from the failures and the judges' reasons, checks the change (leakage, tool schema, length) and
scores the child on the same minibatch; only a strict gain there earns a full validation run and
a place among the candidates. It stops at ``max_candidates`` accepted, ``max_stalls`` rejections in
a row, or a budget (metric calls, dollars, wall time).

Every scoring is an ordinary run in the store (its eval and run ids are reported). A task is
scored once per candidate; the state (``state.json``) is written after every step, so a job
killed at any point resumes where it was and, with the model cache, ends as it would have.
The best validation candidate is then compared with the baseline on the test split, per task:
★ only when the paired-bootstrap 95% interval of the gain lies above 0 and the gain is at least
0.03 (smaller gains are noise, as Foundry's docs say).
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
import uuid
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.config.agents import AgentDefinition
from assay.evaluators.catalog import Catalog
from assay.llm import Completion, ModelRegistry
from assay.optimize.candidate import Candidate, candidate_from, foundry_config, leaked, optimization_env, schema_change
from assay.optimize.reflect import Proposal, propose
from assay.results.stored import StoredItem
from assay.run import EvalDefinition, RunOptions, finish_run
from assay.run.request import RunRequest, prepare_request, settings_of, start_request
from assay.run.sources import SIMULATION
from assay.run.tasks import summarize_tasks, task_name
from assay.simulate.runs import INLINE_CASES, user_simulation_settings
from assay.stats.core import paired_bootstrap
from assay.store import Store
from assay.store.base import DEFAULT_PROJECT
from assay.sync import run_sync
from assay.targets import TargetSpec
from assay.targets.agents import find_agent
from assay.targets.launch import launched

MIN_GAIN = 0.03
SMALL_TEST_SPLIT = 30
"""Fewer tasks than this in the comparison split cannot tell a gain of ``MIN_GAIN`` from noise."""


@dataclass
class Settings:
    optimization_model: str
    max_candidates: int = 5
    max_stalls: int = 5
    max_metric_calls: int | None = None
    max_cost_usd: float | None = None
    max_wall_seconds: float | None = None
    seed: int = 0
    minibatch: int = 3
    validation: float = 0.3
    test: float = 0.2
    concurrency: int = 16
    model_search_space: list[str] = field(default_factory=list)
    """Other models the agent may run on (``optimization_config.model_search_space``)."""
    task_repeats: int = 3
    """Each task is scored this many times (the agent run once per trial, each with its own seed):
    a task's score is the mean of its trials, so one lucky answer does not decide a ranking."""
    tool_sources: list[dict[str, Any]] = field(default_factory=list)
    """Where the agent's tools are implemented (``agent.tools`` in eval.yaml): each candidate runs
    as an agent, its tool calls executed, and is scored on what it then answers."""
    hosted_agent: dict[str, str | None] | None = None
    """``{name, version}`` of an ``agents:`` entry that serves the agent: each candidate is scored
    by calling it with the candidate's configuration (``assay.targets.agents``), not as a prompt agent."""
    target_attributes: list[str] | None = None
    """What the search may change (``instructions``, ``model``, ``tools``, ``skills``); None: all of them."""
    simulation: dict[str, Any] | None = None
    """The tasks are scenarios: a simulated user (played by the evaluation model) talks with each
    candidate as ``default_simulation_configuration`` says, and the conversation is judged."""


@dataclass
class State:
    """Everything a job has done, as written to ``state.json``."""

    id: str
    settings: dict[str, Any]
    status: str = "in_progress"
    candidates: dict[str, dict[str, Any]] = field(default_factory=dict)
    """id → the candidate, and per task its score and the run that scored it."""
    order: list[str] = field(default_factory=list)
    """Candidate ids in the order they were made."""
    accepted: list[str] = field(default_factory=list)
    iteration: int = 0
    stalls: int = 0
    metric_calls: int = 0
    search_metric_calls: int | None = None
    """Task scorings when the search stopped, before the final comparison."""
    cost_usd: float = 0.0
    tokens: int = 0
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)
    """By role (``target``, ``judge``, ``reflection``): calls, cache hits, tokens and cost."""
    elapsed_seconds: float = 0.0
    events: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    project: str | None = None
    promotions: list[dict[str, Any]] = field(default_factory=list)
    request: dict[str, Any] | None = None
    """The create request as the SDK sent it (its fields are shown back on the job)."""
    created_at: int = field(default_factory=lambda: int(time.time()))
    updated_at: int = 0

    def save(self, path: Path) -> None:
        self.updated_at = int(time.time())
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps(self.__dict__, indent=1, ensure_ascii=False), encoding="utf-8")
        partial.replace(path)  # a kill mid-write leaves the last whole state

    @classmethod
    def load(cls, path: Path) -> State:
        return cls(**json.loads(path.read_text(encoding="utf-8")))


def split(tasks: list[dict[str, Any]], settings: Settings) -> dict[str, list[dict[str, Any]]]:
    """train / validation / test by a seeded hash of each task's name; an empty validation split
    borrows the train tasks (GEPA's rule), an empty test split leaves the comparison to validation."""
    parts: dict[str, list[dict[str, Any]]] = {"train": [], "validation": [], "test": []}
    for task in tasks:
        roll = zlib.crc32(f"{settings.seed}:{task['name']}".encode()) / 2**32
        part = (
            "test" if roll < settings.test else "validation" if roll < settings.test + settings.validation else "train"
        )
        parts[part].append(task)
    if not parts["train"]:
        parts["train"] = list(parts["validation"])
    if not parts["validation"]:
        parts["validation"] = list(parts["train"])
    return parts


class Optimizer:
    def __init__(
        self,
        definition: EvalDefinition,
        tasks: list[dict[str, Any]],
        baseline: AgentDefinition,
        store: Store,
        catalog: Catalog,
        models: ModelRegistry,
        settings: Settings,
        state_path: Path,
        state: State | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        validation: list[dict[str, Any]] | None = None,
    ) -> None:
        """``validation``: tasks of its own (a request's ``validation_dataset``); the train tasks
        are then all trained on, and the comparison is made on validation."""
        self.definition, self.store, self.catalog, self.models = definition, store, catalog, models
        self.settings, self.state_path, self.on_event = settings, state_path, on_event
        self.tasks = {task["name"]: task for task in [*tasks, *(validation or [])]}
        self.parts = (
            split(tasks, settings)
            if validation is None
            else {"train": list(tasks), "validation": list(validation), "test": []}
        )
        self.state = state or State(id=f"optjob_{uuid.uuid4().hex[:12]}", settings=dataclasses.asdict(settings))
        self.baseline = Candidate(baseline)
        self.held_out = [
            str(t.get(k) or "")
            for part in ("validation", "test")
            for t in self.parts[part]
            for k in ("query", "ground_truth", "test_case_description")
        ]
        self.started = time.monotonic() - self.state.elapsed_seconds
        self.current = self.state.iteration
        """The iteration under way (``state.iteration`` + 1 while one runs)."""

    # -- the loop ----------------------------------------------------------------------------

    def run(self) -> State:
        state = self.state
        self._remember(self.baseline)
        if self.baseline.id not in state.accepted:
            if not self._score(self.baseline, self.parts["validation"]):
                return self._finish()
            state.accepted.append(self.baseline.id)
            self._event("baseline", self.baseline, score=self._mean(self.baseline.id, "validation"))
        while (reason := self._stop_reason()) is None:
            # ``iteration`` counts finished iterations: one cut short by a kill is done again, from
            # the same seed, its scores and model calls answered from the state and the cache.
            self.current = state.iteration + 1
            if not self._iterate():
                break
            state.iteration = self.current
            self._save()
        state.stop_reason = state.stop_reason or reason
        return self._finish()

    def _iterate(self) -> bool:
        """One proposal; False when the budget ran out in the middle of it."""
        state, rng = self.state, random.Random(f"{self.settings.seed}:{self.current}")
        parent = self._candidate(self._parent(rng))
        batch = self._minibatch(self.current)
        if not self._score(parent, batch):
            return False
        before = [self._task_score(parent.id, t["name"]) for t in batch]
        if min(before) >= 1.0:
            state.stalls += 1
            self._event("skipped", parent, reason="the parent is perfect on this minibatch")
            return True
        allowed = self.settings.target_attributes
        components = [
            component
            for component in (
                "instructions",
                *(["model"] if self._untried_model(parent) else []),
                *(["tools"] if parent.config.tools else []),
                *(f"skill:{s.name}" for s in parent.config.skills),
            )
            if allowed is None or component.replace("skill:", "skills:").split(":")[0] in allowed
        ]
        if not components:  # say, only the model may change and every model was tried
            state.stalls += 1
            self._event("skipped", parent, reason="nothing the job may change is left to try")
            return True
        component = components[self.current % len(components)]
        outputs = self._outputs(parent.id, [t["name"] for t in batch])
        if component == "model":  # the next model of model_search_space, nothing else changed
            proposal = Proposal(dataclasses.replace(parent.config, model=self._untried_model(parent)), ("model",), "")
        else:
            proposal = run_sync(self._propose(parent, component, outputs, rng.randrange(2**31)))
            if proposal.completion is not None:
                self._reflected(proposal.completion)
        problem = proposal.problem or self._guard(proposal.config)
        if problem is not None or proposal.config is None:
            state.stalls += 1
            self._event("rejected", parent, reason=problem)
            return True
        child = Candidate(proposal.config, parent.id, proposal.mutation)
        if child.id in state.candidates:
            state.stalls += 1
            self._event("rejected", child, reason="the change gives a configuration already tried")
            return True
        self._remember(child, minibatch=[t["name"] for t in batch], reflection=proposal.prompt_sha256)
        if not self._score(child, batch):
            return False
        after = [self._task_score(child.id, t["name"]) for t in batch]
        if sum(after) <= sum(before):
            state.stalls += 1
            self._event("rejected", child, reason=f"no gain on the minibatch ({sum(before):.2f} → {sum(after):.2f})")
            return True
        if not self._score(child, self.parts["validation"]):
            return False
        state.accepted.append(child.id)
        state.stalls = 0
        self._event("accepted", child, score=self._mean(child.id, "validation"))
        return True

    def _untried_model(self, parent: Candidate) -> str | None:
        """The first model of the search space not yet tried with the parent's other settings."""
        for model in self.settings.model_search_space:
            trial = Candidate(dataclasses.replace(parent.config, model=model))
            if model != parent.config.model and trial.id not in self.state.candidates:
                return model
        return None

    async def _propose(self, parent: Candidate, component: str, outputs: list[StoredItem], seed: int) -> Any:
        model = self.models.get(self.settings.optimization_model)
        try:
            return await propose(model, parent, component, list(outputs), seed)
        finally:
            await model.aclose()

    def _guard(self, config: AgentDefinition | None) -> str | None:
        if config is None:
            return "no change"
        copied = leaked(config.instructions + " ".join(str(t.get("description")) for t in config.tools), self.held_out)
        if copied:
            return f"leakage: it copies held-out data ({copied!r})"
        changed = schema_change(self.baseline.config.tools, config.tools)
        if changed:
            return f"schema: {changed}"
        if len(config.instructions) > 2 * len(self.baseline.config.instructions) + 400:
            return "length: the instructions grew past twice the baseline's"
        return None

    def _stop_reason(self) -> str | None:
        state, settings = self.state, self.settings
        if (self.state_path.parent / "cancel").exists():
            return "cancelled"
        if len(state.accepted) - 1 >= settings.max_candidates:
            return "max_candidates"
        if state.stalls >= settings.max_stalls:
            return "max_stalls"
        if settings.max_cost_usd is not None and state.cost_usd >= settings.max_cost_usd:
            return "max_cost_usd"
        if settings.max_wall_seconds is not None and time.monotonic() - self.started >= settings.max_wall_seconds:
            return "max_wall_seconds"
        return None

    def _parent(self, rng: random.Random) -> str:
        """A candidate on the per-task Pareto front, drawn in proportion to the tasks it is best on."""
        wins: dict[str, int] = {}
        for task in self.parts["validation"]:
            scores = {cid: self._task_score(cid, task["name"]) for cid in self.state.accepted}
            best = max(scores.values())
            for cid, score in scores.items():
                if score == best:
                    wins[cid] = wins.get(cid, 0) + 1
        ordered = [cid for cid in self.state.accepted if cid in wins]
        return rng.choices(ordered, weights=[wins[cid] for cid in ordered])[0]

    def _minibatch(self, iteration: int) -> list[dict[str, Any]]:
        train, size = self.parts["train"], min(self.settings.minibatch, len(self.parts["train"]))
        start = (iteration - 1) * size
        epoch, offset = divmod(start, len(train))
        order = list(train)
        random.Random(f"{self.settings.seed}:epoch:{epoch}").shuffle(order)
        return [order[(offset + i) % len(order)] for i in range(size)]

    # -- scoring -----------------------------------------------------------------------------

    def _score(self, candidate: Candidate, tasks: list[dict[str, Any]], *, budgeted: bool = True) -> bool:
        """Score ``candidate`` on the tasks it has no score for yet, in one run; False when the
        metric-call budget does not allow it (the final comparison is not ``budgeted``: it is
        made however the search ended)."""
        scored = self.state.candidates[candidate.id]["tasks"]
        missing = [t for t in tasks if t["name"] not in scored]
        if not missing:
            return True
        limit = self.settings.max_metric_calls
        if budgeted and limit is not None and self.state.metric_calls + len(missing) > limit:
            self.state.stop_reason = "max_metric_calls"
            return False
        simulation = self.settings.simulation
        # A simulated conversation is repeated by its own conversation_repetitions, not by trials.
        definition = dataclasses.replace(self.definition, trials=1 if simulation else self.settings.task_repeats)
        with self._target(candidate) as target:
            request = RunRequest(
                data_source=self._tasks_source(missing, target),
                settings=settings_of(definition, optimize_job=self.state.id, candidate_id=candidate.id),
                project=self.state.project or DEFAULT_PROJECT,  # the job's: its candidates' runs are read there
            )
            if simulation is not None:
                target = dataclasses.replace(target, simulation=user_simulation_settings(request.data_source))
            prepared = prepare_request(request, definition, self.store, self.catalog, self.models, target=target)
            run = start_request(prepared, self.store, request)
            outcome = finish_run(prepared, run, self.store, options=RunOptions(concurrency=self.settings.concurrency))
        summary = summarize_tasks(self.store, run.id, prepared.criteria)
        for task in summary.tasks:
            scored[task.name] = {"score": task.score or 0.0, "run_id": run.id, "eval_id": run.eval_id}
        self.state.metric_calls += len(missing)
        self.state.tokens += sum(u.total_tokens for u in outcome.summary.per_model_usage)
        self.state.cost_usd += sum(u.cost_usd or 0.0 for u in outcome.summary.per_model_usage)
        for usage in outcome.summary.per_role_usage:
            self._count(usage.role, usage.invocation_count, usage.cache_hits, usage.total_tokens, usage.cost_usd)
        self._save()
        return True

    def _tasks_source(self, tasks: list[dict[str, Any]], target: TargetSpec) -> dict[str, Any]:
        """The run's data source: the tasks as items, or as the scenarios of a simulation (each
        named by its ``test_case_id``) played against ``target``, the evaluation model as the user."""
        simulation = self.settings.simulation
        if simulation is None:
            return {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": t} for t in tasks]}}
        cases = [{**task, "test_case_id": task["name"]} for task in tasks]
        named = (
            {"type": "azure_ai_model", "model": target.model}
            if target.kind == "model"
            else {"type": "azure_ai_agent", "name": target.model, "version": target.version}
        )
        return {
            "type": SIMULATION,
            "target": named,
            "source": {"type": INLINE_CASES, "test_cases": cases},
            "model_configuration": {"model": self.models.default},
            "default_simulation_configuration": simulation,
        }

    @contextmanager
    def _target(self, candidate: Candidate) -> Iterator[TargetSpec]:
        """What a candidate is scored as: the prompt agent its configuration makes, run in the loop;
        or the hosted agent, told the configuration (started for it when assay starts the agent)."""
        config, hosted = candidate.config, self.settings.hosted_agent
        if hosted is None:
            yield TargetSpec(
                kind="model",
                model=config.model,
                instructions=config.system_prompt(),
                sampling_params={"tools": config.function_tools()} if config.tools else {},
                tools=self.settings.tool_sources,
            )
            return
        name, version = str(hosted["name"]), hosted.get("version")
        handoff = foundry_config(candidate.id, config)
        agent = find_agent(self.models.agents, name, version)
        with launched(agent, env=optimization_env(handoff)) as running:
            endpoint = running.endpoint if agent.command else None
            yield TargetSpec(kind="agent", model=name, version=version, candidate=handoff, endpoint=endpoint)

    def _reflected(self, completion: Completion) -> None:
        price = self.models.get(self.settings.optimization_model).config.price
        cost = price.cost(completion.usage.prompt_tokens, completion.usage.completion_tokens) if price else None
        tokens = completion.usage.prompt_tokens + completion.usage.completion_tokens
        self._count("reflection", int(not completion.cached), int(completion.cached), tokens, cost)
        self.state.tokens += tokens
        self.state.cost_usd += cost or 0.0

    def _count(self, role: str, calls: int, cache_hits: int, tokens: int, cost: float | None) -> None:
        entry = self.state.usage.setdefault(role, {"calls": 0, "cache_hits": 0, "tokens": 0, "cost_usd": 0.0})
        entry["calls"] += calls
        entry["cache_hits"] += cache_hits
        entry["tokens"] += tokens
        entry["cost_usd"] += cost or 0.0

    def _outputs(self, cid: str, names: list[str]) -> list[StoredItem]:
        scored = self.state.candidates[cid]["tasks"]
        runs = {scored[name]["run_id"] for name in names}
        outputs = [output for run_id in sorted(runs) for output in self.store.iter_output_items(run_id)]
        return [output for output in outputs if task_name(output.datasource_item) in names]

    def _task_score(self, cid: str, name: str) -> float:
        return float(self.state.candidates[cid]["tasks"][name]["score"])

    def _mean(self, cid: str, part: str) -> float:
        names = [t["name"] for t in self.parts[part]]
        return sum(self._task_score(cid, n) for n in names) / len(names) if names else 0.0

    # -- bookkeeping -------------------------------------------------------------------------

    def _remember(self, candidate: Candidate, **lineage: Any) -> None:
        if candidate.id not in self.state.candidates:
            self.state.candidates[candidate.id] = {**candidate.as_dict(), "tasks": {}, "lineage": lineage}
            self.state.order.append(candidate.id)

    def _candidate(self, cid: str) -> Candidate:
        return candidate_from(self.state.candidates[cid])

    def _event(self, kind: str, candidate: Candidate, **extra: Any) -> None:
        event = {
            "event": kind,
            "iteration": self.current,
            "candidate": candidate.id,
            "strategy": candidate.strategy,
            "metric_calls": self.state.metric_calls,
            "elapsed_seconds": round(time.monotonic() - self.started, 2),
            **extra,
        }
        self.state.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def _save(self) -> None:
        self.state.elapsed_seconds = time.monotonic() - self.started
        self.state.save(self.state_path)

    def _finish(self) -> State:
        state = self.state
        if state.search_metric_calls is None:
            state.search_metric_calls = state.metric_calls
        if state.accepted:  # the baseline was scored: there is something to recommend
            state.result = self._select()
        state.status = "succeeded" if state.result else "failed"
        self._save()
        return state

    def _select(self) -> dict[str, Any]:
        """The best validation candidate, compared per task with the baseline on the test split."""
        # Ties go to the earlier candidate: a later one must do better to be preferred.
        order = self.state.accepted
        best = max(order, key=lambda cid: (self._mean(cid, "validation"), -order.index(cid)))
        compare_on = "test" if self.parts["test"] else "validation"
        for cid in sorted({self.baseline.id, best}):
            self._score(self._candidate(cid), self.parts[compare_on], budgeted=False)
        names = [t["name"] for t in self.parts[compare_on]]
        deltas = [self._task_score(best, n) - self._task_score(self.baseline.id, n) for n in names]
        gain = sum(deltas) / len(deltas) if deltas else 0.0
        interval = paired_bootstrap(deltas, seed=self.settings.seed)
        starred = best != self.baseline.id and interval is not None and interval[0] > 0 and gain >= MIN_GAIN
        warnings = []
        if len(names) < SMALL_TEST_SPLIT:
            warnings.append(
                f"the {compare_on} split has {len(names)} tasks: under {SMALL_TEST_SPLIT}, a gain of {MIN_GAIN} "
                "is within noise; a star needs more tasks to be trusted"
            )
        return {
            "best": best,
            "baseline": self.baseline.id,
            "compared_on": compare_on,
            "gain": gain,
            "interval": list(interval) if interval else None,
            "starred": starred,
            "optimistic": compare_on == "validation",
            "splits": {part: [t["name"] for t in self.parts[part]] for part in ("validation", "test")},
            "pareto": self._pareto(),
            "warnings": warnings,
        }

    def _pareto(self) -> list[str]:
        """The accepted candidates no other beats on every validation task (and on one strictly)."""
        names = [t["name"] for t in self.parts["validation"]]
        scores = {cid: [self._task_score(cid, n) for n in names] for cid in self.state.accepted}

        def beaten(cid: str) -> bool:
            mine = scores[cid]
            return any(
                all(o >= m for o, m in zip(other, mine, strict=True)) and other != mine
                for key, other in scores.items()
                if key != cid
            )

        return [cid for cid in self.state.accepted if not beaten(cid)]
