"""Run data sources as the Evals API sends them, and the eval definition a stored eval implies."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from assay.dataset import Dataset
from assay.dataset.ids import parse_dataset_id
from assay.errors import ConfigError, NotFoundError
from assay.redteam.runs import RED_TEAM, red_team_settings
from assay.results.stored import Eval, Run, RunSettings
from assay.run.data_sources import parse_data_source
from assay.run.definition import EvalDefinition
from assay.run.trace_sources import TRACE_SOURCES, selection_of, trace_dataset
from assay.simulate.runs import (
    INLINE_CASES,
    conversation_gen_settings,
    scenario_dataset,
    user_simulation_settings,
)
from assay.simulate.settings import SimulationSettings
from assay.store import Store
from assay.synth.runs import (
    GENERATED,
    SYNTHETIC,
    WITH_SIMULATION,
    scenario_generation_settings,
    synthetic_settings,
    with_query,
)
from assay.targets import TargetSpec
from assay.targets.loop import DEFAULT_MAX_TOOL_ROUNDS
from assay.targets.prompt_agents import AgentLookup, as_prompt_agent
from assay.targets.retrieval import Lookup
from assay.targets.tools import ToolTimeouts, check_timeouts


class LocalInputs(Protocol):
    """What the process that started a run brought to it (``assay.run.request.RunInputs``): here, the
    digest of a ``file_path`` source's file when the run started."""

    @property
    def file_sha256(self) -> str | None: ...


FILE_SOURCES = {"jsonl", "csv"}
FILE_PATH = "file_path"
"""A data source's file on the machine that started the run: only a local process writes one (the
API refuses it), and a worker reads it only where the file is, unchanged."""
SIMULATION = "azure_ai_user_conversation_simulation"
TARGET_SOURCES = {"completions", "azure_ai_target_completions", "azure_ai_responses", SIMULATION, *GENERATED, RED_TEAM}
LATER_SOURCES = {"responses"}
WRITTEN_AT_START = {*GENERATED, RED_TEAM}
"""Data sources whose items a worker writes when it starts the run (generated queries, planned attacks)."""


def check_data_source(data_source: Any) -> None:
    """Refuse, before a run is created, a data source assay cannot read: checked against its kind's
    type (``assay.run.data_sources``) and by the kind's own checks, whose message comes first where
    they have one for the mistake (it says how to fix it); the type's names the field otherwise."""
    try:
        parse_data_source(data_source)
    except ConfigError as shape:
        with contextlib.suppress(TypeError, ValueError, LookupError, AttributeError):  # its reader choked on it
            _check_kind(data_source)  # its own message, where it has one, says how to fix it
        raise shape from None
    _check_kind(data_source)


def _check_kind(data_source: Any) -> None:
    if not isinstance(data_source, dict):
        raise ConfigError("data_source must be an object such as {type: jsonl, source: {type: file_id, id}}")
    kind = data_source.get("type")
    if not isinstance(kind, str):
        raise ConfigError(f"data_source.type must be a string such as 'jsonl', got {type(kind).__name__}")
    if kind in LATER_SOURCES:
        raise ConfigError(f"data_source type {kind!r} is not supported by this server yet")
    if kind in TRACE_SOURCES:
        selection_of(data_source)
        return
    if kind not in FILE_SOURCES | TARGET_SOURCES:
        raise ConfigError(
            f"unknown data_source type {kind!r}; use jsonl, csv, completions, azure_ai_target_completions, "
            f"azure_ai_responses, {SIMULATION}, {RED_TEAM}, azure_ai_traces or azure_ai_trace_data_source"
        )
    if kind in TARGET_SOURCES:
        target_for(data_source)
    if kind in WRITTEN_AT_START:
        synthetic_settings(data_source)
        scenario_generation_settings(data_source)
        red_team_settings(data_source)
        return  # its items are written when the run starts
    source = source_of(data_source)
    if kind == SIMULATION and isinstance(source, dict) and source.get("type") == INLINE_CASES:
        if not isinstance(source.get("test_cases"), list) or not source["test_cases"]:
            raise ConfigError(f"data_source.source: an {INLINE_CASES} source needs test_cases: [{{...}}, ...]")
        if data_source.get("data_mapping"):
            hint = "name the fields test_case_description, test_case_id, simulation_configuration"
            raise ConfigError(f"data_source.data_mapping: not allowed with {INLINE_CASES}", hint=hint)
        return
    if not isinstance(source, dict) or source.get("type") not in ("file_id", "file_content"):
        raise ConfigError("data_source.source must be {type: file_id, id} or {type: file_content, content: [...]}")
    if source["type"] == "file_content" and not isinstance(source.get("content"), list):
        raise ConfigError("data_source.source.content must be a list of {item: {...}} objects")
    if source["type"] == "file_content" and kind == "csv":
        raise ConfigError("a csv data source takes a file_id")


def dataset_for(
    store: Store,
    project: str,
    data_source: dict[str, Any],
    settings: RunSettings,
    inputs: LocalInputs | None = None,
) -> Dataset:
    """The run's items; for a trace source, from the traces resolved when the run was created."""
    if is_local_file(data_source):
        return Dataset.from_path(local_file(data_source, inputs))
    check_data_source(data_source)
    if data_source["type"] in TRACE_SOURCES:
        return trace_dataset(store, project, settings.traces or {}, settings.evaluation_level)
    if data_source["type"] in WRITTEN_AT_START:
        written = settings.output_dataset_id
        if not written:
            raise ConfigError("the generated items are written when the run starts; this run has none yet")
        source: dict[str, Any] = {"type": "file_id", "id": written}
    else:
        source = source_of(data_source)
    if source["type"] == INLINE_CASES:
        dataset = Dataset.from_content(source["test_cases"], name="test_cases")
    elif source["type"] == "file_content":
        dataset = Dataset.from_content(source["content"])
    else:
        record = store.get_file(project, _file_id(store, project, str(source.get("id"))), content=True)
        name = record["filename"]
        if data_source["type"] == "csv" and not name.lower().endswith(".csv"):
            name = f"{name}.csv"
        dataset = Dataset.from_bytes(bytes(record["content"]), name)
    simulation = simulation_settings(data_source)
    return dataset if simulation is None else scenario_dataset(dataset, simulation)


def is_local_file(data_source: dict[str, Any]) -> bool:
    source = data_source.get("source")
    return data_source.get("type") in FILE_SOURCES and isinstance(source, dict) and source.get("type") == FILE_PATH


def local_file(data_source: dict[str, Any], inputs: LocalInputs | None) -> Path:
    """A ``file_path`` source's file, checked to be the one the run started on."""
    source = data_source.get("source") or {}
    path = Path(str(source.get("path")))
    if inputs is None:
        raise ConfigError("data_source.source: a file_path source is read only by the process that started the run")
    if not path.exists():
        raise ConfigError(
            f"the run reads {path}, which this machine does not have",
            hint="finish it where it started: assay run EVAL_YAML --resume RUN_ID",
        )
    if inputs.file_sha256 is not None and file_digest(path) != inputs.file_sha256:
        raise ConfigError(
            f"{path} changed since the run started", hint="restore the file, or start a new run on the new data"
        )
    return path


def file_digest(path: Path) -> str:
    """The digest of a dataset's file, or of a folder's files (a folder of tasks), names included."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else "").encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def simulation_settings(data_source: dict[str, Any]) -> SimulationSettings | None:
    """A run whose items are scenarios for a simulated user (``azure_ai_user_conversation_simulation``,
    or a target run with ``conversation_gen_preview``)."""
    if data_source.get("type") in (SIMULATION, WITH_SIMULATION):
        return user_simulation_settings(data_source)
    params = data_source.get("item_generation_params")
    if data_source.get("type") != "azure_ai_target_completions" or not isinstance(params, dict):
        return None
    if params.get("type") != "conversation_gen_preview":
        raise ConfigError(
            "item_generation_params.type: a target run generates conversations with 'conversation_gen_preview'"
        )
    return conversation_gen_settings(params)


def _file_id(store: Store, project: str, given: str) -> str:
    """A run's ``file_id``: an uploaded file's id, or a dataset version id naming one."""
    named = parse_dataset_id(given)
    if named is None:
        return given
    owner, name, version = named
    if owner != project:
        raise NotFoundError(f"no dataset {given!r} in this project")
    row = store.get_dataset(name, version, project=project)
    if not row["file_id"]:
        hint = "upload it with datasets.upload_file(), or register it from an uploaded file id"
        raise ConfigError(f"dataset {name}@{version} points at {row['uri']}, not at an uploaded file", hint=hint)
    return str(row["file_id"])


def source_of(data_source: dict[str, Any]) -> Any:
    """Where the items are: ``source``, or under ``item_generation_params`` for stored responses."""
    if data_source.get("type") == "azure_ai_responses":
        return (data_source.get("item_generation_params") or {}).get("source")
    return data_source.get("source")


def lookup_in(store: Store, project: str) -> Lookup:
    return partial(store.get_response, project)


def agents_in(store: Store, project: str) -> AgentLookup:
    return partial(store.find_prompt_agent, project)


def target_for(
    data_source: dict[str, Any], lookup: Lookup | None = None, agents: AgentLookup | None = None
) -> TargetSpec | None:
    """What generates samples: the model or agent of ``completions`` / ``azure_ai_target_completions``
    runs (talking to a simulated user when the run generates conversations), or, for
    ``azure_ai_responses``, the stored responses ``lookup`` finds by id. An ``azure_ai_agent`` the
    project made through the agents API (``agents``) runs as its prompt agent; any other is one the
    operator configured (``agents:``)."""
    spec = _replying(data_source, lookup, agents)
    if spec is None:
        return None
    attacks = red_team_settings(data_source)
    if attacks is not None:
        return dataclasses.replace(spec, input_messages=None, red_team=attacks)
    settings = simulation_settings(data_source)
    if settings is None:
        return spec
    return dataclasses.replace(spec, input_messages=None, simulation=settings)


def _replying(data_source: dict[str, Any], lookup: Lookup | None, agents: AgentLookup | None) -> TargetSpec | None:
    kind = data_source.get("type")
    if kind == "azure_ai_responses":
        return _retrieval(data_source, lookup)
    if kind == "completions":
        model, sampling = data_source.get("model"), data_source.get("sampling_params") or {}
        tool_sets: list[str] = []
        rounds, timeouts = DEFAULT_MAX_TOOL_ROUNDS, ToolTimeouts()
    elif kind in ("azure_ai_target_completions", SIMULATION, RED_TEAM, *GENERATED):
        target = data_source.get("target") or {}
        if target.get("type") == "azure_ai_agent":
            name, version = target.get("name"), target.get("version")
            if not isinstance(name, str) or not name:
                raise ConfigError("an azure_ai_agent target needs the agent's name")
            descriptions = target.get("tool_descriptions") or []
            if not isinstance(descriptions, list) or not all(isinstance(d, dict) for d in descriptions):
                raise ConfigError("target.tool_descriptions must be a list of {name, description, parameters?}")
            version = None if version is None else str(version)
            messages = data_source.get("input_messages")
            if kind == SYNTHETIC:
                messages = with_query(messages)
            spec = TargetSpec(
                kind="agent", model=name, version=version, input_messages=messages, tool_descriptions=descriptions
            )
            return spec if agents is None else as_prompt_agent(spec, agents)
        if target.get("type") != "azure_ai_model":
            raise ConfigError(
                "data_source.target must be {type: azure_ai_model, model, sampling_params?} or "
                "{type: azure_ai_agent, name, version?}"
            )
        model, sampling = target.get("model"), target.get("sampling_params") or {}
        tool_sets, rounds = _tool_sets(target)
        timeouts = check_timeouts(target.get("tool_timeout_s"), "data_source.target.tool_timeout_s")
    else:
        return None
    if not isinstance(model, str) or not model:
        raise ConfigError(f"a {kind} data source needs the model to call")
    messages = data_source.get("input_messages")
    if kind == SYNTHETIC:
        messages = with_query(messages)
    return TargetSpec(
        kind="model",
        model=model,
        sampling_params=dict(sampling),
        input_messages=messages,
        tool_sets=tool_sets,
        max_tool_rounds=rounds,
        tool_timeouts=timeouts,
    )


def _tool_sets(target: dict[str, Any]) -> tuple[list[str], int]:
    """A model target's tools over the API: the names of tool sets the operator configured. Code,
    a module path, a command or a URL in a request is refused: they would run on the server."""
    named = target.get("tools")
    if named is None:
        named = []
    if not isinstance(named, list):
        raise ConfigError("data_source.target.tools must be a list of tool set names")
    for index, entry in enumerate(named):
        if not isinstance(entry, str) or not entry:
            raise ConfigError(
                f"data_source.target.tools[{index}]: a request names a tool set the server configured",
                hint="modules, commands, URLs and code are not taken over the API; the operator lists tool "
                "sets under tools: in the server's --models file",
            )
    rounds = target.get("max_tool_rounds", DEFAULT_MAX_TOOL_ROUNDS)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ConfigError("data_source.target.max_tool_rounds must be a positive whole number")
    return list(named), rounds


def _retrieval(data_source: dict[str, Any], lookup: Lookup | None) -> TargetSpec:
    params = data_source.get("item_generation_params")
    if not isinstance(params, dict) or params.get("type") != "response_retrieval":
        raise ConfigError(
            "an azure_ai_responses data source needs item_generation_params: {type: response_retrieval, "
            'data_mapping: {response_id: "{{item.resp_id}}"}, source}'
        )
    mapping = params.get("data_mapping")
    if not isinstance(mapping, dict) or "response_id" not in mapping:
        raise ConfigError(
            'item_generation_params.data_mapping must name the response id, e.g. {response_id: "{{item.resp_id}}"}'
        )
    turns = params.get("max_num_turns")
    if turns is not None and (not isinstance(turns, int) or turns < 1):
        raise ConfigError("item_generation_params.max_num_turns must be a positive integer")
    return TargetSpec(kind="responses", data_mapping=mapping, max_num_turns=turns, lookup=lookup)


def definition_for(stored_eval: Eval, run: Run) -> EvalDefinition:
    config = stored_eval.data_source_config or {}
    options = run.options
    return EvalDefinition(
        name=stored_eval.name or stored_eval.id,
        testing_criteria=stored_eval.testing_criteria,
        item_schema=config.get("item_schema") if config.get("type") == "custom" else None,
        evaluation_level=options.evaluation_level,
        repeats=options.repeats,
        trials=options.trials,
        cluster_by=options.cluster_by,
        check_items=options.item_schema_checks == "refuse",
    )
