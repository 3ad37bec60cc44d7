"""Agent Insights: Foundry's ``project_client.beta.agent_insight_monitors``. A monitor watches one
agent's traces.

A run reads the agent's traces in its look-back window, the newest 50 at most. A run starts on
demand (``begin_create_run``) or every ``run_interval_hours`` while the monitor is enabled. The
monitor's model reads each trace as a transcript and says whether it shows a problem: a short title,
a category, a severity, the root cause, and a fix (a JSON schema, with parsing as the fallback). The
model is shown the titles already known, so a problem keeps its title from one trace to the next
and from one run to the next.

The traces that share a title are one insight. A new title makes a new insight. A known one gains
the new traces as evidence and is ``updated``, or ``reopened`` when it had been resolved; an ignored
insight stays ignored. A trace already counted is never counted again, so a rerun over the same
window changes nothing. The overview lists the active insights, worst first, unless the user wrote
their own (``overview_override``).

Runs are long-running jobs (``assay.api.jobs``), one at a time per monitor, that the workers take
(``assay.api.background``): neither a request nor the firer waits on the model. The firer of
``assay serve`` queues the runs that are due (``run_due``); of several servers on one database, one
queues each.
"""

from __future__ import annotations

import json
import math
import time
import uuid
import zlib
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.api.fields import text
from assay.api.jobs import Accepted, queue_for_workers, reap
from assay.errors import ConfigError, ItemError, NotFoundError
from assay.llm.model import ModelError
from assay.llm.structured import ask_structured
from assay.messages import to_dicts
from assay.sync import run_sync
from assay.traces.conversion import turns_of

if TYPE_CHECKING:
    from assay.api.context import ApiContext

MAX_TRACES = 50
TRANSCRIPT_CHARS = 6000
MAX_LINKED = 200
HIGHLIGHTED = 3
DEFAULT_INTERVAL_HOURS = 24.0
MAX_LOOKBACK_HOURS = 24.0 * 90
SEVERITIES = ("high", "medium", "low")
CATEGORIES = (
    "wrong_answer",
    "instruction_not_followed",
    "tool_error",
    "tool_misuse",
    "hallucination",
    "unhelpful_refusal",
    "incomplete_answer",
    "other",
)
INTERNAL = ("insights", "overview_override", "scheduled_until", "resets")
"""What a monitor's document keeps that its API object does not show."""
ISSUE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "problem": {"type": "boolean"},
        "title": {"type": "string"},
        "category": {"type": "string", "enum": list(CATEGORIES)},
        "severity": {"type": "string", "enum": list(SEVERITIES)},
        "summary": {"type": "string"},
        "diagnosis": {"type": "string"},
        "fix": {"type": "string"},
        "fix_surface": {"type": "string", "enum": ["instructions", "tool", "none"]},
    },
    "required": ["problem", "title", "category", "severity", "summary", "diagnosis", "fix", "fix_surface"],
    "additionalProperties": False,
}
SYSTEM = """You review traces of an AI agent in production for the team that owns it.

Read one trace (the conversation, the tool calls and their results) and say whether it shows a
problem the team should fix: a wrong or made-up answer, an instruction not followed, a tool that
failed or was misused, an unhelpful refusal, an incomplete answer. A trace where the agent did its
job shows no problem: answer problem false and leave the other fields empty.

For a problem: a title of a few words naming the problem (not this trace: other traces with the same
problem get the same title; reuse a known title when it fits), its category, its severity (high:
users get wrong or harmful results; medium: users are not helped; low: a blemish), a one-sentence
summary of what happened in this trace, the root cause, a fix, and where the fix goes (the agent's
instructions, a tool, or neither).

Reply with a JSON object: {"problem": true, "title": "...", "category": "...", "severity": "...",
"summary": "...", "diagnosis": "...", "fix": "...", "fix_surface": "instructions"}."""


@dataclass(frozen=True)
class Evidence:
    """One trace that shows a problem, and what the model said of it."""

    trace_id: str
    timestamp: int
    verdict: dict[str, Any]


# -- monitors ---------------------------------------------------------------------------------


def create_monitor(ctx: ApiContext, project: str, body: dict[str, Any]) -> dict[str, Any]:
    agent = text(body.get("agent_name"), "agent_name", "name the agent whose traces are read")
    moment = int(time.time())
    monitor: dict[str, Any] = {
        "id": f"aimon_{uuid.uuid4().hex[:24]}",
        "agent_name": agent,
        "enabled": True,
        "run_interval_hours": DEFAULT_INTERVAL_HOURS,
        "model_deployment_name": None,
        "estimated_cost": {"amount": 0.0, "currency": "USD"},
        "suspension": None,
        "overview": None,
        "overview_override": None,
        "insights": [],
        "created_at": moment,
    }
    _configure(ctx, monitor, body)
    if monitor["model_deployment_name"] is None:
        raise ConfigError("model_deployment_name: name the model that reads the traces")
    following = _following(monitor, moment)
    monitor["scheduled_until"] = moment - int(monitor["run_interval_hours"] * 3600)  # the first looks back an interval
    ctx.store.add_monitor(project, _stamped(monitor, following, moment))
    return monitor_object(monitor)


def update_monitor(ctx: ApiContext, project: str, monitor_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """Change the configuration; a change to ``enabled`` or the interval schedules the next run from now."""
    monitor = ctx.store.get_monitor(project, monitor_id)
    before = (monitor["enabled"], monitor["run_interval_hours"])
    _configure(ctx, monitor, body)
    if "overview_override" in body:
        override = body["overview_override"]
        content = override.get("content") if isinstance(override, dict) else override
        if content is not None and not isinstance(content, str):
            raise ConfigError("overview_override.content: expected text, or null to go back to the generated one")
        monitor["overview_override"] = content or None
        monitor["overview"] = _overview(monitor, int(time.time()))
    moment = int(time.time())
    changed = (monitor["enabled"], monitor["run_interval_hours"]) != before
    following = _following(monitor, moment) if changed else monitor.get("next_scheduled_run_at")
    if changed:  # scheduled runs start over, the first looking back an interval
        monitor["scheduled_until"] = moment - int(monitor["run_interval_hours"] * 3600)
    ctx.store.save_monitor(project, _stamped(monitor, following, moment))
    return monitor_object(monitor)


def reset_monitor(ctx: ApiContext, project: str, monitor_id: str) -> None:
    """Forget what the monitor found (its insights, its overview, its cost); keep its configuration."""
    monitor = ctx.store.get_monitor(project, monitor_id)
    monitor |= {"insights": [], "overview": None, "overview_override": None, "scheduled_until": None}
    monitor["resets"] = monitor.get("resets", 0) + 1  # a run under way then finds it changed, and keeps nothing
    monitor["estimated_cost"] = {"amount": 0.0, "currency": "USD"}
    ctx.store.save_monitor(project, _stamped(monitor, monitor.get("next_scheduled_run_at"), int(time.time())))


def delete_monitor(ctx: ApiContext, project: str, monitor_id: str) -> None:
    ctx.store.delete_monitor(project, monitor_id)
    for run in ctx.store.list_jobs(project, "insight_run"):
        if run["monitor_id"] == monitor_id:
            ctx.store.delete_job(project, "insight_run", run["id"])


def monitor_object(monitor: dict[str, Any], *, overview: bool = True) -> dict[str, Any]:
    """Foundry's ``AgentInsightMonitor`` (``overview`` False: its list item)."""
    shown = {key: value for key, value in monitor.items() if key not in INTERNAL}
    if not overview:
        shown.pop("overview", None)
    return shown


def _configure(ctx: ApiContext, monitor: dict[str, Any], body: dict[str, Any]) -> None:
    if body.get("enabled") is not None:
        if not isinstance(body["enabled"], bool):
            raise ConfigError("enabled: expected true or false")
        monitor["enabled"] = body["enabled"]
    if body.get("run_interval_hours") is not None:
        monitor["run_interval_hours"] = float(_hours(body["run_interval_hours"], "run_interval_hours"))
    if body.get("model_deployment_name") is not None:
        name = text(body["model_deployment_name"], "model_deployment_name")
        ctx.models().get(_deployment(name)).check_credentials()  # a model this server can call
        monitor["model_deployment_name"] = name


def _deployment(name: str) -> str:
    """``{connection}/{deployment}`` names the deployment through a connection: here, the deployment."""
    return name.rsplit("/", 1)[-1]


def _following(monitor: dict[str, Any], moment: int) -> int | None:
    return moment + int(monitor["run_interval_hours"] * 3600) if monitor["enabled"] else None


def _stamped(monitor: dict[str, Any], following: int | None, moment: int) -> dict[str, Any]:
    monitor |= {"next_scheduled_run_at": following, "updated_at": moment}
    return monitor


# -- runs --------------------------------------------------------------------------------------


def create_run(
    ctx: ApiContext, project: str, monitor_id: str, body: dict[str, Any], trigger: str = "on_demand"
) -> Accepted:
    """A run of the monitor over the last ``lookback_hours`` (default: its interval), queued."""
    monitor = ctx.store.get_monitor(project, monitor_id)
    hours = _hours(body.get("lookback_hours", monitor["run_interval_hours"]), "lookback_hours")
    reap(ctx, project, "insight_run")
    going = [job for job, _ in ctx.store.unfinished_jobs(project, "insight_run") if job["monitor_id"] == monitor_id]
    if going:
        raise ConfigError(
            f"monitor {monitor_id} is running already ({going[0]['id']})", hint="wait for it, or cancel it"
        )
    moment = math.ceil(time.time())  # the window takes in every trace sent before the run
    start = moment - int(hours * 3600)
    if trigger == "scheduled":  # from where the last scheduled run stopped: no trace falls between two
        start = max(min(monitor.get("scheduled_until") or start, moment), moment - int(MAX_LOOKBACK_HOURS * 3600))
        monitor["scheduled_until"] = moment
        ctx.store.save_monitor(project, monitor)
    run = {
        "id": f"airun_{uuid.uuid4().hex[:24]}",
        "monitor_id": monitor_id,
        "agent_name": monitor["agent_name"],
        "trigger": trigger,
        "inputs": {"lookback_hours": hours},
        "window_start": start,
        "window_end": moment,
        "model_deployment_name": monitor["model_deployment_name"],
        "started_at": None,
        "updated_at": moment,
    }
    return queue_for_workers(ctx, project, "insight_run", run)


def run_due(ctx: ApiContext, clock: float | None = None) -> list[str]:
    """Queue the runs of enabled monitors that are due, for the workers; the runs queued. Each is
    claimed first, so one server of several queues it."""
    moment = int(clock if clock is not None else time.time())
    made = []
    for project, monitor, due in ctx.store.due_monitors(moment):
        if not ctx.store.claim_monitor_run(project, _stamped(monitor, _following(monitor, moment), moment), due):
            continue
        try:
            accepted = create_run(ctx, project, monitor["id"], {}, trigger="scheduled")
        except ConfigError:  # a run of it is still going: the next one is due an interval on
            continue
        made.append(accepted.job["id"])
    return made


def analyze(ctx: ApiContext, project: str, run: dict[str, Any]) -> dict[str, Any]:
    """A worker's part of a run: read the window's traces, keep what the model says of each, and
    merge it into the monitor."""
    monitor = ctx.store.get_monitor(project, run["monitor_id"])
    resets = monitor.get("resets", 0)
    agent = monitor["agent_name"]
    window = (run["window_start"] * 1_000_000_000, run["window_end"] * 1_000_000_000)
    ids = ctx.store.agent_trace_ids(project, agent_name=agent, start_ns=window[0], end_ns=window[1])
    chosen = ids[-MAX_TRACES:]
    spans = ctx.store.trace_spans(project, chosen)
    model = ctx.models().get(_deployment(run["model_deployment_name"]))
    known = [insight["title"] for insight in monitor["insights"]]
    found: dict[str, list[Evidence]] = {}
    usage = Counter[str]()

    async def review() -> int:
        analyzed = 0
        try:
            for trace_id in chosen:
                turns = turns_of(spans.get(trace_id, []), agent)
                if not turns:
                    continue
                analyzed += 1
                titles = known + [title for title in found if title not in known]
                messages = _prompt(turns, titles)
                seed = zlib.crc32(trace_id.encode())
                try:
                    answer, completion = await ask_structured(
                        model, messages, "trace_issue", ISSUE_SCHEMA, temperature=0, seed=seed
                    )
                except ModelError as exc:
                    raise ItemError(f"{run['model_deployment_name']} failed on trace {trace_id}: {exc}") from None
                usage.update(
                    input_tokens=completion.usage.prompt_tokens,
                    output_tokens=completion.usage.completion_tokens,
                    cached_tokens=completion.usage.cached_tokens,
                )
                if answer and answer.get("problem") is True and str(answer.get("title") or "").strip():
                    title = str(answer["title"]).strip()
                    stamp = turns[0].span.start_ns // 1_000_000_000
                    found.setdefault(title, []).append(Evidence(trace_id, stamp, answer))
        finally:
            await model.aclose()
        return analyzed

    analyzed = run_sync(review())
    moment = int(time.time())
    # Merged into the monitor as it is now: a status or the configuration may have changed meanwhile.
    latest = ctx.store.get_monitor(project, run["monitor_id"])
    if latest.get("resets", 0) != resets:  # reset meanwhile: what this run found predates it
        found = {}
    counts = _merge(latest, found, moment)
    latest["overview"] = _overview(latest, moment)
    price = getattr(model.config, "price", None)
    if price is not None:
        spent = price.cost(usage["input_tokens"], usage["output_tokens"])
        latest["estimated_cost"]["amount"] = round(latest["estimated_cost"]["amount"] + spent, 6)
    ctx.store.save_monitor(project, _stamped(latest, latest.get("next_scheduled_run_at"), moment))
    return {
        "traces_in_window": len(ids),
        "traces_analyzed": analyzed,
        "insights_created": counts["created"],
        "insights_updated": counts["updated"],
        "insights_reopened": counts["reopened"],
        "token_usage": {**usage, "total_tokens": usage["input_tokens"] + usage["output_tokens"]},
    }


def _prompt(turns: list[Any], titles: list[str]) -> list[dict[str, Any]]:
    transcript = json.dumps([m for turn in turns for m in to_dicts(turn.messages)], ensure_ascii=False)
    if len(transcript) > TRANSCRIPT_CHARS:
        transcript = transcript[: TRANSCRIPT_CHARS // 2] + " ... " + transcript[-TRANSCRIPT_CHARS // 2 :]
    known = "\n".join(f"- {title}" for title in titles) or "(none yet)"
    user = f"# Problems already known (reuse a title when it fits)\n{known}\n\n# The trace\n{transcript}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


# -- insights ----------------------------------------------------------------------------------


def _merge(monitor: dict[str, Any], found: dict[str, list[Evidence]], moment: int) -> Counter[str]:
    """Add what a run found to the monitor's insights; how many were created, updated, reopened."""
    counts = Counter[str]()
    by_title = {_key(insight["title"]): insight for insight in monitor["insights"]}
    for title, evidence in found.items():
        insight = by_title.get(_key(title))
        if insight is None:
            insight = _new_insight(monitor, title, evidence, moment)
            monitor["insights"].append(insight)
            by_title[_key(title)] = insight
            counts["created"] += 1
            continue
        linked = insight["details"]["linked_traces"]
        seen = {trace["trace_id"] for trace in linked}
        fresh = [e for e in evidence if e.trace_id not in seen]
        if not fresh:
            continue
        linked.extend({"trace_id": e.trace_id, "timestamp": e.timestamp} for e in fresh)
        del linked[:-MAX_LINKED]
        insight["trace_count"] += len(fresh)
        insight["severity"] = _worst([insight["severity"], *(e.verdict.get("severity") for e in fresh)])
        insight["updated_at"] = moment
        if insight["status"] == "resolved":
            insight["status"] = "active"
            counts["reopened"] += 1
        else:
            counts["updated"] += 1
    return counts


def _new_insight(monitor: dict[str, Any], title: str, evidence: list[Evidence], moment: int) -> dict[str, Any]:
    first = evidence[0].verdict
    categories = Counter(str(e.verdict.get("category") or "other") for e in evidence)
    fix = str(first.get("fix") or "").strip()
    surface = first.get("fix_surface")
    changes = surface in ("instructions", "tool") and bool(fix)
    proposed: dict[str, Any] = {"kind": "prompt_change" if changes else "prose", "text": fix or "No fix was proposed."}
    if changes:
        proposed["changes"] = [{"surface": surface, "target": monitor["agent_name"], "new_value": fix}]
    return {
        "id": f"ainsight_{uuid.uuid4().hex[:24]}",
        "monitor_id": monitor["id"],
        "agent_name": monitor["agent_name"],
        "title": title,
        "severity": _worst([e.verdict.get("severity") for e in evidence]),
        "category": categories.most_common(1)[0][0],
        "status": "active",
        "trace_count": len(evidence),
        "created_at": moment,
        "updated_at": moment,
        "description": str(first.get("diagnosis") or "").strip(),
        "details": {
            "highlighted_traces": [
                {"trace_id": e.trace_id, "summary": str(e.verdict.get("summary") or ""), "timestamp": e.timestamp}
                for e in evidence[:HIGHLIGHTED]
            ],
            "linked_traces": [{"trace_id": e.trace_id, "timestamp": e.timestamp} for e in evidence][-MAX_LINKED:],
            "recommended_actions": {"proposed_fix": proposed},
        },
    }


def insight_object(insight: dict[str, Any], *, details: bool) -> dict[str, Any]:
    """Foundry's ``AgentInsight``; its ``details`` only when asked for."""
    return insight if details else {key: value for key, value in insight.items() if key != "details"}


def find_insight(monitor: dict[str, Any], insight_id: str) -> dict[str, Any]:
    insights: list[dict[str, Any]] = monitor["insights"]
    for insight in insights:
        if insight["id"] == insight_id:
            return insight
    raise NotFoundError(f"monitor {monitor['id']} has no insight {insight_id!r}")


def update_insight(
    ctx: ApiContext, project: str, monitor_id: str, insight_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Mark an insight ``active``, ``resolved`` or ``ignored``."""
    status = body.get("status")
    if status not in ("active", "resolved", "ignored"):
        raise ConfigError("status: one of active, resolved, ignored")
    monitor = ctx.store.get_monitor(project, monitor_id)
    insight = find_insight(monitor, insight_id)
    moment = int(time.time())
    insight |= {"status": status, "updated_at": moment}
    monitor["overview"] = _overview(monitor, moment)
    ctx.store.save_monitor(project, _stamped(monitor, monitor.get("next_scheduled_run_at"), moment))
    return insight_object(insight, details=True)


def _overview(monitor: dict[str, Any], moment: int) -> dict[str, Any] | None:
    """The user's overview, else one listing the active insights, worst first (None before any run found one)."""
    if monitor.get("overview_override"):
        return {"content": monitor["overview_override"], "source": "user_override", "updated_at": moment}
    active = sorted(
        (i for i in monitor["insights"] if i["status"] == "active"),
        key=lambda i: (SEVERITIES.index(i["severity"]), -i["trace_count"]),
    )
    if not monitor["insights"]:
        return None
    if not active:
        content = f"No active issues: {len(monitor['insights'])} found before are resolved or ignored."
    else:
        lines = [f"- {i['title']} ({i['severity']}, {i['trace_count']} traces): {i['description']}" for i in active]
        issues = "1 active issue" if len(active) == 1 else f"{len(active)} active issues"
        content = f"{issues} in {monitor['agent_name']}'s traces, worst first:\n" + "\n".join(lines)
    return {"content": content, "source": "generated", "updated_at": moment}


def _worst(severities: list[Any]) -> str:
    given = [s for s in severities if s in SEVERITIES]
    return min(given, key=SEVERITIES.index) if given else "medium"


def _hours(value: Any, where: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_LOOKBACK_HOURS:
        raise ConfigError(f"{where}: a number of hours above 0, at most {MAX_LOOKBACK_HOURS:g}")
    return value


def _key(title: str) -> str:
    return " ".join(title.lower().split())
