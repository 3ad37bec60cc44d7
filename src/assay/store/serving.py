"""What the server needs beyond a run: files, listing and deleting evals and runs, API keys, and
run leases so several workers (threads, processes or machines) share runs without doubling them.

A worker claims a run that is ``queued``, or ``in_progress`` with an expired lease (its worker
died), and renews the lease while it works. On PostgreSQL the claim uses ``FOR UPDATE SKIP
LOCKED``; on SQLite the single writer serialises claims.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any, Literal

import sqlalchemy as sa

from assay.errors import ConfigError, NotFoundError
from assay.results.criterion import Criterion, as_criteria
from assay.results.stored import Eval, Run, StoredItem
from assay.store import tables as t
from assay.store.base import LOCAL_PREFIX, lease_seconds, new_id, now
from assay.store.runs import RunsStore

Order = Literal["asc", "desc"]


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ServingStore(RunsStore):
    # files ---------------------------------------------------------------------------------

    def create_file(self, *, project: str, filename: str, purpose: str, content: bytes) -> dict[str, Any]:
        row = {
            "id": new_id("file"),
            "project": project,
            "filename": filename,
            "purpose": purpose,
            "bytes": len(content),
            "content": content,
            "created_at": now(),
        }
        with self.engine.begin() as conn:
            conn.execute(t.files.insert().values(**row))
        return {k: v for k, v in row.items() if k != "content"}

    def get_file(self, project: str, file_id: str, *, content: bool = False) -> dict[str, Any]:
        columns = [c for c in t.files.c if content or c.name != "content"]
        query = sa.select(*columns).where(t.files.c.id == file_id, t.files.c.project == project)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            raise NotFoundError(f"No file found with id '{file_id}'.")
        return dict(row)

    def list_files(
        self, project: str, *, purpose: str | None, after: str | None, limit: int, order: Order
    ) -> list[dict[str, Any]]:
        columns = [c for c in t.files.c if c.name != "content"]
        query = sa.select(*columns).where(t.files.c.project == project)
        if purpose:
            query = query.where(t.files.c.purpose == purpose)
        return self._page(query, t.files, project, after, limit, order)

    def delete_file(self, project: str, file_id: str) -> None:
        self.get_file(project, file_id)
        with self.engine.begin() as conn:
            conn.execute(t.files.delete().where(t.files.c.id == file_id))

    # evals and runs, as the API lists them ---------------------------------------------------

    def get_eval_in(self, project: str, eval_id: str) -> Eval:
        query = sa.select(t.evals).where(t.evals.c.id == eval_id, t.evals.c.project == project)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            raise NotFoundError(f"No eval found with id '{eval_id}'.")
        return Eval.of_row(row)

    def list_evals(
        self, project: str, *, after: str | None, limit: int, order: Order, by_update: bool = False
    ) -> list[Eval]:
        """Ordered by creation, or with ``by_update`` by last update (an eval never updated counts
        as updated when it was created)."""
        query = sa.select(t.evals).where(t.evals.c.project == project)
        updated = sa.func.coalesce(t.evals.c.updated_at, t.evals.c.created_at)
        found = self._page(query, t.evals, project, after, limit, order, updated if by_update else None)
        return [Eval.of_row(row) for row in found]

    def evals_named(self, project: str, name: str) -> list[Eval]:
        query = sa.select(t.evals).where(t.evals.c.project == project, t.evals.c.name == name)
        with self.engine.connect() as conn:
            return [Eval.of_row(row) for row in conn.execute(query).mappings()]

    def update_eval(self, project: str, eval_id: str, **values: Any) -> Eval:
        self.get_eval_in(project, eval_id)
        if values:
            with self.engine.begin() as conn:
                conn.execute(t.evals.update().where(t.evals.c.id == eval_id).values(**values, updated_at=now()))
        return self.get_eval_in(project, eval_id)

    def delete_eval(self, project: str, eval_id: str) -> None:
        self.get_eval_in(project, eval_id)
        with self.engine.begin() as conn:
            run_ids = sa.select(t.runs.c.id).where(t.runs.c.eval_id == eval_id)
            for table in (t.results, t.item_usage, t.model_batches, t.output_items):
                conn.execute(table.delete().where(table.c.run_id.in_(run_ids)))
            conn.execute(t.runs.delete().where(t.runs.c.eval_id == eval_id))
            conn.execute(t.evals.delete().where(t.evals.c.id == eval_id))

    def get_run_in(self, project: str, eval_id: str, run_id: str) -> Run:
        query = sa.select(t.runs).where(t.runs.c.id == run_id, t.runs.c.eval_id == eval_id, t.runs.c.project == project)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            raise NotFoundError(f"No run found with id '{run_id}' for eval '{eval_id}'.")
        return Run.of_row(row)

    def status_and_criteria(self, project: str, eval_id: str, run_id: str) -> tuple[str, list[Criterion]]:
        """A run's status and its eval's testing criteria, in one query and without reading the rest
        of either (a page of output items needs no more: the whole run and eval, validated, were a
        third of an uncached page)."""
        _, rows = self._read_rows(_STATUS_AND_CRITERIA, {"project": project, "eval_id": eval_id, "run_id": run_id})
        if not rows:
            raise NotFoundError(f"No run found with id '{run_id}' for eval '{eval_id}'.")
        return rows[0].status, as_criteria(rows[0].testing_criteria)

    def list_eval_runs(
        self, project: str, eval_id: str, *, status: str | None, after: str | None, limit: int, order: Order
    ) -> list[Run]:
        query = sa.select(t.runs).where(t.runs.c.project == project, t.runs.c.eval_id == eval_id)
        if status:
            query = query.where(t.runs.c.status == status)
        return [Run.of_row(row) for row in self._page(query, t.runs, project, after, limit, order)]

    def cancel_run(self, project: str, eval_id: str, run_id: str) -> Run:
        """Mark a run canceled unless it already ended; its worker stops at its next check."""
        self.get_run_in(project, eval_id, run_id)
        with self.engine.begin() as conn:
            conn.execute(
                t.runs.update()
                .where(t.runs.c.id == run_id, t.runs.c.status.in_(("queued", "in_progress")))
                .values(status="canceled", finished_at=now())
            )
        return self.get_run_in(project, eval_id, run_id)

    def delete_run(self, project: str, eval_id: str, run_id: str) -> None:
        self.get_run_in(project, eval_id, run_id)
        with self.engine.begin() as conn:
            for table in (t.results, t.item_usage, t.model_batches, t.output_items):
                conn.execute(table.delete().where(table.c.run_id == run_id))
            conn.execute(t.runs.delete().where(t.runs.c.id == run_id))

    def _page(
        self,
        query: Any,
        table: sa.Table,
        project: str,
        after: str | None,
        limit: int,
        order: Order,
        ordered_by: Any = None,
    ) -> list[dict[str, Any]]:
        """Keyset pagination on (``ordered_by``, id), created_at unless given: ``after`` is the
        last id the client saw."""
        key = (table.c.created_at if ordered_by is None else ordered_by, table.c.id)
        if after:
            with self.engine.connect() as conn:
                anchor = conn.execute(sa.select(*key).where(table.c.id == after, table.c.project == project)).first()
            if anchor is None:
                raise NotFoundError(f"'after' names no object: '{after}'")
            cursor = sa.tuple_(*key)
            query = query.where(cursor > sa.tuple_(*anchor) if order == "asc" else cursor < sa.tuple_(*anchor))
        ordering = [c.asc() for c in key] if order == "asc" else [c.desc() for c in key]
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query.order_by(*ordering).limit(limit)).mappings()]

    # leases --------------------------------------------------------------------------------

    def claim_run(self, worker: str) -> Run | None:
        """Take one queued run, or an in-progress one whose worker stopped renewing its lease."""
        clock = time.time()
        # A run a local process left is finished by whoever takes it when its inputs were stored with
        # it; one whose target or items were Python objects (``assay.evaluate``) waits for that process.
        taken_over = sa.and_(
            t.runs.c.status == "in_progress",
            sa.or_(t.runs.c.lease_until.is_(None), t.runs.c.lease_until < clock),
            sa.or_(
                t.runs.c.worker.is_(None),
                ~t.runs.c.worker.startswith(LOCAL_PREFIX, autoescape=True),
                t.runs.c.inputs.is_not(None),
            ),
        )
        claimable = sa.or_(t.runs.c.status == "queued", taken_over)
        with self.engine.begin() as conn:
            query = sa.select(t.runs.c.id).where(claimable).order_by(t.runs.c.created_at).limit(1)
            if self.engine.dialect.name == "postgresql":
                query = query.with_for_update(skip_locked=True)
            run_id = conn.execute(query).scalar()
            if run_id is None:
                self._end_stalled_holders(conn, taken_over)
                return None
            taken = conn.execute(
                t.runs.update()
                .where(t.runs.c.id == run_id, claimable)
                .values(status="in_progress", worker=worker, lease_until=clock + lease_seconds())
            ).rowcount
        return self.get_run(run_id) if taken == 1 else None

    def _end_stalled_holders(self, conn: sa.Connection, taken_over: sa.ColumnElement[bool]) -> None:
        """End the database sessions of workers whose lease expired while they held a lock on their
        run's row: claims skip locked rows, so such a run could never be taken over.

        PostgreSQL ends a session idle inside a transaction by itself (``idle_in_transaction_session_timeout``),
        but not one stalled mid-statement (a worker stopped while sending a large insert): its lock
        would stay for ever. The row's ``xmax`` names the transaction that locked it (or a multixact
        of several), and that transaction's own lock names its session."""
        if self.engine.dialect.name != "postgresql":
            return
        # A transaction that began before the lease ran out and still holds the row is the stalled
        # worker's (this also keeps a healthy session out should a multixact's id equal a live xid).
        holders = sa.text(
            "select l.pid from runs r"
            " join pg_locks l on l.locktype = 'transactionid' and l.transactionid = r.xmax and l.granted"
            " join pg_stat_activity a on a.pid = l.pid"
            " where r.id = :id and l.pid <> pg_backend_pid() and a.xact_start < to_timestamp(r.lease_until)"
        )
        for run_id in conn.execute(sa.select(t.runs.c.id).where(taken_over)).scalars():  # what a claim would take
            for pid in conn.execute(holders, {"id": run_id}).scalars():
                conn.execute(sa.text("select pg_terminate_backend(:pid)"), {"pid": pid})

    def hold_run(self, run_id: str, worker: str, *, replacing: str | None = None) -> None:
        """Take a run for a local process that executes it itself (``assay run``, ``assay.evaluate``):
        in progress, under ``worker``'s lease, so no server worker claims it while it runs. A run
        another worker holds a live lease on is refused, unless that worker is ``replacing``
        (known to be dead)."""
        clock = time.time()
        free = sa.or_(
            t.runs.c.worker.is_(None),
            t.runs.c.worker.in_([worker, replacing or worker]),
            t.runs.c.lease_until.is_(None),
            t.runs.c.lease_until < clock,
            t.runs.c.status != "in_progress",
        )
        with self.engine.begin() as conn:
            held = conn.execute(
                t.runs.update()
                .where(t.runs.c.id == run_id, free)
                .values(status="in_progress", worker=worker, lease_until=clock + lease_seconds(), error=None)
            ).rowcount
            if not held:
                holder = conn.execute(sa.select(t.runs.c.worker).where(t.runs.c.id == run_id)).scalar()
        if not held:
            raise ConfigError(
                f"run {run_id} is being executed by {holder}", hint="wait for it to finish, or cancel it first"
            )

    def renew_lease(self, run_id: str, worker: str) -> str:
        """Extend the lease if ``worker`` still holds it. Returns ``in_progress`` (go on), the run's
        status when it ended or was canceled, or ``lost`` when another worker holds it now (or the
        run is gone): anything but ``in_progress`` tells the worker to stop."""
        with self.engine.begin() as conn:
            mine = sa.and_(t.runs.c.id == run_id, t.runs.c.worker == worker)
            renewed = conn.execute(
                t.runs.update()
                .where(mine, t.runs.c.status == "in_progress")
                .values(lease_until=time.time() + lease_seconds())
            ).rowcount
            if renewed:
                return "in_progress"
            status = conn.execute(sa.select(t.runs.c.status).where(mine)).scalar()
        return "lost" if status is None else str(status)

    # API keys ------------------------------------------------------------------------------

    def create_key(self, project: str) -> str:
        """A new key for ``project``; only its digest is stored, so it is shown this once."""
        key = f"assay-{secrets.token_urlsafe(32)}"
        row = {"digest": key_digest(key), "project": project, "prefix": key[:12], "created_at": now()}
        with self.engine.begin() as conn:
            conn.execute(t.api_keys.insert().values(**row))
        return key

    def project_for_key(self, key: str) -> str | None:
        query = sa.select(t.api_keys.c.project).where(t.api_keys.c.digest == key_digest(key))
        with self.engine.connect() as conn:
            found = conn.execute(query).scalar()
        return None if found is None else str(found)

    def has_keys(self) -> bool:
        with self.engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(t.api_keys)).scalar_one() > 0

    def get_output_item(self, run_id: str, index: int) -> StoredItem:
        query = sa.select(t.output_items).where(
            t.output_items.c.run_id == run_id, t.output_items.c.datasource_item_id == index
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            raise NotFoundError(f"No output item {index} in run '{run_id}'.")
        return StoredItem.model_validate(row)

    def adjacent_items(self, run_id: str, index: int) -> tuple[int | None, int | None]:
        """The run's items just before and just after item ``index`` (None at either end)."""
        items = t.output_items.c
        mine = items.run_id == run_id
        before = sa.select(sa.func.max(items.datasource_item_id)).where(mine, items.datasource_item_id < index)
        after = sa.select(sa.func.min(items.datasource_item_id)).where(mine, items.datasource_item_id > index)
        with self.engine.connect() as conn:
            return conn.execute(before).scalar(), conn.execute(after).scalar()


_STATUS_AND_CRITERIA = (
    sa.select(t.runs.c.status, t.evals.c.testing_criteria)
    .join(t.evals, t.evals.c.id == t.runs.c.eval_id)
    .where(
        t.runs.c.id == sa.bindparam("run_id"),
        t.runs.c.eval_id == sa.bindparam("eval_id"),
        t.runs.c.project == sa.bindparam("project"),
    )
)
