"""Responses captured by the pass-through, kept under their ids for ``azure_ai_responses`` runs."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from assay.store import tables as t
from assay.store.base import StoreBase, now


class CapturedStore(StoreBase):
    def put_response(self, project: str, api: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        """Store one forwarded call; the same id again (a client retry) keeps the first."""
        row = {
            "project": project,
            "id": str(response["id"]),
            "api": api,
            "request": request,
            "response": response,
            "created_at": now(),
        }
        with self.engine.begin() as conn:
            conn.execute(self._insert(t.captured_responses).on_conflict_do_nothing(), [row])

    def get_response(self, project: str, response_id: str) -> dict[str, Any] | None:
        """``{id, api, request, response, created_at}``, or None when nothing was captured by that id."""
        table = t.captured_responses
        query = sa.select(table).where(table.c.project == project, table.c.id == response_id)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        return dict(row) if row is not None else None
