"""Long-running jobs as the API returns them (``assay.api.jobs`` runs them; this stores): data and
evaluator generation jobs, agent insight runs and insights, each with the process running it
(``runner``), so a job whose server died can be told apart. A job stored without a runner waits for
a worker to take it (``claim_job``)."""

from __future__ import annotations

from typing import Any, Literal

import sqlalchemy as sa

from assay.errors import NotFoundError
from assay.store import tables as t
from assay.store.base import StoreBase, now

JobKind = Literal["data", "evaluator", "insight_run", "insight"]
ENDED = ("succeeded", "failed", "cancelled")


class JobsStore(StoreBase):
    def add_job(self, project: str, kind: JobKind, job: dict[str, Any], runner: str | None) -> None:
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

    def claim_job(self, kinds: tuple[JobKind, ...], runner: str) -> tuple[str, JobKind, dict[str, Any]] | None:
        """Take the oldest queued job of ``kinds`` no runner holds, for ``runner``: (its project,
        its kind, the job); None when there is none. Of several workers asking, one takes each."""
        table = t.jobs
        waiting = sa.and_(table.c.runner.is_(None), table.c.status == "queued", table.c.kind.in_(kinds))
        query = sa.select(table.c.project, table.c.id).where(waiting).order_by(table.c.created_at, table.c.id)
        with self.engine.connect() as conn:
            candidates = conn.execute(query.limit(8)).all()
        for project, job_id in candidates:
            this = sa.and_(table.c.project == project, table.c.id == job_id)
            with self.engine.begin() as conn:
                if not conn.execute(table.update().where(this, waiting).values(runner=runner)).rowcount:
                    continue  # another worker took it
                kind, body = conn.execute(sa.select(table.c.kind, table.c.body).where(this)).one()
            return project, kind, dict(body)
        return None

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
