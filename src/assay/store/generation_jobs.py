"""Generation jobs as the API returns them (``assay.api.generation_jobs`` runs them; this stores),
with the process running each (``runner``), so a job whose server died can be told apart."""

from __future__ import annotations

from typing import Any, Literal

import sqlalchemy as sa

from assay.errors import NotFoundError
from assay.store import tables as t
from assay.store.base import StoreBase, now

JobKind = Literal["data", "evaluator"]
ENDED = ("succeeded", "failed", "cancelled")


class GenerationJobsStore(StoreBase):
    def add_generation_job(self, project: str, kind: JobKind, job: dict[str, Any], runner: str) -> None:
        row = {
            "project": project,
            "id": job["id"],
            "kind": kind,
            "status": job["status"],
            "runner": runner,
            "body": job,
            "created_at": now(),
        }
        with self.engine.begin() as conn:
            conn.execute(t.generation_jobs.insert().values(**row))

    def update_generation_job(self, project: str, job: dict[str, Any]) -> bool:
        """Store ``job`` as it is now, unless the stored one has ended (a cancel came first); whether stored."""
        table = t.generation_jobs
        mine = sa.and_(table.c.project == project, table.c.id == job["id"], table.c.status.not_in(ENDED))
        with self.engine.begin() as conn:
            return bool(conn.execute(table.update().where(mine).values(status=job["status"], body=job)).rowcount)

    def get_generation_job(self, project: str, kind: JobKind, job_id: str) -> dict[str, Any]:
        table = t.generation_jobs
        query = sa.select(table.c.body).where(table.c.project == project, table.c.kind == kind, table.c.id == job_id)
        with self.engine.connect() as conn:
            found = conn.execute(query).scalar()
        if found is None:
            raise NotFoundError(f"no {kind} generation job {job_id!r}")
        return dict(found)

    def list_generation_jobs(self, project: str, kind: JobKind) -> list[dict[str, Any]]:
        """The project's jobs of ``kind``, oldest first."""
        table = t.generation_jobs
        query = sa.select(table.c.body).where(table.c.project == project, table.c.kind == kind)
        with self.engine.connect() as conn:
            return [dict(row[0]) for row in conn.execute(query.order_by(table.c.created_at, table.c.id))]

    def unfinished_generation_jobs(self, project: str, kind: JobKind) -> list[tuple[dict[str, Any], str | None]]:
        """Jobs queued or running, each with the process running it."""
        table = t.generation_jobs
        query = sa.select(table.c.body, table.c.runner).where(
            table.c.project == project, table.c.kind == kind, table.c.status.not_in(ENDED)
        )
        with self.engine.connect() as conn:
            return [(dict(row.body), row.runner) for row in conn.execute(query)]

    def delete_generation_job(self, project: str, kind: JobKind, job_id: str) -> None:
        self.get_generation_job(project, kind, job_id)
        table = t.generation_jobs
        with self.engine.begin() as conn:
            conn.execute(table.delete().where(table.c.project == project, table.c.id == job_id))
