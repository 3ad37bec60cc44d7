"""Long-running jobs as the API returns them (``assay.api.jobs`` runs them; this stores): data and
evaluator generation jobs and agent insight runs, each with the process running it (``runner``), so
a job whose server died can be told apart."""

from __future__ import annotations

from typing import Any, Literal

import sqlalchemy as sa

from assay.errors import NotFoundError
from assay.store import tables as t
from assay.store.base import StoreBase, now

JobKind = Literal["data", "evaluator", "insight_run"]
ENDED = ("succeeded", "failed", "cancelled")


class JobsStore(StoreBase):
    def add_job(self, project: str, kind: JobKind, job: dict[str, Any], runner: str) -> None:
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
            conn.execute(t.jobs.insert().values(**row))

    def update_job(self, project: str, job: dict[str, Any]) -> bool:
        """Store ``job`` as it is now, unless the stored one has ended (a cancel came first); whether stored."""
        table = t.jobs
        mine = sa.and_(table.c.project == project, table.c.id == job["id"], table.c.status.not_in(ENDED))
        with self.engine.begin() as conn:
            return bool(conn.execute(table.update().where(mine).values(status=job["status"], body=job)).rowcount)

    def get_job(self, project: str, kind: JobKind, job_id: str) -> dict[str, Any]:
        table = t.jobs
        query = sa.select(table.c.body).where(table.c.project == project, table.c.kind == kind, table.c.id == job_id)
        with self.engine.connect() as conn:
            found = conn.execute(query).scalar()
        if found is None:
            raise NotFoundError(f"no {kind.replace('_', ' ')} job {job_id!r}")
        return dict(found)

    def list_jobs(self, project: str, kind: JobKind) -> list[dict[str, Any]]:
        """The project's jobs of ``kind``, oldest first."""
        table = t.jobs
        query = sa.select(table.c.body).where(table.c.project == project, table.c.kind == kind)
        with self.engine.connect() as conn:
            return [dict(row[0]) for row in conn.execute(query.order_by(table.c.created_at, table.c.id))]

    def unfinished_jobs(self, project: str, kind: JobKind) -> list[tuple[dict[str, Any], str | None]]:
        """Jobs queued or running, each with the process running it."""
        table = t.jobs
        query = sa.select(table.c.body, table.c.runner).where(
            table.c.project == project, table.c.kind == kind, table.c.status.not_in(ENDED)
        )
        with self.engine.connect() as conn:
            return [(dict(row.body), row.runner) for row in conn.execute(query)]

    def delete_job(self, project: str, kind: JobKind, job_id: str) -> None:
        self.get_job(project, kind, job_id)
        table = t.jobs
        with self.engine.begin() as conn:
            conn.execute(table.delete().where(table.c.project == project, table.c.id == job_id))
