"""A run request: what a run is, checked once where it comes in and stored whole with the run.

Every door builds one (``assay run`` from eval.yaml, the API from a ``POST .../runs`` body, a worker
from a stored run) and ``prepare_request`` makes it ready to execute, the same way for each. A run
is stored as its wire ``data_source``, its ``options`` (``RunSettings``) and, when a local process
started it, the ``inputs`` that process brought (eval.yaml's models, agents, target and evaluator
files): with those stored, ``assay run --resume`` or any worker on the store can finish it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from assay.dataset import Dataset
from assay.errors import ConfigError
from assay.evaluators.catalog import Catalog
from assay.evaluators.custom import Kind, custom_spec
from assay.llm import CacheMode, ModelRegistry
from assay.llm.config import ModelConfig
from assay.results.stored import Run, RunSettings
from assay.run.definition import EvalDefinition
from assay.run.runner import PreparedRun, prepare, start
from assay.run.sources import FILE_PATH, agents_in, dataset_for, file_digest, lookup_in, target_for
from assay.simulate.runs import scenario_dataset
from assay.simulate.settings import SimulationSettings
from assay.store import Store
from assay.targets import TargetSpec
from assay.targets.agents import AgentConfig
from assay.targets.prompt_agents import as_prompt_agent
from assay.targets.tools import ToolTimeouts


class LocalEvaluator(BaseModel):
    """A custom evaluator from a file beside eval.yaml, kept by its content."""

    kind: Kind
    name: str
    version: str
    content: str


class RunInputs(BaseModel):
    """What a local process brought to its run beyond the data source: stored so another process
    can finish the run. API keys written into eval.yaml are never stored (``api_key_env`` is)."""

    models: list[ModelConfig] = Field(default_factory=list)
    default_model: str | None = None
    agents: list[AgentConfig] = Field(default_factory=list)
    evaluators: list[LocalEvaluator] = Field(default_factory=list)
    target: dict[str, Any] | None = None
    """eval.yaml's target (``TargetSpec`` as data)."""
    file_sha256: str | None = None
    """The digest of a ``file_path`` data source's file when the run started."""

    def stored(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"models": {"__all__": {"api_key"}}})

    @classmethod
    def of_registry(cls, models: ModelRegistry, target: TargetSpec | None = None) -> RunInputs:
        """What a command brings from its ``--models`` file: its models and agents, and its target."""
        return cls(
            models=list(models.configs.values()),
            default_model=models.default,
            agents=models.agents,
            target=target_data(target) if target is not None else None,
        )

    def registry(self, store: Store, mode: CacheMode) -> ModelRegistry:
        return ModelRegistry(self.models, cache=store, cache_mode=mode, default=self.default_model, agents=self.agents)

    def target_spec(self) -> TargetSpec | None:
        return target_from_data(self.target) if self.target is not None else None


class RunRequest(BaseModel):
    """One run, whichever door it came in by."""

    data_source: dict[str, Any]
    settings: RunSettings = Field(default_factory=RunSettings)
    inputs: RunInputs | None = None
    """Set for a run a local process started; None for one the API queued (the executor's models)."""
    project: str = "default"

    @classmethod
    def for_file(cls, path: Path, inputs: RunInputs, settings: RunSettings | None = None) -> RunRequest:
        """A local process's run over a file (or a folder of them) on its machine."""
        inputs.file_sha256 = file_digest(path)
        kind = "csv" if path.suffix.lower() == ".csv" else "jsonl"
        source = {"type": kind, "source": {"type": FILE_PATH, "path": str(path.resolve())}}
        return cls(data_source=source, settings=settings or RunSettings(), inputs=inputs)

    @classmethod
    def of(cls, run: Run) -> RunRequest:
        """The request a stored run was made from."""
        try:
            inputs = RunInputs.model_validate(run.inputs) if run.inputs else None
        except ValidationError as exc:  # a run stored by another version, or edited by hand
            raise ConfigError(f"run {run.id} cannot be read back: {exc.errors()[0]['msg']}") from None
        settings = run.options.model_copy(deep=True)  # the request may change them; the record stays as read
        return cls(data_source=run.data_source, settings=settings, inputs=inputs, project=run.project)


def prepare_request(
    request: RunRequest,
    definition: EvalDefinition,
    store: Store,
    catalog: Catalog,
    models: ModelRegistry | None,
    *,
    target: TargetSpec | None = None,
    dataset: Dataset | None = None,
) -> PreparedRun:
    """The one way a run is made ready: its items, its target, its models and its evaluators, from
    the request; checked through (``prepare``) before anything is executed.

    ``target`` and ``dataset`` are for the caller that already holds them (a Python target, items
    in memory); everything else comes from the request."""
    inputs, settings = request.inputs, request.settings
    mode = settings.cache or "use"
    if inputs is not None:
        models = inputs.registry(store, mode)
        for evaluator in inputs.evaluators:
            where = f"{evaluator.name} (stored with the run)"
            spec = custom_spec(evaluator.kind, evaluator.name, evaluator.version, evaluator.content, where)
            catalog.add(spec, replace=True)
        target = target or inputs.target_spec()
        if target is not None:  # an agent eval.yaml names may be one the project made through the API
            target = as_prompt_agent(target, agents_in(store, request.project))
    elif models is not None and settings.cache:
        models = models.with_cache_mode(settings.cache)
    if target is None:
        target = target_for(request.data_source, lookup_in(store, request.project), agents_in(store, request.project))
    if dataset is None:
        dataset = dataset_for(store, request.project, request.data_source, settings, inputs)
        if settings.limit:
            dataset = dataset.head(settings.limit)
    if inputs is not None and target is not None and target.simulation is not None:
        dataset = scenario_dataset(dataset, target.simulation)  # each row a scenario, played out first
    definition = dataclasses.replace(
        definition,
        evaluation_level=settings.evaluation_level,
        repeats=settings.repeats,
        trials=settings.trials,
        cluster_by=settings.cluster_by,
    )
    return prepare(definition, dataset, catalog, models, target)


def settings_of(definition: EvalDefinition, **given: Any) -> RunSettings:
    """The settings an eval defined in code implies (its level, repeats, trials, clusters)."""
    return RunSettings(
        evaluation_level=definition.evaluation_level,
        repeats=definition.repeats,
        trials=definition.trials,
        cluster_by=definition.cluster_by,
        **given,
    )


def start_request(prepared: PreparedRun, store: Store, request: RunRequest, *, queued: bool = False) -> Run:
    """Store the eval and the run ``request`` describes (``runner.start``), its inputs with it."""
    inputs = request.inputs.stored() if request.inputs is not None else None
    return start(
        prepared, store, request.data_source, request.settings, queued=queued, inputs=inputs, project=request.project
    )


def target_data(spec: TargetSpec) -> dict[str, Any]:
    """A target as data for the run's stored inputs; a Python callable or a response lookup cannot be."""
    if spec.function is not None or spec.lookup is not None or spec.red_team is not None:
        raise ValueError("only a model, agent or simulated-user target is stored with a run")
    data = dataclasses.asdict(dataclasses.replace(spec, simulation=None))
    data.pop("function"), data.pop("lookup"), data.pop("red_team")
    if spec.simulation is not None:
        data["simulation"] = dataclasses.asdict(spec.simulation)
    return data


def target_from_data(data: dict[str, Any]) -> TargetSpec:
    data = dict(data)
    simulation = data.pop("simulation", None)
    if simulation is not None:
        simulation = SimulationSettings(**{**simulation, "warnings": tuple(simulation.get("warnings") or ())})
    timeouts = data.pop("tool_timeouts", None) or {}  # a run stored before tools had timeouts has none
    kind: Literal["model", "callable", "agent", "responses", "echo"] = data.pop("kind")
    return TargetSpec(kind=kind, **data, simulation=simulation, tool_timeouts=ToolTimeouts(**timeouts))
