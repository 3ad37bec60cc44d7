"""What real users asked an agent, read from its stored traces: shown to a generator as what tests
should resemble (``assay eval generate --trace-days``, an evaluator generation job's ``traces``
source), or kept as they are as a dataset (a data generation job of type ``traces``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.traces.conversion import turns_of

if TYPE_CHECKING:
    from assay.store import Store

OBSERVED = 30
"""Traced requests shown to a generator, at most."""
TRACES_READ = 200
"""The newest traces read, at most."""


def traced_requests(
    store: Store,
    project: str,
    agent_name: str,
    *,
    agent_version: str | None = None,
    start_ns: int | None = None,
    end_ns: int | None = None,
    trace_ids: list[str] | None = None,
    limit: int = OBSERVED,
) -> list[str]:
    """The distinct last user messages of the agent's traced turns in the window (or in the traces
    ``trace_ids`` names), oldest first."""
    ids = trace_ids or store.agent_trace_ids(
        project, agent_name=agent_name, agent_version=agent_version, start_ns=start_ns, end_ns=end_ns
    )
    found: dict[str, None] = {}
    for spans in store.trace_spans(project, ids[-TRACES_READ:]).values():
        for turn in turns_of(spans, agent_name, agent_version):
            users = [m.text.strip() for m in turn.messages if m.role == "user" and m.text.strip()]
            if users:
                found.setdefault(users[-1][:500])
    return list(found)[:limit]
