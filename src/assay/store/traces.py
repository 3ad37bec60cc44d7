"""Spans: stored once each (an exporter's retry sends the same span again), selected by trace,
by agent and time window, or by conversation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from assay.errors import NotFoundError, UserError
from assay.store import tables as t
from assay.store.base import StoreBase, now
from assay.traces.spans import Span

AGENT_OPERATION = "invoke_agent"


class TracesStore(StoreBase):
    def add_spans(self, project: str, spans: Iterable[Span]) -> int:
        """Store spans not stored before; returns how many were new."""
        rows = [_row(project, span) for span in spans]
        if not rows:
            return 0
        table = t.spans
        with self.engine.begin() as conn:
            result = conn.execute(self._insert(table).on_conflict_do_nothing(), rows)
        return max(0, result.rowcount or 0)

    def trace_spans(self, project: str, trace_ids: list[str]) -> dict[str, list[Span]]:
        """Every span of these traces, by trace id, in start order."""
        found: dict[str, list[Span]] = {trace_id: [] for trace_id in trace_ids}
        table = t.spans
        for start in range(0, len(trace_ids), 500):
            chunk = trace_ids[start : start + 500]
            query = (
                sa.select(table)
                .where(table.c.project == project, table.c.trace_id.in_(chunk))
                .order_by(table.c.trace_id, table.c.start_ns)
            )
            with self.engine.connect() as conn:
                for row in conn.execute(query).mappings():
                    found[row["trace_id"]].append(_span(row))
        return found

    def trace_id_for(self, project: str, given: str) -> str:
        """The trace a command line names: its whole id or a start only one stored trace has."""
        column = t.spans.c.trace_id
        text = given.lower()
        if len(text) > 32:
            raise NotFoundError(f"no trace {given!r} is stored: trace ids are 32 hex digits")
        if len(text) == 32:  # a whole id (a pattern one longer would not fit the column)
            chosen = column == text
        else:
            escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            chosen = column.like(f"{escaped}%", escape="\\")
        query = sa.select(column).where(t.spans.c.project == project, chosen).distinct().order_by(column).limit(6)
        with self.engine.connect() as conn:
            found = [str(row[0]) for row in conn.execute(query)]
        if text in found or len(found) == 1:
            return text if text in found else found[0]
        if not found:
            raise NotFoundError(f"no trace {given!r} is stored", hint="assay traces list shows the stored ones")
        shown = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
        raise UserError(f"{given!r} is the start of several trace ids: {shown}", hint="give more of the id")

    def trace(self, trace_id: str, project: str | None) -> list[Span]:
        """One trace's spans in start order; of any project when ``project`` is None."""
        table = t.spans
        query = sa.select(table).where(table.c.trace_id == trace_id).order_by(table.c.start_ns)
        if project is not None:
            query = query.where(table.c.project == project)
        with self.engine.connect() as conn:
            return [_span(row) for row in conn.execute(query).mappings()]

    def agent_trace_ids(
        self,
        project: str,
        *,
        agent_name: str | None = None,
        agent_version: str | None = None,
        start_ns: int | None = None,
        end_ns: int | None = None,
        conversation_ids: list[str] | None = None,
    ) -> list[str]:
        """Traces with an ``invoke_agent`` span matching the filter, oldest first."""
        table = t.spans
        where = [table.c.project == project, table.c.operation == AGENT_OPERATION]
        if agent_name is not None:
            where.append(table.c.agent_name == agent_name)
        if agent_version is not None:
            where.append(table.c.agent_version == agent_version)
        if start_ns is not None:
            where.append(table.c.start_ns >= start_ns)
        if end_ns is not None:
            where.append(table.c.start_ns <= end_ns)
        if conversation_ids is not None:
            where.append(table.c.conversation_id.in_(conversation_ids))
        first = sa.func.min(table.c.start_ns)
        query = sa.select(table.c.trace_id, first).where(*where).group_by(table.c.trace_id).order_by(first)
        with self.engine.connect() as conn:
            return [row[0] for row in conn.execute(query)]

    def latest_agent_version(self, project: str, agent_name: str) -> str | None:
        table = t.spans
        query = (
            sa.select(table.c.agent_version)
            .distinct()
            .where(
                table.c.project == project,
                table.c.operation == AGENT_OPERATION,
                table.c.agent_name == agent_name,
                table.c.agent_version.is_not(None),
            )
        )
        with self.engine.connect() as conn:
            versions = [str(row[0]) for row in conn.execute(query)]
        return max(versions, key=_version_key) if versions else None

    def list_traces(self, project: str, *, agent_name: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """The newest traces with an agent span: id, agent, conversation, start, span count."""
        table = t.spans
        columns = (
            table.c.trace_id,
            table.c.agent_name,
            table.c.agent_version,
            table.c.conversation_id,
            table.c.start_ns,
        )
        agents = sa.select(*columns).where(table.c.project == project, table.c.operation == AGENT_OPERATION)
        if agent_name is not None:
            agents = agents.where(table.c.agent_name == agent_name)
        agents = agents.order_by(table.c.start_ns.desc()).limit(limit * 4)
        seen: dict[str, dict[str, Any]] = {}
        with self.engine.connect() as conn:
            for row in conn.execute(agents).mappings():
                if row["trace_id"] not in seen and len(seen) < limit:
                    seen[row["trace_id"]] = dict(row)
            if seen:
                counts = (
                    sa.select(table.c.trace_id, sa.func.count())
                    .where(table.c.project == project, table.c.trace_id.in_(list(seen)))
                    .group_by(table.c.trace_id)
                )
                for trace_id, count in conn.execute(counts):
                    seen[trace_id]["spans"] = count
        return list(seen.values())


def _row(project: str, span: Span) -> dict[str, Any]:
    return {
        "project": project,
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id,
        "name": span.name,
        "kind": span.kind,
        "operation": span.operation[:64],
        "agent_name": span.agent_name,
        "agent_version": span.agent_version,
        "conversation_id": span.conversation_id,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "status_code": span.status_code,
        "status_message": span.status_message,
        "attributes": span.attributes,
        "events": span.events,
        "resource": span.resource,
        "dropped_attributes": span.dropped_attributes,
        "received_at": now(),
    }


def _span(row: Any) -> Span:
    return Span(
        trace_id=row["trace_id"],
        span_id=row["span_id"],
        name=row["name"],
        parent_span_id=row["parent_span_id"],
        kind=row["kind"],
        start_ns=row["start_ns"],
        end_ns=row["end_ns"],
        status_code=row["status_code"],
        status_message=row["status_message"],
        attributes=dict(row["attributes"]),
        events=list(row["events"]),
        resource=dict(row["resource"]),
        dropped_attributes=row["dropped_attributes"],
    )


def _version_key(version: str) -> list[int]:
    return [int(part) if part.isdigit() else 0 for part in version.split(".")]
