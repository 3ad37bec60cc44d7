"""Labels and review queues (``assay.review`` decides what they mean; this stores).

Labels are append-only: there is an ``add`` and reads, no update and no delete. A reviewer who
changes their mind adds a newer label, and readers take each annotator's newest.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import sqlalchemy as sa

from assay.store import tables as t
from assay.store.base import StoreBase, now

LABEL_FIELDS = tuple(c.name for c in t.labels.c if c.name not in ("project", "id", "created_at"))


class ReviewsStore(StoreBase):
    def add_labels(self, project: str, labels: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Store each label (the keys of ``LABEL_FIELDS``; ``annotator``, ``actor_type``, ``source``
        and ``criterion`` required) as a new row; the rows as stored."""
        stamp = time.time()
        rows = [
            {
                **{name: label.get(name) for name in LABEL_FIELDS},
                "project": project,
                "id": f"label_{uuid.uuid4().hex[:24]}",
                "created_at": stamp,
            }
            for label in labels
        ]
        if rows:
            with self.engine.begin() as conn:
                conn.execute(t.labels.insert(), rows)
        return rows

    def labels_of(
        self,
        project: str | None,
        *,
        run_id: str | None = None,
        queue_id: str | None = None,
        trace_ids: list[str] | None = None,
        response_ids: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Labels on a run's items, in a queue, or on traces or responses (any of those given), oldest first."""
        c = t.labels.c
        wanted = []
        if run_id is not None:
            wanted.append(c.run_id == run_id)
        if queue_id is not None:
            wanted.append(c.queue_id == queue_id)
        if trace_ids:
            wanted.append(c.trace_id.in_(trace_ids))
        if response_ids:
            wanted.append(c.response_id.in_(response_ids))
        if not wanted:
            return []
        query = sa.select(t.labels).where(sa.or_(*wanted)).order_by(c.created_at, c.id)
        if project is not None:
            query = query.where(c.project == project)
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def create_queue(self, project: str, body: dict[str, Any], items: list[tuple[int, str | None]]) -> dict[str, Any]:
        """A queue with its items in order, each ``(datasource_item_id, assignee)``."""
        queue_id = f"queue_{uuid.uuid4().hex[:16]}"
        row = {"project": project, "id": queue_id, "body": body, "created_at": now()}
        with self.engine.begin() as conn:
            conn.execute(t.review_queues.insert().values(**row))
            if items:
                conn.execute(
                    t.review_items.insert(),
                    [
                        {
                            "project": project,
                            "queue_id": queue_id,
                            "position": n,
                            "datasource_item_id": i,
                            "assignee": a,
                        }
                        for n, (i, a) in enumerate(items)
                    ],
                )
        return row

    def get_queue(self, project: str | None, queue_id: str) -> dict[str, Any]:
        return self._get_row(t.review_queues, project, queue_id, "review queue")

    def list_queues(self, project: str | None) -> list[dict[str, Any]]:
        query = sa.select(t.review_queues).order_by(t.review_queues.c.created_at.desc(), t.review_queues.c.id)
        if project is not None:
            query = query.where(t.review_queues.c.project == project)
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def queue_items(self, project: str, queue_id: str) -> list[dict[str, Any]]:
        c = t.review_items.c
        query = sa.select(t.review_items).where(c.project == project, c.queue_id == queue_id).order_by(c.position)
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]
