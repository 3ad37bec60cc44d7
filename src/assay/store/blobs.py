"""Blob containers for Foundry's dataset upload: ``startPendingUpload`` opens one (its random
signature is the SAS credential the client gets), azure-storage-blob puts a whole blob or stages
blocks and commits a block list, and a committed blob is stored as a file (``purpose: evals``)
that a dataset version then points at."""

from __future__ import annotations

import secrets
from typing import Any

import sqlalchemy as sa

from assay.errors import UserError
from assay.store import tables as t
from assay.store.base import now
from assay.store.serving import ServingStore

MAX_BLOCKS = 50_000
"""Azure's own limit on the blocks of one blob."""


class BlobStore(ServingStore):
    def open_container(self, project: str) -> dict[str, Any]:
        row = {
            "id": secrets.token_hex(16),
            "project": project,
            "signature": secrets.token_urlsafe(32),
            "created_at": now(),
        }
        with self.engine.begin() as conn:
            conn.execute(t.blob_containers.insert().values(**row))
        return row

    def container(self, container_id: str) -> dict[str, Any] | None:
        query = sa.select(t.blob_containers).where(t.blob_containers.c.id == container_id)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        return dict(row) if row else None

    def put_blob(self, container: dict[str, Any], name: str, content: bytes) -> dict[str, Any]:
        """Store ``content`` as blob ``name`` (replacing one of that name); returns its file row."""
        file = self.create_file(
            project=container["project"], filename=name.rsplit("/", 1)[-1], purpose="evals", content=content
        )
        key = {"container": container["id"], "name": name}
        with self.engine.begin() as conn:
            old = conn.execute(sa.select(t.blobs.c.file_id).filter_by(**key)).scalar()
            if old is not None:
                conn.execute(t.blobs.delete().filter_by(**key))
                conn.execute(t.files.delete().where(t.files.c.id == old))
            conn.execute(t.blobs.insert().values(**key, file_id=file["id"], created_at=now()))
            conn.execute(
                t.blob_blocks.delete().where(t.blob_blocks.c.container == container["id"], t.blob_blocks.c.blob == name)
            )
        return file

    def stage_block(self, container: dict[str, Any], name: str, block_id: str, content: bytes) -> None:
        key = {"container": container["id"], "blob": name, "block_id": block_id}
        with self.engine.begin() as conn:
            staged = conn.execute(
                sa.select(sa.func.count())
                .select_from(t.blob_blocks)
                .where(t.blob_blocks.c.container == container["id"], t.blob_blocks.c.blob == name)
            ).scalar_one()
            if staged >= MAX_BLOCKS:
                raise UserError(f"blob {name!r} already has {MAX_BLOCKS} uncommitted blocks")
            conn.execute(t.blob_blocks.delete().filter_by(**key))  # a block staged again replaces the first
            conn.execute(t.blob_blocks.insert().values(**key, content=content))

    def commit_blocks(self, container: dict[str, Any], name: str, block_ids: list[str]) -> dict[str, Any]:
        """Join the staged blocks in ``block_ids``'s order into blob ``name`` (Put Block List)."""
        query = sa.select(t.blob_blocks.c.block_id, t.blob_blocks.c.content).where(
            t.blob_blocks.c.container == container["id"], t.blob_blocks.c.blob == name
        )
        with self.engine.connect() as conn:
            staged = {block_id: bytes(content) for block_id, content in conn.execute(query)}
        missing = [block_id for block_id in block_ids if block_id not in staged]
        if missing:
            raise UserError(f"block list of {name!r} names block {missing[0]!r}, which was never staged")
        return self.put_blob(container, name, b"".join(staged[block_id] for block_id in block_ids))

    def blob_file(self, container_id: str, name: str) -> str | None:
        query = sa.select(t.blobs.c.file_id).where(t.blobs.c.container == container_id, t.blobs.c.name == name)
        with self.engine.connect() as conn:
            return conn.execute(query).scalar()

    def list_blobs(self, container_id: str, prefix: str = "", limit: int = 5000) -> list[tuple[str, int, int]]:
        """(name, size in bytes, created_at) of the container's blobs whose names start with
        ``prefix``, by name."""
        table = t.blobs
        query = (
            sa.select(table.c.name, t.files.c.bytes, table.c.created_at)
            .join(t.files, t.files.c.id == table.c.file_id)
            .where(table.c.container == container_id)
            .order_by(table.c.name)
            .limit(limit)
        )
        if prefix:
            query = query.where(sa.func.substr(table.c.name, 1, len(prefix)) == prefix)
        with self.engine.connect() as conn:
            return [(str(name), int(size), int(created)) for name, size, created in conn.execute(query)]

    def blob_of_file(self, file_id: str) -> tuple[str, str] | None:
        """(container, blob name) a file was uploaded as, if it came through a container."""
        query = sa.select(t.blobs.c.container, t.blobs.c.name).where(t.blobs.c.file_id == file_id)
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return (row[0], row[1]) if row else None

    def expose_file(self, project: str, file_id: str) -> tuple[dict[str, Any], str]:
        """A container holding ``file_id`` as a blob, for a credential to read it: the one it was
        uploaded through, or a new one."""
        found = self.blob_of_file(file_id)
        if found is not None:
            container = self.container(found[0])
            if container is not None and container["project"] == project:
                return container, found[1]
        file = self.get_file(project, file_id)
        container = self.open_container(project)
        with self.engine.begin() as conn:
            conn.execute(
                t.blobs.insert().values(
                    container=container["id"], name=file["filename"], file_id=file_id, created_at=now()
                )
            )
        return container, file["filename"]
