"""An eval.yaml made ready to run: its dataset read, its models named, its evaluators (built-in,
registered and the files beside it) found. ``assay run``, ``assay optimize`` and the pytest
plugin start here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.dataset import Dataset
from assay.errors import ConfigError
from assay.evaluators.catalog import Catalog, load_catalog
from assay.evaluators.custom import spec_from_file
from assay.llm import CacheMode, ModelRegistry
from assay.run.runner import PreparedRun, prepare
from assay.store import DEFAULT_PROJECT

if TYPE_CHECKING:
    from assay.config import EvalConfig
    from assay.store import Store


def config_dataset(config: EvalConfig, store: Store) -> Dataset:
    """The dataset eval.yaml names: a local file, or a registered dataset by name and version."""
    ref = config.dataset
    if ref.local_path is not None:
        return Dataset.from_path(ref.local_path)
    if ref.name is None:
        raise ConfigError(f"{config.path.name}: dataset.traces is read by `assay run`", hint="name a file or dataset")
    record = store.get_dataset(ref.name, ref.version)
    if record["file_id"]:  # saved by a simulation or a generator, or uploaded through the API
        content = store.get_file(DEFAULT_PROJECT, record["file_id"], content=True)
        return Dataset.from_bytes(bytes(content["content"]), content["filename"])
    return Dataset.from_path(record["uri"])


def config_models(
    config: EvalConfig, store: Store, cache_mode: CacheMode = "use", default: str | None = None
) -> ModelRegistry:
    return ModelRegistry(config.models, cache=store, cache_mode=cache_mode, default=default or config.eval_model,
                         agents=config.agents)  # fmt: skip


def config_catalog(config: EvalConfig, store: Store) -> Catalog:
    """Built-ins, plugins, the store's registered evaluators and eval.yaml's local ones."""
    evaluators = load_catalog(store, DEFAULT_PROJECT)
    for name, version, file in config.local_evaluators:
        # `assay eval update` registers the file as this version and writes the version into eval.yaml:
        # the file beside eval.yaml is that evaluator (and, edited since, what the user means by it).
        evaluators.add(spec_from_file(file, name, version), replace=True)
    return evaluators


def prepare_config(config: EvalConfig, dataset: Dataset, catalog: Catalog, models: ModelRegistry) -> PreparedRun:
    """``prepare`` with a criterion's error pointed at its line of eval.yaml."""
    try:
        return prepare(config.definition, dataset, catalog, models=models, target=config.target)
    except ConfigError as exc:
        line = config.line_of_criterion(exc.criterion_index) if exc.criterion_index is not None else None
        if line is not None:
            exc.message = f"{config.path.name}:{line}: {exc.message}"
        raise
