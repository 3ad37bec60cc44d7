"""``azure_ai_synthetic_data_gen_preview`` runs: before the run evaluates anything, the worker has
the queries written (``assay.synth.queries``), saves them as the next version of a dataset (the
run's ``output_dataset_id``) and evaluates that dataset against the target. A worker that picks
the run up again reuses the saved dataset instead of writing new queries.

    item_generation_params: {type: synthetic_data_gen_preview, samples_count, model_deployment_name,
                             prompt?, output_dataset_name?, sources?: [file id]}

``prompt`` may be left out for an agent target: the agent's instructions and tools say what to
ask. ``input_messages`` may hold system messages only; each query is sent after them as the user.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from assay.dataset.ids import dataset_id
from assay.errors import ConfigError
from assay.llm import ModelRegistry
from assay.results.stored import Run
from assay.simulate.runs import dataset_name
from assay.store import Store
from assay.sync import run_sync
from assay.synth.queries import Brief, Generated, generate_queries, generate_scenarios
from assay.targets.agents import find_agent
from assay.targets.prompt_agents import PromptAgent

SYNTHETIC = "azure_ai_synthetic_data_gen_preview"
WITH_SIMULATION = "azure_ai_synthetic_data_generation_with_simulation"
GENERATED = frozenset({SYNTHETIC, WITH_SIMULATION})
"""Data sources whose items a worker writes when the run starts."""
MAX_SAMPLES = 1000
DOCUMENT_CHARS = 20_000_000
"""A source file is read to here; its sections are drawn from across all of it (``coverage_plan``)."""


@dataclass(frozen=True)
class SyntheticSettings:
    count: int
    model: str
    prompt: str | None
    dataset_name: str | None
    source_file: str | None


def synthetic_settings(data_source: dict[str, Any]) -> SyntheticSettings | None:
    if data_source.get("type") != SYNTHETIC:
        return None
    where = "data_source.item_generation_params"
    params = data_source.get("item_generation_params")
    if not isinstance(params, dict) or params.get("type") != "synthetic_data_gen_preview":
        shape = "{type: synthetic_data_gen_preview, samples_count, model_deployment_name}"
        raise ConfigError(f"{where}: expected {shape}")
    count = sample_count(params.get("samples_count"), f"{where}.samples_count")
    model = params.get("model_deployment_name")
    if not isinstance(model, str) or not model:
        raise ConfigError(f"{where}.model_deployment_name: name the model that writes the queries")
    prompt, sources = params.get("prompt"), params.get("sources") or []
    name = dataset_name(params.get("output_dataset_name"), f"{where}.output_dataset_name")
    if prompt is not None and not isinstance(prompt, str):
        raise ConfigError(f"{where}.prompt: expected text")
    if (data_source.get("target") or {}).get("type") != "azure_ai_agent" and not prompt:
        raise ConfigError(f"{where}.prompt: say what queries to write (only an agent target can go without one)")
    if not isinstance(sources, list) or len(sources) > 1:
        raise ConfigError(f"{where}.sources: at most one file id, as a list")
    source = sources[0] if sources else None
    if isinstance(source, dict):
        source = source.get("id") or source.get("file_id")
    if source is not None and not isinstance(source, str):
        raise ConfigError(f"{where}.sources: a file id such as file_...")
    _check_system_only(data_source.get("input_messages"))
    return SyntheticSettings(count, model, prompt, name, source)


@dataclass(frozen=True)
class ScenarioGeneration:
    """``synthetic_data_generation_configuration`` of a run that writes test cases, then simulates them."""

    count: int
    model: str
    prompt: str | None
    agent: tuple[str, str | None] | None
    source_file: str | None
    dataset_name: str | None


def scenario_generation_settings(data_source: dict[str, Any]) -> ScenarioGeneration | None:
    if data_source.get("type") != WITH_SIMULATION:
        return None
    where = "data_source.synthetic_data_generation_configuration"
    config = data_source.get("synthetic_data_generation_configuration")
    if not isinstance(config, dict):
        raise ConfigError(f"{where}: expected {{test_case_count, generation_sources: [{{type: prompt, prompt}}]}}")
    count = sample_count(config.get("test_case_count"), f"{where}.test_case_count")
    sources = config.get("generation_sources")
    if not isinstance(sources, list) or not sources or not all(isinstance(s, dict) for s in sources):
        raise ConfigError(f"{where}.generation_sources: a list of {{type: prompt | agent | file, ...}}")
    prompts, agent, file_id = [], None, None
    for index, source in enumerate(sources):
        kind, here = source.get("type"), f"{where}.generation_sources[{index}]"
        if kind == "prompt" and isinstance(source.get("prompt"), str) and source["prompt"].strip():
            prompts.append(source["prompt"])
        elif kind == "agent" and isinstance(source.get("agent_name"), str):
            version = source.get("agent_version")
            agent = (source["agent_name"], None if version is None else str(version))
        elif kind == "file" and isinstance(source.get("file_id") or source.get("id"), str):
            file_id = source.get("file_id") or source.get("id")
        else:
            raise ConfigError(
                f"{here}: use {{type: prompt, prompt}}, {{type: agent, agent_name, agent_version}} "
                "or {type: file, file_id}"
            )
    model = (data_source.get("model_configuration") or {}).get("model")
    if not isinstance(model, str) or not model:
        raise ConfigError("data_source.model_configuration.model: name the model that writes and plays the test cases")
    name = dataset_name(config.get("output_test_case_dataset_name"), f"{where}.output_test_case_dataset_name")
    return ScenarioGeneration(count, model, "\n\n".join(prompts) or None, agent, file_id, name)


def sample_count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SAMPLES:
        raise ConfigError(f"{where}: a whole number from 1 to {MAX_SAMPLES}, got {value!r}")
    return value


def _check_system_only(messages: Any) -> None:
    if not isinstance(messages, dict) or messages.get("type") != "template":
        return
    roles = {m.get("role") for m in messages.get("template") or [] if isinstance(m, dict)}
    if roles - {"system", "developer"}:
        raise ConfigError(
            "data_source.input_messages: with synthetic data, give system messages only "
            "(each generated query is sent as the user's message)"
        )


def with_query(messages: dict[str, Any] | None) -> dict[str, Any] | None:
    """The target's input: the system messages given, then the generated query as the user."""
    if messages is None:
        return None
    template = [*messages.get("template", []), {"role": "user", "content": "{{item.query}}"}]
    return {**messages, "template": template}


def generate_dataset(
    store: Store, run: Run, models: ModelRegistry, settings: SyntheticSettings
) -> tuple[str, str | None]:
    """Write the queries, save them as the next version of the dataset; (its id, any shortfall)."""
    project = run.project
    target = run.data_source.get("target") or {}
    agent = (str(target.get("name")), target.get("version")) if target.get("type") == "azure_ai_agent" else None
    brief = brief_for(store, project, models, settings.prompt, agent, settings.source_file)
    # Seeded by what was asked, so the same request writes the same queries (and the cache makes a rerun free).
    seed = zlib.crc32(json.dumps(run.data_source.get("item_generation_params"), sort_keys=True).encode())
    generated = write_rows(models, settings.model, brief, settings.count, seed, generate_queries)
    name = settings.dataset_name or f"synthetic-{run.id.rsplit('_', 1)[-1][:8]}"
    return save_rows(store, project, name, generated.rows), _notes(generated)


def _notes(generated: Generated) -> str | None:
    """What the run should say of the writing: a shortfall, and which of a document's sections were used."""
    partial = generated.coverage if generated.sections_shown < generated.sections_total else None
    return "; ".join(note for note in (generated.shortfall, partial) if note) or None


def generate_scenario_dataset(
    store: Store, run: Run, models: ModelRegistry, settings: ScenarioGeneration
) -> tuple[str, str | None]:
    """Write the simulation's test cases and save them as a dataset; (its id, any shortfall)."""
    project = run.project
    brief = brief_for(store, project, models, settings.prompt, settings.agent, settings.source_file)
    config = run.data_source.get("synthetic_data_generation_configuration")
    seed = zlib.crc32(json.dumps(config, sort_keys=True).encode())
    generated = write_rows(models, settings.model, brief, settings.count, seed, generate_scenarios)
    name = settings.dataset_name or f"synthetic-test-cases-{run.id.rsplit('_', 1)[-1][:8]}"
    return save_rows(store, project, name, generated.rows), _notes(generated)


def brief_for(
    store: Store,
    project: str,
    models: ModelRegistry,
    prompt: str | None,
    agent: tuple[str, str | None] | None,
    file_id: str | None,
) -> Brief:
    document = _document(store, project, file_id)
    if agent is None:
        return Brief(prompt=prompt, document=document)
    made = PromptAgent.found(partial(store.find_prompt_agent, project), agent[0], agent[1])
    if made is not None:  # one the project made through the agents API
        return Brief(
            prompt=prompt, agent_instructions=made.instructions, tools=made.tool_descriptions(), document=document
        )
    found = find_agent(models.agents, agent[0], agent[1])
    return Brief(
        prompt=prompt, agent_instructions=found.instructions or None, tools=found.tool_descriptions, document=document
    )


def write_rows(
    models: ModelRegistry,
    model_name: str,
    brief: Brief,
    count: int,
    seed: int,
    generate: Callable[..., Awaitable[Generated]],
) -> Generated:
    model = models.get(model_name)
    model.check_credentials()

    async def write() -> Generated:
        try:
            return await generate(model, brief, count, seed=seed)
        finally:
            await model.aclose()  # its client belongs to this event loop

    generated = run_sync(write())
    if not generated.rows:
        raise ConfigError(f"nothing could be generated: {generated.shortfall}")
    return generated


def save_rows(store: Store, project: str, name: str, rows: list[dict[str, Any]]) -> str:
    """``rows`` as the next version of dataset ``name``; its id."""
    content = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
    saved = store.save_dataset(project, name, content)
    return dataset_id(project, name, saved["version"])


def _document(store: Store, project: str, file_id: str | None) -> str | None:
    if file_id is None:
        return None
    content = bytes(store.get_file(project, file_id, content=True)["content"])
    return content.decode("utf-8", errors="replace")[:DOCUMENT_CHARS]
