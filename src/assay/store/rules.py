"""Evaluation rules and the events they sampled (``assay.api.rules`` decides; this stores).

A rule's pending events are taken by one server at a time: ``take_events`` leases the rule's row
(conditional on the lease being free, as run claims are) and marks the events with the run that
will evaluate them, in one transaction, so two servers on one database never evaluate an event
twice.
"""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa

from assay.store import tables as t
from assay.store.base import StoreBase, now


class RulesStore(StoreBase):
    def put_rule(self, project: str, rule_id: str, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Create or replace a rule; (its row, whether it is new)."""
        values = {
            "body": body,
            "enabled": bool(body.get("enabled", True)),
            "agent_name": (body.get("filter") or {}).get("agentName"),
            "action_type": str((body.get("action") or {}).get("type") or ""),
            "updated_at": now(),
        }
        created = self._put_row(t.evaluation_rules, project, rule_id, values)
        return self.get_rule(project, rule_id), created

    def get_rule(self, project: str, rule_id: str) -> dict[str, Any]:
        return self._get_row(t.evaluation_rules, project, rule_id, "evaluation rule")

    def list_rules(
        self,
        project: str | None,
        *,
        action_type: str | None = None,
        agent_name: str | None = None,
        enabled: bool | None = None,
    ) -> list[dict[str, Any]]:
        """A project's rules (every project's when None), oldest first, filtered as Foundry's list is."""
        table = t.evaluation_rules
        query = sa.select(table).order_by(table.c.created_at, table.c.id)
        if project is not None:
            query = query.where(table.c.project == project)
        if action_type is not None:
            query = query.where(sa.func.lower(table.c.action_type) == action_type.lower())
        if agent_name is not None:
            query = query.where(table.c.agent_name == agent_name)
        if enabled is not None:
            query = query.where(table.c.enabled.is_(enabled))
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def delete_rule(self, project: str, rule_id: str) -> None:
        self.get_rule(project, rule_id)
        with self.engine.begin() as conn:
            for table in (t.rule_events, t.evaluation_rules):
                key = table.c.rule_id if table is t.rule_events else table.c.id
                conn.execute(table.delete().where(table.c.project == project, key == rule_id))

    def add_rule_event(self, project: str, rule_id: str, response_id: str) -> None:
        """A response the rule sampled; the same response again (a client retry) is kept once."""
        row = {"project": project, "rule_id": rule_id, "response_id": response_id, "created_at": time.time()}
        with self.engine.begin() as conn:
            conn.execute(self._insert(t.rule_events).on_conflict_do_nothing(), [row])

    def pending_since(self, project: str, rule_id: str) -> tuple[int, float | None]:
        """(how many events wait, when the oldest came)."""
        events = t.rule_events.c
        query = sa.select(sa.func.count(), sa.func.min(events.created_at)).where(
            events.project == project, events.rule_id == rule_id, events.run_id.is_(None)
        )
        with self.engine.connect() as conn:
            count, oldest = conn.execute(query).one()
        return int(count), oldest

    def runs_since(self, project: str, rule_id: str, since: float) -> int:
        """Runs the rule started after ``since`` (for its hourly cap), found by the name each is given
        (``rule <id>``), not by the rule's events: a rule deleted and made again keeps its count."""
        runs = t.runs.c
        named = sa.and_(runs.project == project, runs.name == f"rule {rule_id}")
        query = sa.select(sa.func.count()).where(named, runs.created_at >= since)
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar() or 0)

    def take_events(self, project: str, rule_id: str, worker: str, run_id: str, lease: float) -> list[str]:
        """Lease the rule and mark its pending events as ``run_id``'s; [] when another server holds
        it. Pending: never taken, or taken for a run that was never made (its taker died between
        taking and making it; with the lease held, no other server is between the two now). The
        caller makes the run, then ``release_rule``."""
        rules, events = t.evaluation_rules.c, t.rule_events.c
        clock = time.time()
        free = sa.or_(rules.lease_until.is_(None), rules.lease_until < clock, rules.holder == worker)
        mine = sa.and_(rules.project == project, rules.id == rule_id)
        with self.engine.begin() as conn:
            leased = conn.execute(
                t.evaluation_rules.update().where(mine, free).values(holder=worker, lease_until=clock + lease)
            ).rowcount
            if not leased:
                return []
            orphaned = ~events.run_id.in_(sa.select(t.runs.c.id))
            pending = sa.and_(
                events.project == project, events.rule_id == rule_id, sa.or_(events.run_id.is_(None), orphaned)
            )
            # One statement marks and returns the events: a separate select, then update, would mark
            # an event another server added between the two (PostgreSQL's read committed sees it)
            # without returning it, and that event would never be evaluated.
            marked = t.rule_events.update().where(pending).values(run_id=run_id).returning(events.response_id)
            return [str(r[0]) for r in conn.execute(marked)]

    def relabel_events(self, project: str, rule_id: str, marker: str, run_id: str, ids: list[str]) -> None:
        """Events ``take_events`` marked (these of them), now the made run's."""
        events = t.rule_events.c
        mine = sa.and_(
            events.project == project, events.rule_id == rule_id, events.run_id == marker, events.response_id.in_(ids)
        )
        with self.engine.begin() as conn:
            conn.execute(t.rule_events.update().where(mine).values(run_id=run_id))

    def rule_run_ids(self, project: str, rule_id: str, since: float = 0) -> list[str]:
        """The runs the rule made (those created at ``since`` or later)."""
        events = t.rule_events.c
        made = sa.select(t.runs.c.id).where(t.runs.c.created_at >= since)
        query = (
            sa.select(events.run_id)
            .where(events.project == project, events.rule_id == rule_id, events.run_id.in_(made))
            .distinct()
        )
        with self.engine.connect() as conn:
            return [str(row[0]) for row in conn.execute(query)]

    def release_rule(self, project: str, rule_id: str, worker: str) -> None:
        rules = t.evaluation_rules.c
        mine = sa.and_(rules.project == project, rules.id == rule_id, rules.holder == worker)
        with self.engine.begin() as conn:
            conn.execute(t.evaluation_rules.update().where(mine).values(holder=None, lease_until=None))
