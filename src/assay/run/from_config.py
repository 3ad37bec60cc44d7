"""An eval.yaml made ready to run: its run request (data source, models, target, evaluator files),
its models named, its evaluators (built-in, registered and the files beside it) found. ``assay run``,
``assay optimize`` and the pytest plugin start here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.dataset import Dataset
from assay.errors import ConfigError, UnknownAgentError
from assay.evaluators.catalog import Catalog, load_catalog
from assay.evaluators.custom import kind_for, spec_from_file
from assay.llm import CacheMode, ModelRegistry
from assay.results.stored import Run
from assay.run.request import LocalEvaluator, RunInputs, RunRequest, prepare_request, settings_of, target_data
from assay.run.runner import PreparedRun
from assay.run.trace_sources import NO_TRACES_HINT, resolve, selection_of
from assay.store import DEFAULT_PROJECT

if TYPE_CHECKING:
    from assay.config.evalyaml import EvalConfig
    from assay.run.engine import ProgressCallback, RunOptions
    from assay.run.runner import RunOutcome
    from assay.store import Store


def config_models(
    config: EvalConfig, store: Store, cache_mode: CacheMode = "use", default: str | None = None
) -> ModelRegistry:
    return ModelRegistry(
        config.models, cache=store, cache_mode=cache_mode, default=default or config.eval_model, agents=config.agents
    )


def config_catalog(config: EvalConfig, store: Store) -> Catalog:
    """Built-ins, plugins, the store's registered evaluators and eval.yaml's local ones."""
    evaluators = load_catalog(store, DEFAULT_PROJECT)
    for name, version, file in config.local_evaluators:
        # `assay eval update` registers the file as this version and writes the version into eval.yaml:
        # the file beside eval.yaml is that evaluator (and, edited since, what the user means by it).
        evaluators.add(spec_from_file(file, name, version), replace=True)
    return evaluators


def config_request(
    config: EvalConfig,
    store: Store,
    *,
    cache: CacheMode = "use",
    limit: int | None = None,
    resumed: Run | None = None,
    notes: list[str] | None = None,
    batch: bool = False,
) -> RunRequest:
    """eval.yaml as a run request. A trace source's traces are resolved here, once; a resumed run
    keeps the items, traces and limit it started with (the models and evaluators are read again,
    API keys written into eval.yaml included)."""
    inputs = config_inputs(config)
    if resumed is not None and resumed.inputs:
        stored = RunRequest.of(resumed)
        inputs.file_sha256 = stored.inputs.file_sha256 if stored.inputs else None
        stored.settings.cache = cache
        return stored.model_copy(update={"inputs": inputs})
    limit = limit or (resumed.options.limit if resumed is not None else None)
    settings = settings_of(
        config.definition, cache=cache, limit=limit, batch=batch or config.options.get("batch") is True
    )
    ref = config.dataset
    if ref.traces is not None:
        data_source = ref.traces
        settings.traces = (resumed.options.traces if resumed is not None else None) or _resolved(config, store, notes)
    elif ref.local_path is not None:
        _check_exists(config, ref.local_path)
        return RunRequest.for_file(ref.local_path, inputs, settings)
    else:
        assert ref.name is not None
        record = store.get_dataset(ref.name, ref.version)
        if record["file_id"]:  # saved by a simulation or a generator, or uploaded through the API
            # (a CSV file is read as CSV by its name whatever the type says)
            data_source = {"type": "jsonl", "source": {"type": "file_id", "id": record["file_id"]}}
        else:
            _check_exists(config, Path(record["uri"]), f"dataset {ref.name}@{record['version']} is")
            return RunRequest.for_file(Path(record["uri"]), inputs, settings)
    return RunRequest(data_source=data_source, settings=settings, inputs=inputs)


def _check_exists(config: EvalConfig, file: Path, what: str = "dataset") -> None:
    """Refuse, naming eval.yaml's line, a dataset that is not there, before anything reads it (a
    folder is a dataset too: its JSONL and CSV files)."""
    if file.exists():
        return
    where = f"{config.path.name}:{config.dataset.line}" if config.dataset.line else config.path.name
    written = file.relative_to(config.path.parent) if file.is_relative_to(config.path.parent) else file
    raise ConfigError(
        f"{where}: {what} {written}: not found (looked for {file.resolve()})",
        hint=f"a dataset's path in {config.path.name} is relative to its folder",
    )


def config_inputs(config: EvalConfig) -> RunInputs:
    """What eval.yaml brings beyond its data: its models, agents, target and evaluator files."""
    evaluators = [
        LocalEvaluator(kind=kind_for(file), name=name, version=version, content=file.read_text(encoding="utf-8"))
        for name, version, file in config.local_evaluators
    ]
    return RunInputs(
        models=config.models,
        default_model=config.eval_model,
        agents=config.agents,
        evaluators=evaluators,
        target=target_data(config.target) if config.target is not None else None,
    )


def _resolved(config: EvalConfig, store: Store, notes: list[str] | None) -> dict[str, Any]:
    assert config.dataset.traces is not None
    found = resolve(store, DEFAULT_PROJECT, selection_of(config.dataset.traces), config.definition.evaluation_level)
    if not found.trace_ids:
        raise ConfigError(f"{config.path.name}: no stored traces match dataset.traces", hint=NO_TRACES_HINT)
    if notes is not None:
        notes.extend([*(found.report.lines() if found.report else []), *found.notes])
    return found.options()


def prepare_config(
    config: EvalConfig, request: RunRequest, store: Store, *, dataset: Dataset | None = None
) -> PreparedRun:
    """``prepare_request`` with a criterion's or the target's error pointed at its line of eval.yaml."""
    try:
        return prepare_request(
            request, config.definition, store, load_catalog(store, DEFAULT_PROJECT), None, dataset=dataset
        )
    except ConfigError as exc:
        line = config.line_of_criterion(exc.criterion_index) if exc.criterion_index is not None else None
        if isinstance(exc, UnknownAgentError):
            line = config.target_line
        if line is not None:
            exc.message = f"{config.path.name}:{line}: {exc.message}"
        raise


def run_config(
    config: EvalConfig,
    store: Store,
    *,
    limit: int | None = None,
    resume: str | None = None,
    options: RunOptions | None = None,
    on_stored: ProgressCallback | None = None,
    on_start: Callable[[Run, PreparedRun], None] | None = None,
) -> RunOutcome:
    """Run an eval.yaml (or resume run ``resume`` of it) through the one door: its run request,
    prepared, started and finished, as ``assay run`` does without its terminal. ``on_start`` is told
    the run and its size before any item is evaluated."""
    from assay.run.request import start_request
    from assay.run.runner import check_resumable, finish_run

    resumed = store.get_run(store.run_id_for(resume)) if resume else None
    mode: CacheMode = (resumed.options.cache if resumed is not None else None) or "use"
    request = config_request(config, store, cache=mode, limit=limit, resumed=resumed)
    prepared = prepare_config(config, request, store)
    if resumed is not None:
        check_resumable(resumed, prepared, store)
    run = resumed or start_request(prepared, store, request)
    if on_start is not None:
        on_start(run, prepared)
    return finish_run(prepared, run, store, options=options, on_stored=on_stored)
