"""``eval.yaml``: the azd optimizer format, extended with mappings, thresholds and levels.

    name: support-quality
    dataset: {local_uri: data.jsonl}          # or {name, version}, or dataset_file: data.jsonl
    item_schema: {...}                         # optional JSON Schema for items
    evaluation_level: turn                     # or conversation (also accepted under options)
    evaluators:
      - builtin.f1_score
      - name: builtin.rouge_score
        initialization_parameters: {rouge_type: rougeL}
        data_mapping: {response: "{{item.answer}}"}
        threshold: 0.4
      - {type: string_check, name: exact, input: "{{item.response}}", reference: "{{item.ground_truth}}", operation: eq}
    options: {concurrency: 16}

Every error names the file, the line and the field.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assay.config.agents import AgentDefinition, load_agent_config
from assay.config.yamlfile import BoundedLoader, load_lined, strip_lines
from assay.errors import ConfigError
from assay.llm import ModelConfig, parse_models
from assay.results.criterion import Criterion, as_criterion
from assay.run.clusters import check_cluster_by
from assay.run.criteria import GRADER_FIELDS
from assay.run.definition import EvalDefinition
from assay.run.repeats import check_repeats
from assay.run.trace_sources import TRACE_SOURCES, selection_of
from assay.run.trials import split_repeats
from assay.simulate.runs import conversation_gen_settings
from assay.simulate.settings import SimulationSettings
from assay.targets import TargetSpec
from assay.targets.agents import AgentConfig, parse_agents
from assay.targets.loop import DEFAULT_MAX_TOOL_ROUNDS
from assay.targets.tools import check_sources, check_timeouts

CRITERION_KEYS = {
    "name",
    "type",
    "version",
    "evaluator_name",
    "initialization_parameters",
    "data_mapping",
    "threshold",
    "local_uri",
    "reducer",
    "models",
}
GRADER_KEYS = {"input", "reference", "operation", "evaluation_metric", "pass_threshold"}
MULTI_KEYS = {"graders", "calculate_output", "pass_threshold"}
TOP_KEYS = {
    "name",
    "description",
    "dataset",
    "dataset_file",
    "dataset_reference",
    "evaluators",
    "models",
    "agents",
    "target",
    "simulation",
    "options",
    "evaluation_level",
    "item_schema",
    "metadata",
    # azd's eval.yaml (seed 002): read by the optimizer's commands, kept here so those files load.
    "agent",
    "max_samples",
    "trace_days",
    "tasks",
    "repeats",
    "cluster_by",
}


@dataclass
class DatasetRef:
    local_path: Path | None = None
    name: str | None = None
    version: str | None = None
    line: int | None = None
    """Where eval.yaml names the dataset, for an error about it."""
    traces: dict[str, Any] | None = None
    """A trace data source, written as the API takes it (``azure_ai_traces`` or ``azure_ai_trace_data_source``)."""


@dataclass
class EvalConfig:
    path: Path
    definition: EvalDefinition
    dataset: DatasetRef
    options: dict[str, Any] = field(default_factory=dict)
    criterion_lines: list[int] = field(default_factory=list)
    models: list[ModelConfig] = field(default_factory=list)
    local_evaluators: list[tuple[str, str, Path]] = field(default_factory=list)
    """Custom evaluators given by ``local_uri``: (name, version, file)."""
    target: TargetSpec | None = None
    """``target:`` a model or an agent that generates the responses first."""
    agents: list[AgentConfig] = field(default_factory=list)
    agent: AgentDefinition | None = None
    """azd's ``agent.config``, read: the configuration ``assay optimize`` starts from."""
    target_line: int | None = None
    """The line of ``target:`` (or azd's ``agent:``), which an unknown agent's error points at."""

    @property
    def eval_model(self) -> str | None:
        """The judge model criteria use when they name none (azd's ``options.eval_model``)."""
        name = self.options.get("eval_model")
        return None if name is None else str(name)

    def line_of_criterion(self, index: int) -> int | None:
        return self.criterion_lines[index] if 0 <= index < len(self.criterion_lines) else None


def load_eval_config(path: str | Path) -> EvalConfig:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such file", hint="pass the path of an eval.yaml")
    raw = load_lined(path)
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}:1: expected a mapping with name, dataset and evaluators")
    for key, line in _top_key_lines(path.read_text(encoding="utf-8-sig")).items():
        if key not in TOP_KEYS:
            close = difflib.get_close_matches(key, sorted(TOP_KEYS), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(sorted(TOP_KEYS))}"
            raise ConfigError(f"{path.name}:{line}: unknown key {key!r}", hint=hint)
    return _parse(path, raw)


def eval_config_from(path: Path, raw: dict[str, Any]) -> EvalConfig:
    """An eval.yaml mapping read elsewhere (``assay.formats.evalspec``): ``path`` is what errors name and
    what relative paths are relative to."""
    return _parse(path, raw)


OPTIONS = {
    "eval_model",
    "concurrency",
    "evaluation_level",
    "repeats",
    "cluster_by",
    # The agent optimizer's (assay optimize; Foundry's optimization job options).
    "optimization_model",
    "max_candidates",
    "max_stalls",
    "budget",
    "task_repeats",
    "optimization_config",
    "target_attributes",
    "simulation",
    "batch",
}
"""The keys an eval.yaml's ``options:`` may hold."""


def _top_key_lines(text: str) -> dict[str, int]:
    """Each top-level key and the line it is on."""
    node = yaml.compose(text, Loader=BoundedLoader)  # noqa: S506 - the bounded SafeLoader
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(key.value): key.start_mark.line + 1 for key, _ in node.value if isinstance(key, yaml.ScalarNode)}


def _parse(path: Path, raw: dict[str, Any]) -> EvalConfig:
    def fail(node: Any, message: str, hint: str | None = None) -> ConfigError:
        line = node.get("__line__", 1) if isinstance(node, dict) else raw.get("__line__", 1)
        return ConfigError(f"{path.name}:{line}: {message}", hint=hint)

    options = raw.get("options") or {}
    if not isinstance(options, dict):
        raise fail(raw, "'options' must be a mapping")
    unknown = sorted(str(key) for key in options if key != "__line__" and key not in OPTIONS)
    if unknown:  # a misspelt option would otherwise be dropped without a word, and its default used
        close = difflib.get_close_matches(unknown[0], sorted(OPTIONS), n=1)
        raise fail(
            options,
            f"options: unknown key {unknown[0]!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
            hint=f"the options are {', '.join(sorted(OPTIONS))}",
        )
    if not isinstance(options.get("batch", False), bool):
        raise fail(options, f"options.batch must be true or false, got {options['batch']!r}")
    level = raw.get("evaluation_level", options.get("evaluation_level", "turn"))
    if level not in ("turn", "conversation"):
        raise fail(raw, f"evaluation_level {level!r} must be 'turn' or 'conversation'")
    evaluators = raw.get("evaluators")
    if not isinstance(evaluators, list) or not evaluators:
        raise fail(raw, "'evaluators' must be a non-empty list", hint="e.g. evaluators: [builtin.f1_score]")
    lines = list(getattr(evaluators, "lines", [raw.get("__line__", 1)] * len(evaluators)))
    criteria = [_criterion(entry, _at(fail, lines[index]), index) for index, entry in enumerate(evaluators)]
    schema = raw.get("item_schema")
    try:
        judge_repeats, trials = split_repeats(strip_lines(raw.get("repeats", options.get("repeats"))), "repeats")
        repeats = check_repeats(judge_repeats, "repeats")
        cluster_by = raw.get("cluster_by", options.get("cluster_by"))
        cluster_by = check_cluster_by(cluster_by, "cluster_by") if cluster_by is not None else None
    except ConfigError as exc:
        raise fail(raw, exc.message) from None
    definition = EvalDefinition(
        name=str(raw.get("name") or path.stem),
        testing_criteria=criteria,
        item_schema=strip_lines(schema) if schema is not None else None,
        evaluation_level=level,
        repeats=repeats,
        trials=trials,
        cluster_by=cluster_by,
    )
    clean_options = strip_lines(options)
    clean_options.pop("evaluation_level", None)
    clean_options.pop("repeats", None)
    clean_options.pop("cluster_by", None)
    models = parse_models(raw.get("models"), where=f"{path.name}:{_line(raw.get('models'), raw)}: models")
    local = [
        (str(e["name"]), str(e.get("version", "local")), path.parent / str(e["local_uri"]))
        for e in evaluators
        if isinstance(e, dict) and e.get("local_uri")
    ]
    target = _target(raw.get("target"), fail, path.parent)
    if raw.get("simulation") is not None:
        if target is None:
            raise fail(
                raw["simulation"],
                "a simulation needs a target for the simulated user to talk to",
                hint="add target: {type: agent, name: ...} or {type: model, model: ...}",
            )
        target = dataclasses.replace(target, input_messages=None, simulation=_simulation(raw["simulation"], fail))
    agents = parse_agents(strip_lines(raw.get("agents")), where=f"{path.name}:{_line(raw.get('agents'), raw)}: agents")
    agents += [found] if (found := a2a_agent(target)) is not None else []
    agent = None
    if target is None and raw.get("agent") is not None:
        target, agent = _agent_target(path, raw["agent"], agents, clean_options, fail)
    dataset = _dataset(path, raw, fail)
    named = raw.get("target") if raw.get("target") is not None else raw.get("agent")
    target_line = None if named is None else _line(named, raw)
    return EvalConfig(
        path, definition, dataset, clean_options, lines, models, local, target, agents, agent, target_line
    )


TARGET_SHAPES = (
    "target must be {type: model, model: <name in models:>, sampling_params?, input_messages?, instructions?, "
    "tools?: [{python: FILE} | {mcp: {command | url}}], max_tool_rounds?, tool_timeout_s?} or "
    "{type: agent, name: <name in agents:>, version?, input_messages?, tool_descriptions?} or "
    "{type: a2a, url: <an A2A agent's base URL>, input_messages?} or "
    "{type: echo, input_messages?}"
)


A2A_NAME = "a2a:"
"""The name a ``target: {type: a2a, url}`` agent is known by: this, then its URL."""


def _input_messages(clean: dict[str, Any]) -> Any:
    messages = clean.get("input_messages")
    return {"type": "template", "template": messages} if isinstance(messages, list) else messages


def a2a_agent(target: TargetSpec | None) -> AgentConfig | None:
    """The ``agents:`` entry a ``target: {type: a2a, url}`` stands for."""
    if target is None or target.kind != "agent" or not (target.model or "").startswith(A2A_NAME):
        return None
    url = str(target.model).removeprefix(A2A_NAME)
    return AgentConfig(name=str(target.model), endpoint=url, protocol="a2a")


def _target(raw: Any, fail: Any, base: Path) -> TargetSpec | None:
    if raw is None:
        return None
    kind = raw.get("type", "model") if isinstance(raw, dict) else None
    if kind == "azure_ai_agent":
        kind = "agent"
    if kind == "a2a":  # an agent at a URL over A2A: the agents: entry it stands for (a2a_agent) names it
        url = raw.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise fail(raw, "target.url: the A2A agent's base URL (it serves /.well-known/agent-card.json)")
        clean = strip_lines(raw)
        return TargetSpec(kind="agent", model=A2A_NAME + url, input_messages=_input_messages(clean))
    named = isinstance(raw, dict) and raw.get("model" if kind == "model" else "name")
    if kind not in ("model", "agent", "echo") or not (named or kind == "echo"):
        raise fail(raw, TARGET_SHAPES)
    clean = strip_lines(raw)
    messages = _input_messages(clean)
    if kind == "echo":  # answers with what it is sent: prompts and assertions checked without a model
        return TargetSpec(kind="echo", input_messages=messages)
    if kind == "agent":
        descriptions = clean.get("tool_descriptions") or []
        if not isinstance(descriptions, list) or not all(isinstance(d, dict) and d.get("name") for d in descriptions):
            raise fail(raw, "target.tool_descriptions must be a list of {name, description, parameters?}")
        version = clean.get("version")
        return TargetSpec(
            kind="agent",
            model=str(clean["name"]),
            version=None if version is None else str(version),
            input_messages=messages,
            tool_descriptions=descriptions,
        )
    rounds = clean.get("max_tool_rounds", DEFAULT_MAX_TOOL_ROUNDS)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise fail(raw, f"target.max_tool_rounds must be a positive whole number, got {rounds!r}")
    instructions = clean.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise fail(raw, "target.instructions must be text: the agent's system prompt")
    try:
        tools = check_sources(clean["tools"], "target.tools", base) if clean.get("tools") is not None else []
        timeouts = check_timeouts(clean.get("tool_timeout_s"), "target.tool_timeout_s")
    except ConfigError as exc:
        raise fail(raw, exc.message, hint=exc.hint) from None
    return TargetSpec(
        kind="model",
        model=str(clean["model"]),
        sampling_params=clean.get("sampling_params") or {},
        input_messages=messages,
        instructions=instructions,
        tools=tools,
        max_tool_rounds=rounds,
        tool_timeouts=timeouts,
    )


AGENT_SHAPE = (
    "agent must be {name, kind?, version?, config?: .agent_configs/baseline/metadata.yaml, model?, "
    "tools?: [{python: FILE} | {mcp: {command | url}}]}"
)


def _agent_target(
    path: Path, raw: Any, agents: list[AgentConfig], options: dict[str, Any], fail: Any
) -> tuple[TargetSpec, AgentDefinition | None]:
    """azd's ``agent:``: an agent an endpoint serves (``agents:``), else the prompt agent its
    ``config`` describes, run on ``agent.model``, the config's model or ``options.eval_model``;
    without a config, a prompt agent the project made through the agents API."""
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise fail(raw, AGENT_SHAPE)
    clean = strip_lines(raw)
    version = None if clean.get("version") is None else str(clean["version"])
    hosted = any(a.name == clean["name"] for a in agents)
    if not clean.get("config"):  # served (agents:), or a prompt agent of the project, found when the run starts
        return TargetSpec(kind="agent", model=clean["name"], version=version), None
    try:
        definition = load_agent_config(path.parent / str(clean["config"]).replace("\\", "/"))
    except ConfigError as exc:
        raise fail(raw, f"agent.config: {exc.message}", hint=exc.hint) from None
    if hosted:  # an endpoint serves it; its config is where the optimizer starts from
        named = dataclasses.replace(definition, name=definition.name or clean["name"])
        return TargetSpec(kind="agent", model=clean["name"], version=version), named
    model = clean.get("model") or definition.model or options.get("eval_model")
    if not model:
        raise fail(raw, "agent.model: name the model the agent runs on", hint="or set model: in its metadata.yaml")
    sampling = {"tools": definition.function_tools()} if definition.tools else {}
    try:  # the tools' implementations, which tools.json only describes: the prompt agent then runs its loop
        tools = check_sources(clean["tools"], "agent.tools", path.parent) if clean.get("tools") is not None else []
    except ConfigError as exc:
        raise fail(raw, exc.message, hint=exc.hint) from None
    target = TargetSpec(
        kind="model",
        model=str(model),
        sampling_params=sampling,
        instructions=definition.system_prompt(),
        tools=tools,
    )
    return target, dataclasses.replace(definition, model=str(model), name=definition.name or clean["name"])


SIMULATION_SHAPE = (
    "simulation must be {model: <the model playing the user>, max_turns?: 10, repetitions?: 1, "
    "desired_num_turns?, sampling_params?, save_as?: <dataset name>}"
)


def _simulation(raw: Any, fail: Any) -> SimulationSettings:
    """``simulation:``: the dataset's rows are scenarios a model plays the user of, against ``target``."""
    if not isinstance(raw, dict) or not isinstance(raw.get("model"), str):
        raise fail(raw, SIMULATION_SHAPE)
    clean = strip_lines(raw)
    unknown = sorted(
        set(clean) - {"model", "max_turns", "repetitions", "desired_num_turns", "sampling_params", "save_as"}
    )
    if unknown:
        raise fail(raw, f"simulation: unknown key {unknown[0]!r}", hint=SIMULATION_SHAPE)
    try:
        params = {
            "type": "conversation_gen_preview",
            "model": clean["model"],
            "max_turns": clean.get("max_turns"),
            "num_conversations": None,
            "sampling_params": clean.get("sampling_params"),
        }
        settings = conversation_gen_settings(params)
        repetitions = clean.get("repetitions", 1)
        desired = clean.get("desired_num_turns")
        if isinstance(repetitions, bool) or not isinstance(repetitions, int) or not 1 <= repetitions <= 50:
            raise ConfigError(f"simulation.repetitions: a whole number from 1 to 50, got {repetitions!r}")
        if desired is not None and (isinstance(desired, bool) or not isinstance(desired, int) or desired < 1):
            raise ConfigError(f"simulation.desired_num_turns: a whole number of at least 1, got {desired!r}")
    except ConfigError as exc:
        raise fail(raw, exc.message.replace("item_generation_params.", "simulation.")) from None
    save_as = clean.get("save_as")  # eval.yaml saves the conversations only when asked
    return dataclasses.replace(
        settings, repetitions=repetitions, default_desired_turns=desired, save_as=str(save_as) if save_as else None
    )


def _line(node: Any, raw: dict[str, Any]) -> int:
    return int(node.get("__line__", 1)) if isinstance(node, dict) else int(raw.get("__line__", 1))


def _at(fail: Any, line: int) -> Any:
    """``fail`` for one list entry: its errors name the entry's own line."""
    return lambda node, message, hint=None: fail({"__line__": line}, message, hint)


def _criterion(entry: Any, fail: Any, index: int) -> Criterion:
    if isinstance(entry, str):
        return {"type": "azure_ai_evaluator", "name": entry.split(".", 1)[-1].split("@")[0], "evaluator_name": entry}
    if not isinstance(entry, dict):
        raise fail(None, f"evaluators[{index}]: expected a name such as builtin.f1_score or a mapping")
    entry = strip_lines(entry)
    kind = entry.get("type", "azure_ai_evaluator")
    known, shown = CRITERION_KEYS | GRADER_KEYS, CRITERION_KEYS
    if kind != "azure_ai_evaluator":  # OpenAI's graders, written as the Evals API takes them
        own = MULTI_KEYS if kind == "multi" else GRADER_FIELDS.get(kind, ())
        known = shown = {"name", "type", "id", "input", "reference", *own}
    unknown = set(entry) - known
    if unknown:
        hint = f"known keys: {', '.join(sorted(shown))}"
        raise fail(entry, f"evaluators[{index}]: unknown key {sorted(unknown)[0]!r}", hint=hint)
    if kind != "azure_ai_evaluator":
        if "name" not in entry:
            raise fail(entry, f"evaluators[{index}]: a {kind} criterion needs a 'name'")
        return as_criterion(dict(entry))  # binding checks the grader's own fields
    evaluator_name = entry.get("evaluator_name", entry.get("name"))
    if not isinstance(evaluator_name, str):
        raise fail(entry, f"evaluators[{index}]: 'name' must name an evaluator such as builtin.f1_score")
    criterion: Criterion = {
        "type": "azure_ai_evaluator",
        "name": entry.get("name") if "evaluator_name" in entry else evaluator_name.split(".", 1)[-1].split("@")[0],
        "evaluator_name": evaluator_name,
    }
    if "version" in entry or "local_uri" in entry:
        criterion["evaluator_version"] = str(entry.get("version", "local"))
    for key in ("initialization_parameters", "data_mapping", "threshold", "reducer", "models"):
        if key in entry:
            criterion[key] = entry[key]
    return criterion


def _dataset(path: Path, raw: dict[str, Any], fail: Any) -> DatasetRef:
    base = path.parent
    if "dataset_file" in raw:
        return DatasetRef(local_path=base / str(raw["dataset_file"]))
    dataset = raw.get("dataset", raw.get("dataset_reference"))
    if isinstance(dataset, str) and dataset.strip():
        return DatasetRef(local_path=base / dataset)  # dataset: data.jsonl
    if not isinstance(dataset, dict):
        raise fail(raw, "missing 'dataset'", hint="add dataset: {local_uri: data.jsonl} or dataset_file: data.jsonl")
    if dataset.get("local_uri"):
        return DatasetRef(local_path=base / str(dataset["local_uri"]), line=_line(dataset, raw))
    if dataset.get("traces") is not None:
        source = strip_lines(dataset["traces"])
        if not isinstance(source, dict) or source.get("type") not in TRACE_SOURCES:
            raise fail(dataset, f"dataset.traces.type must be one of {', '.join(sorted(TRACE_SOURCES))}")
        try:
            selection_of(source)
        except ConfigError as exc:
            raise fail(dataset["traces"], f"dataset.traces: {exc.message}") from None
        return DatasetRef(traces=source)
    if dataset.get("name"):
        version = dataset.get("version")
        return DatasetRef(name=str(dataset["name"]), version=None if version is None else str(version))
    raise fail(dataset, "dataset needs local_uri, name and version, or traces")
