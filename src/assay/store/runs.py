"""Evals, runs and output items: what a run reads and writes.

Output items are keyed ``(run_id, datasource_item_id)`` and inserted with ``ON CONFLICT DO
NOTHING``: a resumed run never writes an item twice. A summary is counted from the rows an item is
written as (``assay.store.tally``): as they are written, or read back from the per-criterion
``results`` rows, so it is exact however often a run was resumed.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator, Sequence
from typing import Any

import sqlalchemy as sa

from assay.errors import NotFoundError, UserError
from assay.results import OutputItem, RunSummary
from assay.results.criterion import Criterion
from assay.results.stored import Eval, Run, RunSettings, StoredItem
from assay.store import tables as t
from assay.store.base import DEFAULT_PROJECT, StoreBase, lease_seconds, new_id, now
from assay.store.item_rows import ItemRows, encode_items
from assay.store.tally import (
    ITEM_COLUMNS,
    RESULT_COLUMNS,
    ROLE_USAGE_COLUMNS,
    RunTally,
)

TALLY_PAGE = 5000
"""Rows read at a time when a run's tally is read back from the store."""


class RunsStore(StoreBase):
    # evals ---------------------------------------------------------------------------------

    def create_eval(
        self,
        *,
        name: str | None,
        data_source_config: dict[str, Any],
        testing_criteria: list[Criterion],
        metadata: dict[str, Any] | None = None,
        project: str = DEFAULT_PROJECT,
        id: str | None = None,  # noqa: A002 - an imported eval keeps its own id
        created_at: int | None = None,
    ) -> Eval:
        row = {
            "id": id or new_id("eval"),
            "project": project,
            "name": name,
            "data_source_config": data_source_config,
            "testing_criteria": testing_criteria,
            "metadata": metadata,
            "created_at": created_at or now(),
        }
        with self.engine.begin() as conn:
            conn.execute(t.evals.insert().values(**row))
        return Eval.of_row(row)

    def get_eval(self, eval_id: str) -> Eval:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(t.evals).where(t.evals.c.id == eval_id)).mappings().first()
        if row is None:
            raise NotFoundError(f"no eval with id {eval_id!r}")
        return Eval.of_row(row)

    # runs ----------------------------------------------------------------------------------

    def create_run(
        self,
        *,
        eval_id: str,
        data_source: dict[str, Any],
        options: RunSettings | None = None,
        name: str | None = None,
        project: str = DEFAULT_PROJECT,
        held_by: str | None = None,
        inputs: dict[str, Any] | None = None,
        id: str | None = None,  # noqa: A002 - an imported run keeps its own id
        created_at: int | None = None,
    ) -> Run:
        """A queued run; with ``held_by``, one that process executes itself, in progress under its lease.
        ``inputs``: what that process brought (``assay.run.request.RunInputs``), for whoever finishes it."""
        row: dict[str, Any] = {
            "id": id or new_id("evalrun"),
            "project": project,
            "eval_id": eval_id,
            "name": name,
            "status": "queued",
            "data_source": data_source,
            "options": options.stored() if options is not None else {},
            "summary": None,
            "error": None,
            "metadata": None,
            "created_at": created_at or now(),
            "finished_at": None,
            "inputs": inputs,
        }
        if held_by is not None:
            row.update(status="in_progress", worker=held_by, lease_until=time.time() + lease_seconds())
        with self.engine.begin() as conn:
            conn.execute(t.runs.insert().values(**row))
        return Run.of_row(row)

    def get_run(self, run_id: str) -> Run:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(t.runs).where(t.runs.c.id == run_id)).mappings().first()
        if row is None:
            raise NotFoundError(f"no run with id {run_id!r}", hint="`assay runs list` shows the runs in this store")
        return Run.of_row(row)

    def run_id_for(self, given: str, project: str | None = None) -> str:
        """The run a command line names: its whole id, or a prefix only one run's id starts with
        (``evalrun_4a04``; the ``evalrun_`` itself may be left out), or ``last``, the newest run. With
        ``project``, only that project's runs are looked at: the answer never tells of another
        project's ids."""
        if given == LAST_RUN:  # never a run id's start: ids are hex
            newest = self.list_runs(limit=1, project=project)
            if not newest:
                raise NotFoundError("there are no runs in this store yet", hint="`assay run eval.yaml` makes one")
            return newest[0].id
        ids = t.runs.c.id
        mine = t.runs.c.project == project if project is not None else sa.true()
        with self.engine.connect() as conn:
            if conn.execute(sa.select(ids).where(ids == given, mine)).first() is not None:
                return given
            prefix = given if given.startswith("evalrun_") else f"evalrun_{given}"
            escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            query = sa.select(ids).where(ids.like(f"{escaped}%", escape="\\"), mine).order_by(ids).limit(6)
            found = [str(row[0]) for row in conn.execute(query)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise NotFoundError(f"no run with id {given!r}", hint="`assay runs list` shows the runs in this store")
        shown = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
        raise UserError(f"{given!r} is the start of several run ids: {shown}", hint="give more of the id")

    def list_runs(self, *, limit: int = 20, status: str | None = None, project: str | None = None) -> list[Run]:
        """The newest runs first; of one project, or of every project when ``project`` is None."""
        query = sa.select(t.runs).order_by(t.runs.c.created_at.desc(), t.runs.c.id.desc()).limit(limit)
        if status:
            query = query.where(t.runs.c.status == status)
        if project is not None:
            query = query.where(t.runs.c.project == project)
        with self.engine.connect() as conn:
            return [Run.of_row(row) for row in conn.execute(query).mappings()]

    def judge_models(self, run_id: str) -> dict[str, str]:
        """criterion → the model that judged most of its items (criteria no model judged are absent)."""
        res = t.results.c
        query = (
            sa.select(res.criterion, res.model, sa.func.count())
            .where(res.run_id == run_id, res.model.is_not(None))
            .group_by(res.criterion, res.model)
        )
        counted: dict[str, tuple[int, str]] = {}
        with self.engine.connect() as conn:
            for criterion, model, count in conn.execute(query).all():
                if count > counted.get(criterion, (0, ""))[0]:
                    counted[criterion] = (int(count), str(model))
        return {criterion: model for criterion, (_, model) in counted.items()}

    def list_runs_of(self, eval_id: str) -> list[Run]:
        """Every run of one eval, the newest first."""
        query = sa.select(t.runs).where(t.runs.c.eval_id == eval_id)
        with self.engine.connect() as conn:
            ordered = query.order_by(t.runs.c.created_at.desc(), t.runs.c.id.desc())
            return [Run.of_row(row) for row in conn.execute(ordered).mappings()]

    def update_run(self, run_id: str, *, worker: str | None = None, **values: Any) -> bool:
        """Change a run; with ``worker``, only while that worker holds the run's lease (a worker that
        stalled and lost its run to another must not overwrite it). Returns whether it changed."""
        if isinstance(values.get("options"), RunSettings):
            values["options"] = values["options"].stored()
        if isinstance(values.get("summary"), RunSummary):
            values["summary"] = values["summary"].model_dump()
        if values.get("status") in ("completed", "failed", "canceled"):
            values.setdefault("finished_at", now())
        query = t.runs.update().where(t.runs.c.id == run_id)
        if worker is not None:
            query = query.where(t.runs.c.worker == worker, t.runs.c.status.in_(("in_progress", "canceled")))
        with self.engine.begin() as conn:
            return bool(conn.execute(query.values(**values)).rowcount)

    def _holds_lease(self, conn: sa.Connection, run_id: str, worker: str) -> bool:
        """Whether ``worker`` still holds the run, checked inside the caller's transaction (on
        PostgreSQL the row is locked until it ends, so no claim can slip in between)."""
        # The driver's own statement: SQLAlchemy's compiling and caching of a select cost more than
        # the read (once per batch of a run's writes).
        if self.engine.dialect.name == "postgresql":
            statement = "SELECT worker, status FROM runs WHERE id = %s FOR SHARE"
        else:
            statement = "SELECT worker, status FROM runs WHERE id = ?"
        row = conn.exec_driver_sql(statement, (run_id,)).first()
        return row is not None and row[0] == worker and row[1] in ("in_progress", "canceled")

    # output items --------------------------------------------------------------------------

    def add_output_items(
        self,
        run_id: str,
        items: Sequence[OutputItem | ItemRows],
        *,
        worker: str | None = None,
        tally: RunTally | None = None,
    ) -> bool:
        """Insert a batch in one transaction; items already stored are left as they are. With
        ``worker``, nothing is written unless it still holds the run's lease; returns whether written.
        ``tally`` counts what was written (it is marked incomplete if some items were already there)."""
        if not items:
            return True
        item_rows, result_rows, usage_rows = encode_items(run_id, items, now())
        with self.engine.begin() as conn:
            if worker is not None and not self._holds_lease(conn, run_id, worker):
                return False
            inserted = self._insert_tuples(conn, t.output_items, ITEM_COLUMNS, item_rows, ready=ITEM_JSON)
            inserted += self._insert_tuples(conn, t.results, RESULT_COLUMNS, result_rows, ready=RESULT_VALUES)
            self._insert_tuples(conn, t.item_usage, ROLE_USAGE_COLUMNS, usage_rows)
        if tally is not None:
            if inserted == len(item_rows) + len(result_rows):
                tally.add(item_rows, result_rows, usage_rows)
            else:
                tally.complete = False
        return True

    def record_model_batch(self, run_id: str, model: str, batch_id: str) -> None:
        """A Batch API batch the run created (batch mode), kept so a resume collects it."""
        row = {"run_id": run_id, "batch_id": batch_id, "model": model, "created_at": now()}
        with self.engine.begin() as conn:
            conn.execute(self._insert(t.model_batches).on_conflict_do_nothing(), [row])

    def model_batches(self, run_id: str) -> list[tuple[str, str]]:
        """(model, batch id) of each batch the run created, oldest first."""
        table = t.model_batches
        query = sa.select(table.c.model, table.c.batch_id).where(table.c.run_id == run_id)
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(table.c.created_at, table.c.batch_id)).all()
        return [(str(model), str(batch_id)) for model, batch_id in rows]

    def done_item_ids(self, run_id: str) -> set[int]:
        query = sa.select(t.output_items.c.datasource_item_id).where(t.output_items.c.run_id == run_id)
        with self.engine.connect() as conn:
            return set(conn.execute(query).scalars())

    def delete_output_items(self, run_id: str, item_ids: Sequence[int]) -> None:
        """Forget some items so a resumed run evaluates them again (``--retry-errors``)."""
        with self.engine.begin() as conn:
            for table in (t.results, t.item_usage, t.output_items):
                for start in range(0, len(item_ids), 500):
                    chunk = list(item_ids[start : start + 500])
                    conn.execute(table.delete().where(table.c.run_id == run_id, table.c.datasource_item_id.in_(chunk)))

    def iter_output_items(
        self,
        run_id: str,
        *,
        after: int | None = None,
        limit: int | None = None,
        status: str | None = None,
        descending: bool = False,
        batch: int = 1000,
    ) -> Iterator[StoredItem]:
        """Output items in ``datasource_item_id`` order, paged by keyset (never OFFSET)."""
        remaining = limit
        cursor = after
        while remaining is None or remaining > 0:
            size = batch if remaining is None else min(batch, remaining)
            query = _item_page(cursor is not None, status is not None, descending)
            params = _page_params(run_id, cursor, size, status)
            with self.engine.connect() as conn:
                outputs = [StoredItem.model_validate(row) for row in conn.execute(query, params).mappings()]
            yield from outputs
            if len(outputs) < size:
                return
            cursor = outputs[-1].datasource_item_id
            if remaining is not None:
                remaining -= len(outputs)

    def output_item_texts(
        self, run_id: str, *, after: int | None, limit: int, status: str | None = None, descending: bool = False
    ) -> list[dict[str, Any]]:
        """A page of output items as ``iter_output_items`` gives them, but with the JSON columns
        as the JSON text stored (``values.TAG`` marks what must be decoded before use): an API page
        splices the text into its answer instead of decoding and encoding every item again."""
        query = _item_text_page(after is not None, status is not None, descending)
        names, rows = self._read_rows(query, _page_params(run_id, after, limit, status))
        return [dict(zip(names, row, strict=True)) for row in rows]

    def find_output_items(
        self,
        run_id: str,
        *,
        status: str | None = None,
        criterion: str | None = None,
        verdict: str | None = None,
        text: str | None = None,
        sort: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[StoredItem], int]:
        """One page of a run's output items for the UI, and how many match in all.

        ``criterion`` with ``verdict`` (pass, fail, error, skipped) keeps the items that criterion
        judged so; ``text`` keeps items whose data or results contain it (case-insensitive);
        ``sort`` is ``score`` or ``-score`` on ``criterion`` (items it did not score last)."""
        items, res = t.output_items.c, t.results.c
        query = sa.select(t.output_items).where(items.run_id == run_id)
        if status:
            query = query.where(items.status == status)
        if criterion and (verdict or sort):
            query = query.join(
                t.results,
                sa.and_(
                    res.run_id == items.run_id,
                    res.datasource_item_id == items.datasource_item_id,
                    res.criterion == criterion,
                ),
            )
            if verdict in ("pass", "fail"):
                query = query.where(res.passed.is_(verdict == "pass"), res.status == "completed")
            elif verdict == "error":
                query = query.where(res.status == "error")
            elif verdict in ("skipped", "undetermined", "filtered"):
                query = query.where(res.status == verdict)
        if text:
            pattern = "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            searched = sa.func.lower(sa.cast(items.datasource_item, sa.Text) + " " + sa.cast(items.results, sa.Text))
            query = query.where(searched.like(pattern, escape="\\"))
        order: list[Any] = [items.datasource_item_id]
        if criterion and sort in ("score", "-score"):
            score = res.score.desc() if sort == "-score" else res.score.asc()
            order = [res.score.is_(None), score, items.datasource_item_id]
        with self.engine.connect() as conn:
            total = int(conn.execute(sa.select(sa.func.count()).select_from(query.subquery())).scalar_one())
            page = conn.execute(query.order_by(*order).offset(offset).limit(limit)).mappings()
            outputs = [StoredItem.model_validate(row) for row in page]
        return outputs, total

    def summarize(
        self, run_id: str, criteria: Sequence[tuple[str, str]], written: RunTally | None = None
    ) -> RunSummary:
        """Counts per item status and per criterion, mean scores, score steps and model calls
        (``RunTally.summary``): from ``written``, the tally kept as this process wrote the run's items,
        when it covers every item stored, else from the rows read back (``tally_of``)."""
        tally = written
        if tally is None or not tally.complete or tally.written != self.count_output_items(run_id):
            tally = self.tally_of(run_id)
        return tally.summary(criteria)

    def count_output_items(self, run_id: str) -> int:
        query = sa.select(sa.func.count()).select_from(t.output_items).where(t.output_items.c.run_id == run_id)
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def tally_of(self, run_id: str, *, items: bool = True) -> RunTally:
        """A run's tally from its stored rows, read a page at a time; ``items=False`` reads only its
        results (the scores)."""
        tally = RunTally()
        reads: list[tuple[str, sa.Table, tuple[str, ...]]] = [("results", t.results, RESULT_COLUMNS)]
        if items:
            reads += [("items", t.output_items, ITEM_COLUMNS), ("role_usage", t.item_usage, ROLE_USAGE_COLUMNS)]
        with self.engine.connect() as conn:
            for kind, table, columns in reads:
                # The columns the tally does not read (an item's JSON) are read as nulls.
                read = [table.c[name] if name not in ITEM_JSON else sa.null() for name in columns]
                query = sa.select(*read).where(table.c.run_id == run_id)
                for page in conn.execute(query.execution_options(yield_per=TALLY_PAGE)).partitions():
                    tally.add(**{kind: page})
        return tally

    def score_steps(self, run_id: str) -> dict[str, list[tuple[float, int]]]:
        """Each criterion's scores counted in steps of 0.001 (``RunTally.score_steps``): the charts'
        input at a size that does not grow with the run."""
        return self.tally_of(run_id, items=False).score_steps()


LAST_RUN = "last"
"""What commands take for the newest run, where they take a run's id."""


ITEM_JSON = frozenset({"datasource_item", "sample", "results"})
"""An output item's JSON columns, which ``add_output_items`` encodes itself."""


RESULT_VALUES = frozenset({"passed", "score"})
"""A validated result's verdict (a bool or None) and score (a float or None), as either driver takes them."""


@functools.cache
def _item_page(after: bool, status: bool, descending: bool) -> sa.Select[Any]:
    """A run's output items past a cursor (keyset paging, never OFFSET), a page of them: built once
    per shape, its values bound at each call (``_page_params``), so a page costs no statement
    building (a third of an API page read, before)."""
    column = t.output_items.c.datasource_item_id
    query = sa.select(t.output_items).where(t.output_items.c.run_id == sa.bindparam("run_id"))
    if status:
        query = query.where(t.output_items.c.status == sa.bindparam("status"))
    if after:
        cursor = sa.bindparam("after", type_=sa.Integer)
        query = query.where(column < cursor if descending else column > cursor)
    return query.order_by(column.desc() if descending else column).limit(sa.bindparam("size", type_=sa.Integer))


@functools.cache
def _item_text_page(after: bool, status: bool, descending: bool) -> sa.Select[Any]:
    """``_item_page`` with its JSON columns as the text stored. The page is chosen first and only
    its rows are cast: a planner working from stale statistics (a run just written) may read every
    row past the cursor before its LIMIT."""
    chosen = _item_page(after, status, descending).subquery()
    c = chosen.c
    texts = [sa.cast(column, sa.Text).label(column.name) for column in (c.datasource_item, c.sample, c.results)]
    order = c.datasource_item_id.desc() if descending else c.datasource_item_id
    return sa.select(c.run_id, c.datasource_item_id, c.status, c.created_at, *texts).order_by(order)


def _page_params(run_id: str, after: int | None, size: int, status: str | None) -> dict[str, Any]:
    return {"run_id": run_id, "after": after, "size": size, "status": status}
