"""Foundry's generation jobs. ``datasets.begin_create_generation_job`` (``POST /data_generation_jobs``)
writes an evaluation dataset; ``evaluators.begin_create_generation_job`` (``POST
/evaluator_generation_jobs``) writes a rubric evaluator.

Both are long-running operations, as in Foundry. The create checks the request and stores the job
``queued``; a mistake in the request (an unknown model, agent, file or dataset, a missing field) is
a 400 and no job. The create is answered 201 with ``Operation-Location`` naming the job, and the
server then runs it (``in_progress``, then ``succeeded`` with its result or ``failed`` with why).
The SDK's poller follows that location until the job ends. A job whose server stopped is failed when
it is next read. azd's request shape (``{inputs: {..., options}}``) is taken beside the SDK's.

Data jobs (scenario ``evaluation``):
- ``simple_qna`` writes ``{query, ground_truth}`` rows from a prompt, an agent's instructions and
  tools, or a file (``assay.synth.queries``);
- ``simulation_seed`` writes test cases for simulated users;
- ``traces`` keeps what real users asked the agent (its stored traces) as ``{query}`` rows, with no
  model.
Each saves the next version of the dataset named by ``output_configuration.name`` (default: the job's
name).

Evaluator jobs write rubric dimensions from a prompt, an agent, a dataset's queries and the agent's
traced requests (``assay.evalgen``). They store the rubric as the next version of the custom
evaluator ``evaluator_name``. The result is that ``EvaluatorVersion``, with ``input_quality_warnings``
when the sources were thin.
"""

from __future__ import annotations

import hashlib
import json
import uuid
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.api.fields import text
from assay.api.jobs import Accepted, accept, earlier
from assay.api.routes_evaluators import CATEGORIES, details_of, save_custom
from assay.config.agents import AgentDefinition
from assay.dataset.ids import parse_dataset_id
from assay.errors import ConfigError
from assay.evalgen import MIN_SAMPLES
from assay.evalgen.generate import generate as generate_evaluator
from assay.evalgen.observed import traced_requests
from assay.sync import run_sync
from assay.synth.queries import Brief, generate_queries, generate_scenarios
from assay.synth.runs import brief_for, sample_count, save_rows, write_rows

if TYPE_CHECKING:
    from assay.api.context import ApiContext

DEFAULT_SAMPLES = 10
DATA_TYPES = ("simple_qna", "simulation_seed", "traces")
SHORT_TEXT = 40
"""Characters under which a prompt or an agent's instructions is thin material for a rubric."""
FEW_TRACES = 5
FEW_ROWS = 3


@dataclass
class Sources:
    """What a job's ``sources`` name, checked: prompts, one agent, one file, one dataset, traces."""

    prompts: list[str] = field(default_factory=list)
    agent: tuple[str, str | None] | None = None
    file_id: str | None = None
    dataset: tuple[str, str | None] | None = None
    traces: dict[str, Any] | None = None
    index: dict[str, int] = field(default_factory=dict)
    """Each kind of source's position in the list, for the warnings."""


def create_data_job(ctx: ApiContext, project: str, body: dict[str, Any], operation_id: str | None) -> Accepted:
    """Check a ``POST /data_generation_jobs`` body and store the job, queued."""
    inputs = _inputs(body)
    name = text(inputs.get("name"), "name", "name the job")
    scenario = inputs.get("scenario", "evaluation")
    if scenario != "evaluation":
        raise ConfigError(
            f"scenario: {scenario!r} is not generated here", hint="use scenario evaluation (fine-tuning data is not)"
        )
    config = inputs.get("generation_configuration", inputs.get("options"))
    if not isinstance(config, dict) or config.get("type") not in DATA_TYPES:
        raise ConfigError(f"generation_configuration.type: one of {', '.join(DATA_TYPES)}")
    kind = config["type"]
    count = sample_count(config.get("max_samples", DEFAULT_SAMPLES), "generation_configuration.max_samples")
    sources = _sources(inputs.get("sources"), ("prompt", "agent", "file", "traces"))
    output = inputs.get("output_configuration") or {}
    if not isinstance(output, dict):
        raise ConfigError("output_configuration: expected {name?, description?, tags?}")
    dataset_name = output.get("name") or name
    job: dict[str, Any] = {
        "id": _job_id("datagenjob", project, operation_id),
        "name": name,
        "scenario": "evaluation",
        "sources": inputs.get("sources"),
        "generation_configuration": config,
        **({"output_configuration": output} if output else {}),
    }
    found = earlier(ctx, project, "data", job["id"])
    if found is not None:
        return Accepted(found, None)
    seed = _seed(job)
    if kind == "traces":
        if sources.traces is None:
            raise ConfigError("sources: a traces job needs a {type: traces, agent_name, start_time?} source")
        window = sources.traces

        def work() -> list[dict[str, Any]]:
            return [{"query": query} for query in _requests(ctx, project, window, count)]

    else:
        model = text((config.get("model_options") or {}).get("model"), "generation_configuration.model_options.model")
        models = ctx.models()
        models.get(model).check_credentials()  # a model this server can call, before the job is stored
        brief = brief_for(
            ctx.store, project, models, "\n\n".join(sources.prompts) or None, sources.agent, sources.file_id
        )
        if brief.empty:
            raise ConfigError("sources: give a prompt, an agent with instructions, or a file to write from")
        write = generate_queries if kind == "simple_qna" else generate_scenarios

        def work() -> list[dict[str, Any]]:
            return write_rows(models, model, brief, count, seed, write).rows

    def finish() -> dict[str, Any]:
        rows = work()
        if not rows:  # a traces job over a window with none
            raise ConfigError("no traced requests of the agent were found in the window given")
        dataset_id = save_rows(ctx.store, project, dataset_name, rows)
        _, saved_name, version = parse_dataset_id(dataset_id) or ("", dataset_name, "")
        made = {"type": "dataset", "id": dataset_id, "name": saved_name, "version": version}
        made |= {key: output[key] for key in ("description", "tags") if output.get(key) is not None}
        return {"outputs": [made], "generated_samples": len(rows)}

    return accept(ctx, project, "data", job, finish)


def create_evaluator_job(ctx: ApiContext, project: str, body: dict[str, Any], operation_id: str | None) -> Accepted:
    """Check a ``POST /evaluator_generation_jobs`` body and store the job, queued."""
    inputs = _inputs(body)
    name = text(inputs.get("evaluator_name") or inputs.get("name"), "evaluator_name", "name the evaluator to write")
    model = text(inputs.get("model"), "model", "name the model that writes the rubric")
    category = inputs.get("category", "quality")
    if category not in CATEGORIES:
        raise ConfigError(f"category: one of {', '.join(CATEGORIES)}")
    details = details_of(
        {
            "display_name": inputs.get("evaluator_display_name"),
            "description": inputs.get("evaluator_description"),
            "categories": [category],
        }
    )
    sources = _sources(inputs.get("sources"), ("prompt", "agent", "dataset", "traces"))
    models = ctx.models()
    models.get(model).check_credentials()
    brief = brief_for(ctx.store, project, models, "\n\n".join(sources.prompts) or None, sources.agent, None)
    observed, warnings = _observed(ctx, project, sources)
    warnings = _brief_warnings(brief, sources) + warnings
    instructions = "\n\n".join(part for part in (brief.prompt, brief.agent_instructions) if part)
    agent = AgentDefinition(
        instructions=instructions, tools=tuple(brief.tools), name=sources.agent and sources.agent[0]
    )
    if not instructions.strip() and not agent.tools:
        raise ConfigError("sources: give a prompt, or an agent with instructions or tools, to write the rubric from")
    job: dict[str, Any] = {
        "id": _job_id("evalgenjob", project, operation_id),
        "sources": inputs.get("sources"),
        "model": model,
        "evaluator_name": name,
        **{key: inputs[key] for key in ("evaluator_display_name", "evaluator_description") if inputs.get(key)},
    }
    found = earlier(ctx, project, "evaluator", job["id"])
    if found is not None:
        return Accepted(found, None)
    if warnings:
        job["input_quality_warnings"] = warnings
    seed = _seed(job)

    def finish() -> dict[str, Any]:
        generator = models.get(model)

        async def write() -> list[dict[str, Any]]:
            try:
                made = await generate_evaluator(
                    generator, agent, MIN_SAMPLES, seed=seed, observed=observed, tasks=False, rubric=True
                )
                return made.dimensions
            finally:
                await generator.aclose()

        dimensions = run_sync(write())
        metadata = {"generation_job_id": job["id"]}
        version = save_custom(
            ctx.store, project, name, "rubric", json.dumps(dimensions), details | {"metadata": metadata}
        )
        return version | {"generation_job_id": job["id"]}

    return accept(ctx, project, "evaluator", job, finish)


def _job_id(prefix: str, project: str, operation_id: str | None) -> str:
    """A new id; with ``Operation-Id``, the same one for every retry of that create."""
    if operation_id is None:
        return f"{prefix}_{uuid.uuid4().hex}"
    return f"{prefix}_{hashlib.sha256(f'{project}/{operation_id}'.encode()).hexdigest()[:32]}"


def _inputs(body: dict[str, Any]) -> dict[str, Any]:
    """azd wraps a job's fields in ``inputs``; the SDK sends them as they are."""
    wrapped = body.get("inputs")
    return wrapped if isinstance(wrapped, dict) else body


def _seed(job: dict[str, Any]) -> int:
    """From what was asked, not the job's id: the same request writes the same rows (and the
    model-call cache makes it free the second time)."""
    asked = {key: value for key, value in job.items() if key != "id"}
    return zlib.crc32(json.dumps(asked, sort_keys=True, default=str).encode())


def _sources(raw: Any, kinds: tuple[str, ...]) -> Sources:
    if not isinstance(raw, list) or not raw or not all(isinstance(s, dict) for s in raw):
        raise ConfigError(f"sources: a non-empty list of {{type: {' | '.join(kinds)}, ...}}")
    found = Sources()
    for index, source in enumerate(raw):
        kind, where = source.get("type"), f"sources[{index}]"
        if kind not in kinds:
            raise ConfigError(f"{where}.type: one of {', '.join(kinds)}, got {kind!r}")
        found.index.setdefault(kind, index)
        if kind == "prompt":
            found.prompts.append(text(source.get("prompt"), f"{where}.prompt"))
        elif kind == "agent":
            found.agent = (
                text(source.get("agent_name"), f"{where}.agent_name"),
                _version(source.get("agent_version")),
            )
        elif kind == "file":
            found.file_id = text(source.get("id") or source.get("file_id"), f"{where}.id", "a file id such as file_...")
        elif kind == "dataset":
            found.dataset = (text(source.get("name"), f"{where}.name"), _version(source.get("version")))
        else:
            found.traces = _trace_window(source, where)
            found.agent = found.agent or (found.traces["agent"], found.traces["version"])
    return found


def _version(value: Any) -> str | None:
    return None if value in (None, "", "latest") else str(value)


def _trace_window(source: dict[str, Any], where: str) -> dict[str, Any]:
    agent = text(source.get("agent_name") or source.get("agent_id"), f"{where}.agent_name")
    window: dict[str, Any] = {"agent": agent, "version": _version(source.get("agent_version"))}
    for key in ("start_time", "end_time"):
        value = source.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ConfigError(f"{where}.{key}: a Unix time in seconds")
        window[key] = None if value is None else int(value * 1e9)
    trace_ids = source.get("trace_ids")
    if trace_ids is not None and (not isinstance(trace_ids, list) or not all(isinstance(t, str) for t in trace_ids)):
        raise ConfigError(f"{where}.trace_ids: a list of trace ids")
    window["trace_ids"] = trace_ids or None
    return window


def _requests(ctx: ApiContext, project: str, window: dict[str, Any], limit: int) -> list[str]:
    return traced_requests(
        ctx.store,
        project,
        window["agent"],
        agent_version=window["version"],
        start_ns=window["start_time"],
        end_ns=window["end_time"],
        trace_ids=window["trace_ids"],
        limit=limit,
    )


def _observed(ctx: ApiContext, project: str, sources: Sources) -> tuple[list[str], list[dict[str, Any]]]:
    """What users asked (a dataset's queries, the agent's traced requests), and the warnings when it was little."""
    observed: list[str] = []
    warnings: list[dict[str, Any]] = []
    if sources.dataset is not None:
        name, version = sources.dataset
        stored = ctx.store.get_dataset(name, version, project=project)  # a NotFoundError (404) names it
        content = bytes(ctx.store.get_file(project, stored["file_id"], content=True)["content"]).decode(
            "utf-8", "replace"
        )
        queries = [_query_of(line) for line in content.splitlines() if line.strip()]
        found = [q for q in queries if q]
        observed += found[:30]
        if len(found) < FEW_ROWS:
            code = "empty_dataset_content" if not found else "short_dataset_content"
            warnings.append(_warning(code, f"dataset {name} holds {len(found)} usable queries", "dataset", sources))
    if sources.traces is not None:
        requests = _requests(ctx, project, sources.traces, 30)
        observed += requests
        if len(requests) < FEW_TRACES:
            message = f"{len(requests)} traced requests of agent {sources.traces['agent']} were found"
            warnings.append(_warning("low_trace_count", message, "aggregate", sources))
    return observed, warnings


def _query_of(line: str) -> str | None:
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(row, dict):
        return None
    item = row.get("item")
    if not isinstance(item, dict):
        item = row
    value = item.get("query") or item.get("question") or item.get("description")
    return value.strip()[:500] if isinstance(value, str) and value.strip() else None


def _brief_warnings(brief: Brief, sources: Sources) -> list[dict[str, Any]]:
    warnings = []
    if sources.prompts and len("\n".join(sources.prompts).strip()) < SHORT_TEXT:
        warnings.append(_warning("short_prompt", "the prompt is only a few words", "prompt", sources))
    if sources.agent is not None and "agent" in sources.index:
        instructions = (brief.agent_instructions or "").strip()
        if not instructions:
            warnings.append(_warning("empty_agent_instructions", "the agent has no instructions", "agent", sources))
        elif len(instructions) < SHORT_TEXT:
            message = "the agent's instructions are only a few words"
            warnings.append(_warning("short_agent_instructions", message, "agent", sources))
    return warnings


def _warning(code: str, message: str, source: str, sources: Sources) -> dict[str, Any]:
    """Foundry's ``RubricGenerationInputQualityWarning``: advice, never the text of the sources."""
    warning: dict[str, Any] = {"code": code, "severity": "warning", "message": message, "source": source}
    if source in sources.index:
        warning["source_index"] = sources.index[source]
    return warning
