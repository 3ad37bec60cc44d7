"""Trace data sources: which stored traces a run evaluates, and the items they become.

    azure_ai_traces (and _preview)               trace_ids | agent_id "name:version" | agent_name,
                                                 conversation_ids?, lookback_hours?, end_time?, max_traces?
    azure_ai_trace_data_source (and _preview)    trace_source: trace_id_source | conversation_id_source |
                                                 agent_filter (window ≥ 900 s, random_sampling | smart_filtering)

The selection is resolved once, when the run is created, into concrete trace ids kept in the run's
options, so a resumed or re-claimed run evaluates the same items however much time has passed.
Turn level: one item per agent span of the chosen traces (only the filtered agent's, with an agent
filter). Conversation level: one item per conversation (``gen_ai.conversation.id`` or ``session.id``).

Multi-agent workflows (``workflow: {include_overall?: true, include_per_agent?: true}`` on either
kind, as Agent Framework's ``evaluate_workflow``): a trace where several agents took part (one
agent invoking others, or handing off) is evaluated overall and per agent. An agent filter then
chooses the traces the agent took part in, and every agent's spans in them are read. Per trace:
one ``overall`` item (the outermost agent spans' conversation: the user's question to the final
answer, ``agent_id: "workflow"``) and one item per agent (its own turns), each with ``query``,
``response``, ``messages`` and ``workflow_part`` (``overall`` or ``agent``); the run's summary then
reports each criterion per agent (``per_agent``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from assay.dataset import Dataset
from assay.errors import ConfigError
from assay.messages import MessageFormatError, normalize, normalize_tool_definitions, split_turn, turn_fields
from assay.sampling import Candidate, SampleReport, random_sample, smart_sample
from assay.store import Store
from assay.traces.conversion import Conversation, Turn, conversations_of, turn_order, turns_of

TRACE_SOURCES = {
    "azure_ai_traces",
    "azure_ai_traces_preview",
    "azure_ai_trace_data_source",
    "azure_ai_trace_data_source_preview",
}
NS = 1_000_000_000
MIN_WINDOW_SECONDS = 900
EDGE_BUFFER_SECONDS = 300
DEFAULT_MAX_TRACES = 1000
Level = Literal["turn", "conversation"]
NO_TRACES_HINT = (
    "check the agent name and version, the time window and the ids; spans arrive by POST /v1/traces or "
    "assay traces import, and only invoke_agent spans become items"
)


@dataclass
class TraceSelection:
    trace_ids: list[str] | None = None
    conversation_ids: list[str] | None = None
    agent_name: str | None = None
    agent_version: str | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    max_traces: int = DEFAULT_MAX_TRACES
    strategy: Literal["random", "smart"] = "random"
    edge_buffer: bool = False
    """An agent filter leaves out conversations active within 5 minutes of either edge (maybe partial)."""
    seed: int = 0
    workflow: Workflow | None = None


@dataclass(frozen=True)
class Workflow:
    """A multi-agent trace evaluated as a whole (``include_overall``) and agent by agent."""

    include_overall: bool = True
    include_per_agent: bool = True


@dataclass
class ResolvedTraces:
    trace_ids: list[str]
    agent_name: str | None
    agent_version: str | None
    report: SampleReport | None = None
    notes: list[str] = field(default_factory=list)
    turns: list[Turn] | None = None
    """The chosen traces' turns, already read (None when only ids were given): the items need no
    second load of the spans."""
    workflow: Workflow | None = None

    def dataset(self, store: Store, project: str, level: Level) -> Dataset:
        if self.turns is None:
            return trace_dataset(store, project, self.options(), level)
        return items_dataset(self.turns, level, self.workflow)

    def options(self) -> dict[str, Any]:
        """What the run keeps so that it always evaluates the same items."""
        resolved: dict[str, Any] = {
            "trace_ids": self.trace_ids,
            "agent_name": self.agent_name,
            "agent_version": self.agent_version,
        }
        if self.workflow is not None:
            resolved["workflow"] = dataclasses.asdict(self.workflow)
        if self.report is not None:
            resolved["sampling"] = {
                "strategy": self.report.strategy,
                "candidates": self.report.candidates,
                "removed": self.report.removed,
                "picked": len(self.report.picked),
            }
        return resolved


def selection_of(data_source: dict[str, Any], now: float | None = None) -> TraceSelection:
    """Read and check a trace data source; refuse, naming the field, what cannot be evaluated."""
    now = time.time() if now is None else now
    return dataclasses.replace(_selection(data_source, now), workflow=_workflow(data_source.get("workflow")))


def _selection(data_source: dict[str, Any], now: float) -> TraceSelection:
    if data_source.get("type") in ("azure_ai_traces", "azure_ai_traces_preview"):
        return _flat(data_source, now)
    source = data_source.get("trace_source")
    if not isinstance(source, dict):
        raise ConfigError("trace_source must be {type: trace_id_source | conversation_id_source | agent_filter, ...}")
    kind = source.get("type")
    if kind == "trace_id_source":
        return TraceSelection(trace_ids=_ids(source, "trace_ids", "trace_source"), max_traces=10**9)
    if kind == "conversation_id_source":
        end = _time(source.get("end_time"), "trace_source.end_time", now)
        hours = _positive(source.get("lookback_hours", 168), "trace_source.lookback_hours")
        conversations = _ids(source, "conversation_ids", "trace_source")
        start_ns, end_ns = int((end - hours * 3600) * NS), int(end * NS)
        return TraceSelection(conversation_ids=conversations, start_ns=start_ns, end_ns=end_ns, max_traces=10**9)
    if kind == "agent_filter":
        return _agent_filter(source, now)
    raise ConfigError(f"trace_source.type {kind!r} must be trace_id_source, conversation_id_source or agent_filter")


def resolve(store: Store, project: str, selection: TraceSelection, level: Level) -> ResolvedTraces:
    """The trace ids a run will evaluate: found, edge-buffered, then sampled down to ``max_traces``."""
    name, version = selection.agent_name, selection.agent_version
    if name is not None:  # an external agent of the project: its spans carry its OpenTelemetry id
        registered = store.find_prompt_agent(project, name)
        definition = ((registered or {}).get("body") or {}).get("definition") or {}
        if definition.get("kind") == "external" and definition.get("otel_agent_id"):
            name = str(definition["otel_agent_id"])
    if name is not None and version is None:
        version = store.latest_agent_version(project, name)
    workflow = selection.workflow
    if selection.trace_ids is not None:
        return ResolvedTraces(list(dict.fromkeys(selection.trace_ids)), name, version, workflow=workflow)
    candidates = store.agent_trace_ids(
        project,
        agent_name=name,
        agent_version=version,
        start_ns=selection.start_ns,
        end_ns=selection.end_ns,
        conversation_ids=selection.conversation_ids,
    )
    spans = store.trace_spans(project, candidates)
    # A workflow's traces are chosen by the agent taking part; every agent's turns in them are read.
    turns = turns_of([s for trace in spans.values() for s in trace], *((None, None) if workflow else (name, version)))
    if level == "conversation" or selection.edge_buffer:
        units: list[Turn | Conversation] = list(conversations_of(turns))
    else:
        units = list(_by_trace(turns))
    notes = []
    if selection.edge_buffer and selection.start_ns is not None and selection.end_ns is not None:
        inside = [u for u in units if _clear_of_edges(u, selection.start_ns, selection.end_ns)]
        if len(inside) < len(units):
            left_out = len(units) - len(inside)
            notes.append(f"{left_out} conversations active within 5 minutes of the window's edges left out")
        units = inside
        if level == "turn":
            units = list(_by_trace([t for u in units for t in _turns(u)]))
    pool = [_candidate(u) for u in units]
    sample = smart_sample if selection.strategy == "smart" else random_sample
    report = sample(pool, selection.max_traces, seed=selection.seed)
    chosen = set(report.picked)
    trace_ids = list(dict.fromkeys(t for u in units if _key(u) in chosen for t in _trace_ids(u)))
    # Every turn of a chosen trace, as a later load of those traces by id would give them.
    picked = set(trace_ids)
    kept = [t for t in turns if t.span.trace_id in picked]
    return ResolvedTraces(trace_ids, name, version, report, notes, kept, workflow)


def trace_dataset(store: Store, project: str, resolved: dict[str, Any], level: Level) -> Dataset:
    """The run's items from its resolved trace ids: turns, or conversations."""
    spans = store.trace_spans(project, list(resolved.get("trace_ids") or []))
    workflow = Workflow(**resolved["workflow"]) if resolved.get("workflow") else None
    agent = (None, None) if workflow else (resolved.get("agent_name"), resolved.get("agent_version"))
    turns = turns_of([s for trace in spans.values() for s in trace], *agent)
    return items_dataset(turns, level, workflow)


def items_dataset(turns: list[Turn], level: Level, workflow: Workflow | None = None) -> Dataset:
    """Turn items, or conversation items (or a workflow's), in an order that does not depend on how
    the turns were found (a resumed run must number its items as the first attempt did)."""
    if workflow is not None:
        items = workflow_items(turns, workflow)
    elif level == "conversation":
        conversations = sorted(conversations_of(turns), key=lambda c: turn_order(c.turns[0]))
        items = [c.item() for c in conversations]
    else:
        items = [t.item() for t in sorted(turns, key=turn_order)]
    return Dataset.from_content([{"item": item, "sample": trace_sample(item)} for item in items], name="traces")


SAMPLE_FIELDS = ("query", "response", "tool_definitions", "messages", "context")


def trace_sample(item: dict[str, Any]) -> dict[str, Any]:
    """What the traced agent did, as a run's sample: Foundry's trace evaluations map
    ``{{sample.query}}``, ``{{sample.response}}`` and ``{{sample.tool_definitions}}``; ``output_text``
    is the agent's last words."""
    sample = {name: item[name] for name in SAMPLE_FIELDS if name in item}
    said = item.get("response") if item.get("response") is not None else item.get("messages")
    try:
        texts = [m.text for m in normalize(said or [], default_role="assistant") if m.role == "assistant"]
    except MessageFormatError:
        texts = []
    sample["output_text"] = next((text for text in reversed(texts) if text), "")
    return sample


def workflow_items(turns: list[Turn], workflow: Workflow) -> list[dict[str, Any]]:
    """Per trace, in trace order: the overall item, then one per agent (in the order they first acted)."""
    items = []
    for _, group in sorted(_by_trace_id(turns).items(), key=lambda found: turn_order(found[1][0])):
        outermost = [t for t in group if not any(_within(t, other) for other in group if other is not t)]
        if workflow.include_overall:
            overall = _workflow_item(Conversation(f"trace:{group[0].span.trace_id}", outermost))
            items.append({**overall, "agent_id": "workflow", "workflow_part": "overall"})
        if workflow.include_per_agent:
            agents: dict[str | None, list[Turn]] = {}
            for turn in group:
                agents.setdefault(turn.agent_id, []).append(turn)
            for agent_id, own in agents.items():
                item = _workflow_item(Conversation(f"trace:{group[0].span.trace_id}:{agent_id}", own))
                items.append({**item, "workflow_part": "agent"})
    return items


def _by_trace_id(turns: list[Turn]) -> dict[str, list[Turn]]:
    groups: dict[str, list[Turn]] = {}
    for turn in sorted(turns, key=turn_order):
        groups.setdefault(turn.span.trace_id, []).append(turn)
    return groups


def _within(inner: Turn, outer: Turn) -> bool:
    """Whether ``inner`` ran inside ``outer`` (an agent another invoked, whatever spans lie between)."""
    return (
        outer.span.start_ns <= inner.span.start_ns
        and inner.span.end_ns <= outer.span.end_ns
        and ((outer.span.start_ns, -outer.span.end_ns) < (inner.span.start_ns, -inner.span.end_ns))
    )


def _workflow_item(conversation: Conversation) -> dict[str, Any]:
    """A conversation item with the fields of a turn too (``query``: up to the last user message,
    ``response``: the rest), so turn and conversation evaluators alike can read it."""
    item = conversation.item()
    messages = normalize(item["messages"])
    definitions = normalize_tool_definitions(item["tool_definitions"])
    return {**turn_fields(*split_turn(messages), definitions), **item}


def _workflow(raw: Any) -> Workflow | None:
    if raw is None:
        return None
    if raw is True:
        return Workflow()
    if not isinstance(raw, dict) or set(raw) - {"include_overall", "include_per_agent"}:
        raise ConfigError("workflow must be {include_overall?: true, include_per_agent?: true}")
    given = {key: raw.get(key, True) for key in ("include_overall", "include_per_agent")}
    if not all(isinstance(value, bool) for value in given.values()) or not any(given.values()):
        raise ConfigError("workflow: include_overall and include_per_agent are true or false, and one must be true")
    return Workflow(**given)


# reading the data source ------------------------------------------------------------------------


def _flat(data_source: dict[str, Any], now: float) -> TraceSelection:
    max_traces = int(_positive(data_source.get("max_traces", DEFAULT_MAX_TRACES), "max_traces"))
    if data_source.get("trace_ids") is not None:
        return TraceSelection(trace_ids=_ids(data_source, "trace_ids", "data_source"), max_traces=max_traces)
    name, version = _agent(data_source, "data_source")
    conversation_ids = data_source.get("conversation_ids")
    if name is None and conversation_ids is None:
        raise ConfigError(
            "an azure_ai_traces data source needs trace_ids, agent_id (name:version), agent_name or conversation_ids"
        )
    end = _time(data_source.get("end_time"), "end_time", now)
    hours = _positive(data_source.get("lookback_hours", 1), "lookback_hours")
    return TraceSelection(
        conversation_ids=list(conversation_ids) if conversation_ids is not None else None,
        agent_name=name,
        agent_version=version,
        start_ns=int((end - hours * 3600) * NS),
        end_ns=int(end * NS),
        max_traces=max_traces,
    )


def _agent_filter(source: dict[str, Any], now: float) -> TraceSelection:
    name, version = _agent(source, "trace_source")
    if name is None:
        raise ConfigError("trace_source (agent_filter) needs agent_name (with agent_version) or agent_id name:version")
    if source.get("start_time") is None or source.get("end_time") is None:
        raise ConfigError("trace_source (agent_filter) needs start_time and end_time (unix seconds)")
    start = _time(source["start_time"], "trace_source.start_time", now)
    end = _time(source["end_time"], "trace_source.end_time", now)
    if end - start < MIN_WINDOW_SECONDS:
        raise ConfigError(
            f"trace_source: the window end_time - start_time is {int(end - start)} s; it must be at least "
            f"{MIN_WINDOW_SECONDS} s (a 5-minute inactivity buffer applies at each edge)"
        )
    strategy = source.get("filter_strategy", "random_sampling")
    if strategy not in ("random_sampling", "smart_filtering"):
        raise ConfigError(f"trace_source.filter_strategy {strategy!r} must be random_sampling or smart_filtering")
    max_traces = int(_positive(source.get("max_traces", DEFAULT_MAX_TRACES), "trace_source.max_traces"))
    return TraceSelection(
        agent_name=name,
        agent_version=version,
        start_ns=int(start * NS),
        end_ns=int(end * NS),
        max_traces=max_traces,
        strategy="smart" if strategy == "smart_filtering" else "random",
        edge_buffer=True,
        seed=int(source.get("seed", 0)),
    )


def _agent(source: dict[str, Any], where: str) -> tuple[str | None, str | None]:
    agent_id = source.get("agent_id")
    if agent_id is not None:
        if not isinstance(agent_id, str) or ":" not in agent_id:
            raise ConfigError(f"{where}.agent_id must be 'name:version', e.g. 'my-agent:1'")
        agent, agent_version = agent_id.split(":", 1)
        return agent, agent_version
    name, version = source.get("agent_name"), source.get("agent_version")
    return (None if name is None else str(name)), (None if version in (None, "") else str(version))


def _ids(source: dict[str, Any], key: str, where: str) -> list[str]:
    found = source.get(key)
    if not isinstance(found, list) or not found or not all(isinstance(i, str) and i for i in found):
        raise ConfigError(f"{where}.{key} must be a non-empty list of strings")
    return [i.lower() if key == "trace_ids" else i for i in found]


def _time(value: Any, where: str, now: float) -> float:
    """Unix seconds, or ISO-8601; absent means now."""
    if value is None:
        return now
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    raise ConfigError(f"{where}: {value!r} is not a time; give unix seconds or ISO-8601 (2026-11-30T12:00:00Z)")


def _positive(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{where} must be a positive number")
    return float(value)


# units of sampling --------------------------------------------------------------------------------


def _by_trace(turns: list[Turn]) -> list[Conversation]:
    """Turn-level sampling picks whole traces: the turns of one trace, grouped."""
    groups: dict[str, list[Turn]] = {}
    for turn in turns:
        groups.setdefault(turn.span.trace_id, []).append(turn)
    return [Conversation(f"trace:{trace_id}", group) for trace_id, group in groups.items()]


def _turns(unit: Turn | Conversation) -> list[Turn]:
    return unit.turns if isinstance(unit, Conversation) else [unit]


def _key(unit: Turn | Conversation) -> str:
    return unit.key if isinstance(unit, Conversation) else unit.span.trace_id


def _trace_ids(unit: Turn | Conversation) -> list[str]:
    return [t.span.trace_id for t in _turns(unit)]


def _clear_of_edges(unit: Turn | Conversation, start_ns: int, end_ns: int) -> bool:
    turns = _turns(unit)
    first, last = min(t.span.start_ns for t in turns), max(t.span.end_ns for t in turns)
    return first >= start_ns + EDGE_BUFFER_SECONDS * NS and last <= end_ns - EDGE_BUFFER_SECONDS * NS


def _candidate(unit: Turn | Conversation) -> Candidate:
    turns = _turns(unit)
    content = json.dumps([t.item()["messages"] for t in turns], sort_keys=True, default=str)
    return Candidate(
        key=_key(unit),
        text="\n".join(t.user_text for t in turns if t.user_text),
        fingerprint=hashlib.sha256(content.encode()).hexdigest(),
        problems=sorted({p for t in turns for p in t.problems}),
    )
