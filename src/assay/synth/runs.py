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
from dataclasses import dataclass
from typing import Any

from assay.dataset.ids import dataset_id
from assay.errors import ConfigError
from assay.llm import ModelRegistry
from assay.store import Store
from assay.synth.queries import Brief, Generated, generate_queries
from assay.target.agents import find_agent

SYNTHETIC = "azure_ai_synthetic_data_gen_preview"
MAX_SAMPLES = 1000
DOCUMENT_CHARS = 30_000


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
    count = params.get("samples_count")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_SAMPLES:
        raise ConfigError(f"{where}.samples_count: a whole number from 1 to {MAX_SAMPLES}, got {count!r}")
    model = params.get("model_deployment_name")
    if not isinstance(model, str) or not model:
        raise ConfigError(f"{where}.model_deployment_name: name the model that writes the queries")
    prompt, name, sources = params.get("prompt"), params.get("output_dataset_name"), params.get("sources") or []
    if prompt is not None and not isinstance(prompt, str):
        raise ConfigError(f"{where}.prompt: expected text")
    if (data_source.get("target") or {}).get("type") != "azure_ai_agent" and not prompt:
        raise ConfigError(f"{where}.prompt: say what queries to write (only an agent target can go without one)")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ConfigError(f"{where}.output_dataset_name: expected a dataset name")
    if not isinstance(sources, list) or len(sources) > 1:
        raise ConfigError(f"{where}.sources: at most one file id, as a list")
    source = sources[0] if sources else None
    if isinstance(source, dict):
        source = source.get("id") or source.get("file_id")
    if source is not None and not isinstance(source, str):
        raise ConfigError(f"{where}.sources: a file id such as file_...")
    _check_system_only(data_source.get("input_messages"))
    return SyntheticSettings(count, model, prompt, name, source)


def _check_system_only(messages: Any) -> None:
    if not isinstance(messages, dict) or messages.get("type") != "template":
        return
    roles = {m.get("role") for m in messages.get("template") or [] if isinstance(m, dict)}
    if roles - {"system", "developer"}:
        raise ConfigError("data_source.input_messages: with synthetic data, give system messages only "
                          "(each generated query is sent as the user's message)")  # fmt: skip


def with_query(messages: dict[str, Any] | None) -> dict[str, Any] | None:
    """The target's input: the system messages given, then the generated query as the user."""
    if messages is None:
        return None
    template = [*messages.get("template", []), {"role": "user", "content": "{{item.query}}"}]
    return {**messages, "template": template}


def generate_dataset(
    store: Store, project: str, run: dict[str, Any], models: ModelRegistry, settings: SyntheticSettings
) -> tuple[str, str | None]:
    """Write the queries, save them as the next version of the dataset; (its id, any shortfall)."""
    from assay.run.runner import run_sync

    brief = Brief(prompt=settings.prompt, document=_document(store, project, settings.source_file))
    target = run["data_source"].get("target") or {}
    if target.get("type") == "azure_ai_agent":
        agent = find_agent(models.agents, str(target.get("name")), target.get("version"))
        brief = Brief(prompt=settings.prompt, agent_instructions=agent.instructions or None,
                      tools=agent.tool_descriptions, document=brief.document)  # fmt: skip
    model = models.get(settings.model)
    model.check_credentials()
    # Seeded by what was asked, so the same request writes the same queries (and the cache makes a rerun free).
    seed = zlib.crc32(json.dumps(run["data_source"].get("item_generation_params"), sort_keys=True).encode())

    async def write() -> Generated:
        try:
            return await generate_queries(model, brief, settings.count, seed=seed)
        finally:
            await model.aclose()  # its client belongs to this event loop

    generated = run_sync(write())
    if not generated.rows:
        raise ConfigError(f"no queries could be generated: {generated.shortfall}")
    name = settings.dataset_name or f"synthetic-{run['id'].rsplit('_', 1)[-1][:8]}"
    content = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in generated.rows).encode()
    file = store.create_file(project=project, filename=f"{name}.jsonl", purpose="evals", content=content)
    versions = [r["version"] for r in store.list_datasets(project) if r["name"] == name]
    version = str(max((int(v) for v in versions if v.isdigit()), default=0) + 1)
    store.register_dataset(name=name, version=version, uri=file["id"], project=project, file_id=file["id"])
    return dataset_id(project, name, version), generated.shortfall


def _document(store: Store, project: str, file_id: str | None) -> str | None:
    if file_id is None:
        return None
    content = bytes(store.get_file(project, file_id, content=True)["content"])
    return content.decode("utf-8", errors="replace")[:DOCUMENT_CHARS]
