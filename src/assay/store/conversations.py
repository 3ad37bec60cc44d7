"""The Conversations API's storage (a conversation's metadata and its items in order), and the
project's Azure Monitor ingestion key (the Application Insights connection Foundry's SDK reads)."""

from __future__ import annotations

import uuid
from typing import Any, Literal

import sqlalchemy as sa

from assay.errors import NotFoundError
from assay.store import tables as t
from assay.store.base import StoreBase, new_id, now


class ConversationsStore(StoreBase):
    def ingestion_key(self, project: str) -> str:
        """The project's instrumentation key (a random UUID, made on first asking)."""
        table = t.ingestion_keys
        query = sa.select(table.c.key).where(table.c.project == project)
        with self.engine.begin() as conn:
            found = conn.execute(query).scalar()
            if found is None:
                row = {"project": project, "key": str(uuid.uuid4()), "created_at": now()}
                conn.execute(self._insert(table).on_conflict_do_nothing(), [row])
                found = conn.execute(query).scalar()
        return str(found)

    def project_of_ingestion_key(self, key: str) -> str | None:
        table = t.ingestion_keys
        with self.engine.connect() as conn:
            found = conn.execute(sa.select(table.c.project).where(table.c.key == key)).scalar()
        return None if found is None else str(found)

    def create_conversation(self, project: str, metadata: dict[str, Any] | None) -> dict[str, Any]:
        row = {"project": project, "id": new_id("conv"), "metadata": metadata or {}, "created_at": now()}
        with self.engine.begin() as conn:
            conn.execute(sa.insert(t.conversations), [row])
        return row

    def get_conversation(self, project: str, conversation_id: str) -> dict[str, Any]:
        table = t.conversations
        query = sa.select(table).where(table.c.project == project, table.c.id == conversation_id)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            raise NotFoundError(f"No conversation found with id '{conversation_id}'.")
        return dict(row)

    def update_conversation(self, project: str, conversation_id: str, metadata: dict[str, Any]) -> dict[str, Any]:
        table = t.conversations
        with self.engine.begin() as conn:
            done = conn.execute(
                sa.update(table)
                .where(table.c.project == project, table.c.id == conversation_id)
                .values(metadata=metadata)
            )
        if not done.rowcount:
            raise NotFoundError(f"No conversation found with id '{conversation_id}'.")
        return self.get_conversation(project, conversation_id)

    def delete_conversation(self, project: str, conversation_id: str) -> None:
        items, table = t.conversation_items, t.conversations
        with self.engine.begin() as conn:
            done = conn.execute(sa.delete(table).where(table.c.project == project, table.c.id == conversation_id))
            if not done.rowcount:
                raise NotFoundError(f"No conversation found with id '{conversation_id}'.")
            conn.execute(sa.delete(items).where(items.c.project == project, items.c.conversation_id == conversation_id))

    def add_conversation_items(self, project: str, conversation_id: str, items: list[dict[str, Any]]) -> None:
        """Append ``items`` (each with its ``id``) after the conversation's last one."""
        self.get_conversation(project, conversation_id)
        table = t.conversation_items
        last = sa.select(sa.func.max(table.c.position)).where(
            table.c.project == project, table.c.conversation_id == conversation_id
        )
        with self.engine.begin() as conn:
            start = (conn.execute(last).scalar() or 0) + 1
            rows = [
                {
                    "project": project,
                    "conversation_id": conversation_id,
                    "position": start + offset,
                    "id": str(item["id"]),
                    "item": item,
                    "created_at": now(),
                }
                for offset, item in enumerate(items)
            ]
            if rows:
                conn.execute(sa.insert(table), rows)

    def conversation_items(
        self,
        project: str,
        conversation_id: str,
        *,
        order: Literal["asc", "desc"] = "asc",
        after: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """The conversation's items in ``order``, those after the item ``after`` (in that order)."""
        self.get_conversation(project, conversation_id)
        table = t.conversation_items
        query = sa.select(table.c.position, table.c.item).where(
            table.c.project == project, table.c.conversation_id == conversation_id
        )
        if after is not None:
            mark = sa.select(table.c.position).where(
                table.c.project == project, table.c.conversation_id == conversation_id, table.c.id == after
            )
            with self.engine.connect() as conn:
                position = conn.execute(mark).scalar()
            if position is None:
                raise NotFoundError(f"No item found with id '{after}' in conversation '{conversation_id}'.")
            query = query.where(table.c.position > position if order == "asc" else table.c.position < position)
        query = query.order_by(table.c.position.asc() if order == "asc" else table.c.position.desc())
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            return [dict(row.item) for row in conn.execute(query)]

    def conversation_item(self, project: str, conversation_id: str, item_id: str) -> dict[str, Any]:
        table = t.conversation_items
        query = sa.select(table.c.item).where(
            table.c.project == project, table.c.conversation_id == conversation_id, table.c.id == item_id
        )
        with self.engine.connect() as conn:
            item = conn.execute(query).scalar()
        if item is None:
            raise NotFoundError(f"No item found with id '{item_id}' in conversation '{conversation_id}'.")
        return dict(item)

    def delete_conversation_item(self, project: str, conversation_id: str, item_id: str) -> None:
        table = t.conversation_items
        with self.engine.begin() as conn:
            done = conn.execute(
                sa.delete(table).where(
                    table.c.project == project, table.c.conversation_id == conversation_id, table.c.id == item_id
                )
            )
        if not done.rowcount:
            raise NotFoundError(f"No item found with id '{item_id}' in conversation '{conversation_id}'.")
