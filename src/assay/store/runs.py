"""Evals, runs and output items: what a run reads and writes.

Output items are keyed ``(run_id, datasource_item_id)`` and inserted with ``ON CONFLICT DO
NOTHING``: a resumed run never writes an item twice. Summaries are ``GROUP BY`` queries over the
per-criterion ``results`` rows, so they are exact however often a run was resumed.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator, Sequence
from typing import Any

import sqlalchemy as sa

from assay.errors import NotFoundError, UserError
from assay.results import CriterionSummary, ModelUsage, OutputItem, Result, ResultCounts, RunSummary
from assay.results.records import RoleUsage
from assay.results.stored import Eval, Run, RunSettings, StoredItem
from assay.stats import t_interval_from_moments, wilson
from assay.store import tables as t
from assay.store import values
from assay.store.base import DEFAULT_PROJECT, StoreBase, lease_seconds, new_id, now

USAGE_COLUMNS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "cached_tokens")


class RunsStore(StoreBase):
    # evals ---------------------------------------------------------------------------------

    def create_eval(
        self,
        *,
        name: str | None,
        data_source_config: dict[str, Any],
        testing_criteria: list[dict[str, Any]],
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

    def run_id_for(self, given: str) -> str:
        """The run a command line names: its whole id, or a prefix only one run's id starts with
        (``evalrun_4a04``; the ``evalrun_`` itself may be left out)."""
        ids = t.runs.c.id
        with self.engine.connect() as conn:
            if conn.execute(sa.select(ids).where(ids == given)).first() is not None:
                return given
            prefix = given if given.startswith("evalrun_") else f"evalrun_{given}"
            escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            query = sa.select(ids).where(ids.like(f"{escaped}%", escape="\\")).order_by(ids).limit(6)
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
        query = sa.select(t.runs.c.worker, t.runs.c.status).where(t.runs.c.id == run_id)
        if self.engine.dialect.name == "postgresql":
            query = query.with_for_update(read=True)
        row = conn.execute(query).first()
        return row is not None and row.worker == worker and row.status in ("in_progress", "canceled")

    # output items --------------------------------------------------------------------------

    def add_output_items(self, run_id: str, items: Sequence[OutputItem], *, worker: str | None = None) -> bool:
        """Insert a batch in one transaction; items already stored are left as they are. With
        ``worker``, nothing is written unless it still holds the run's lease; returns whether written."""
        if not items:
            return True
        created = now()
        item_rows = [
            (
                run_id,
                item.datasource_item_id,
                item.status,
                values.dumps(item.datasource_item),
                values.dumps(item.sample),
                _results_json(item.results),
                created,
                *_target_columns(item),
            )
            for item in items
        ]
        result_rows = [
            (run_id, item.datasource_item_id, r.name, r.metric, r.status, r.passed, r.score, *_usage_columns(r))
            for item in items
            for r in item.results
        ]
        usage_rows = [row for item in items if item.sample is not None for row in _role_usage(run_id, item)]
        with self.engine.begin() as conn:
            if worker is not None and not self._holds_lease(conn, run_id, worker):
                return False
            self._insert_tuples(conn, t.output_items, ITEM_COLUMNS, item_rows, ready=ITEM_JSON)
            self._insert_tuples(conn, t.results, RESULT_COLUMNS, result_rows, ready=RESULT_VALUES)
            self._insert_tuples(conn, t.item_usage, ROLE_USAGE_COLUMNS, usage_rows)
        return True

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
            elif verdict == "skipped":
                query = query.where(res.status == "skipped")
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

    def summarize(self, run_id: str, criteria: Sequence[tuple[str, str]]) -> RunSummary:
        """Counts per item status and per criterion, mean scores and model calls, computed by the
        database: one query over the run's output items, one over its results (and the score steps'
        and the other roles' calls, one each)."""
        items = t.output_items.c
        res = t.results.c
        usage = [sa.func.sum(res[name]) for name in USAGE_COLUMNS]
        with self.engine.connect() as conn:
            item_rows = conn.execute(
                sa.select(
                    items.status,
                    items.target_model,
                    sa.func.count(),
                    sa.func.sum(items.target_calls),
                    sa.func.sum(items.target_cache_hits),
                    sa.func.sum(items.target_prompt_tokens),
                    sa.func.sum(items.target_completion_tokens),
                    sa.literal(0),
                )
                .where(items.run_id == run_id)
                .group_by(items.status, items.target_model)
            ).all()
            per_criterion = conn.execute(
                sa.select(
                    res.criterion,
                    res.status,
                    res.passed,
                    res.model,
                    sa.func.count(),
                    sa.func.avg(res.score),
                    sa.func.sum(res.score * res.score),
                    sa.func.count(res.score),
                    *usage,
                )
                .where(res.run_id == run_id)
                .group_by(res.criterion, res.status, res.passed, res.model)
            ).all()
        by_status: dict[str, int] = {}
        for status, _, count, *_ in item_rows:
            by_status[status] = by_status.get(status, 0) + count
        counts = ResultCounts(
            total=sum(by_status.values()),
            passed=by_status.get("pass", 0),
            failed=by_status.get("fail", 0),
            errored=by_status.get("error", 0),
            skipped=by_status.get("skipped", 0),
        )
        summaries = {name: CriterionSummary(testing_criteria=name, metric=metric) for name, metric in criteria}
        score_sums: dict[str, tuple[float, int, float]] = {}
        for name, status, passed, _, count, mean, squares, scored, *_ in per_criterion:
            summary = summaries.setdefault(name, CriterionSummary(testing_criteria=name, metric=""))
            if status == "error":
                summary.errored += count
            elif status == "skipped":
                summary.skipped += count
            elif passed:
                summary.passed += count
            else:
                summary.failed += count
            if mean is not None and status == "completed":
                total, n, square_sum = score_sums.get(name, (0.0, 0, 0.0))
                score_sums[name] = (total + float(mean) * scored, n + scored, square_sum + float(squares or 0.0))
        for name, summary in summaries.items():
            decided = summary.passed + summary.failed
            summary.n = decided
            summary.pass_rate = summary.passed / decided if decided else None
            interval = wilson(summary.passed, decided)
            summary.pass_rate_ci = list(interval) if interval else None
            if name in score_sums:
                total, n, square_sum = score_sums[name]
                summary.mean_score = total / n
                spread = t_interval_from_moments(n, total, square_sum)
                summary.mean_score_ci = list(spread) if spread else None
        judged = [("judge", row[3], *row[8:]) for row in per_criterion if row[3] is not None]
        generated = [("target", row[1], *row[3:]) for row in item_rows if row[1] is not None]
        per_model, per_role = self._usage(run_id, [*judged, *generated])
        return RunSummary(
            result_counts=counts,
            per_testing_criteria_results=list(summaries.values()),
            per_model_usage=per_model,
            per_role_usage=per_role,
            score_steps=self.score_steps(run_id),
        )

    def score_steps(self, run_id: str) -> dict[str, list[tuple[float, int]]]:
        """Each criterion's scores counted by the database in steps of 0.001 (a floor): the charts'
        input at a size that does not grow with the run. No chart's bin edge falls inside a step."""
        res = t.results.c
        floor = sa.func.floor if self.engine.dialect.name == "postgresql" else lambda x: sa.cast(x, sa.Integer)
        step = floor(res.score * 1000)
        query = (
            sa.select(res.criterion, step, sa.func.count())
            .where(res.run_id == run_id, res.score.is_not(None))
            .group_by(res.criterion, step)
        )
        steps: dict[str, list[tuple[float, int]]] = {}
        with self.engine.connect() as conn:
            for criterion, thousandths, count in conn.execute(query):
                steps.setdefault(criterion, []).append((float(thousandths) / 1000, int(count)))
        return steps

    def _usage(self, run_id: str, counted: list[Sequence[Any]]) -> tuple[list[ModelUsage], list[RoleUsage]]:
        """Every call the run made, per model and per role: judges' and targets' (``counted`` by the
        summary's passes, as ``(role, model, calls, cache hits, prompt, completion, cached)``) and
        the other roles' (``item_usage``: a simulated user, an attacker)."""
        extra = t.item_usage.c
        others = (
            sa.select(
                extra.role,
                extra.model,
                sa.func.sum(extra.calls),
                sa.func.sum(extra.cache_hits),
                sa.func.sum(extra.prompt_tokens),
                sa.func.sum(extra.completion_tokens),
                sa.literal(0),
            )
            .where(extra.run_id == run_id)
            .group_by(extra.role, extra.model)
        )
        with self.engine.connect() as conn:
            counted = [*counted, *conn.execute(others).all()]
        by_role: dict[tuple[str, str], list[int]] = {}
        for role, model, *counts in counted:
            current = by_role.setdefault((role, model), [0] * 5)
            by_role[(role, model)] = [a + int(b or 0) for a, b in zip(current, counts, strict=True)]
        by_model: dict[str, list[int]] = {}
        for (_, model), counts in by_role.items():
            current = by_model.setdefault(model, [0] * 5)
            by_model[model] = [a + b for a, b in zip(current, counts, strict=True)]
        per_model = [
            ModelUsage(model_name=model, **_usage_fields(counts)) for model, counts in sorted(by_model.items())
        ]
        per_role = [
            RoleUsage(role=role, model_name=model, **_usage_fields(counts))
            for (role, model), counts in sorted(
                by_role.items(),
                key=lambda entry: (ROLES.index(entry[0][0]) if entry[0][0] in ROLES else len(ROLES), entry[0]),
            )
        ]
        return per_model, per_role


TARGET_COLUMNS = (
    "target_model",
    "target_calls",
    "target_cache_hits",
    "target_prompt_tokens",
    "target_completion_tokens",
)
ITEM_COLUMNS = (
    "run_id",
    "datasource_item_id",
    "status",
    "datasource_item",
    "sample",
    "results",
    "created_at",
    *TARGET_COLUMNS,
)
ITEM_JSON = frozenset({"datasource_item", "sample", "results"})
"""An output item's JSON columns, which ``add_output_items`` encodes itself."""
NO_TARGET = (None, 0, 0, 0, 0)


def _target_columns(item: OutputItem) -> tuple[Any, ...]:
    """A target's calls (``TARGET_COLUMNS``), from the sample it produced (a target that made several,
    such as a multi-turn attack, says how many in ``calls`` and ``cache_hits``). An agent is counted a
    call even when it reports no usage; Responses' ``input_tokens``/``output_tokens`` count as tokens."""
    sample = item.sample
    if not sample:
        return NO_TARGET
    usage: dict[str, Any] = sample["usage"] if isinstance(sample.get("usage"), dict) else {}
    name = sample.get("model") or sample.get("agent")
    if not name or not (usage or sample.get("agent")):
        return NO_TARGET
    cached = bool(sample.get("cached"))
    calls, hits = sample.get("calls"), sample.get("cache_hits")
    if not (isinstance(calls, int) and isinstance(hits, int)):
        calls, hits = (0, 1) if cached else (1, 0)
    return (
        str(name),
        calls,
        hits,
        int(usage.get("prompt_tokens") or usage.get("input_tokens") or 0),
        int(usage.get("completion_tokens") or usage.get("output_tokens") or 0),
    )


def _results_json(results: list[Result]) -> str:
    """An item's results as its JSON column holds them (``values.dumps`` of their dumps), encoded
    straight from the models' fields. Every result has nulls (no reason, no label), so the nulls are
    counted rather than the text read back to tell them from a NaN (a hot path: once per item)."""
    fields = [result.__dict__ for result in results]  # a model's fields, in their order
    text = values.dumps_counted(fields, sum(list(known.values()).count(None) for known in fields))
    return text if text is not None else values.dumps([result.model_dump() for result in results])


ROLES = ("target", "simulated_user", "attacker", "judge")


def _role_order(role: str) -> int:
    return ROLES.index(role) if role in ROLES else len(ROLES)


def _usage_fields(counts: list[int]) -> dict[str, int]:
    calls, hits, prompt, completion, cached = counts
    return {
        "invocation_count": calls,
        "cache_hits": hits,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cached_tokens": cached,
    }


ROLE_COUNTS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens")
ROLE_USAGE_COLUMNS = ("run_id", "datasource_item_id", "role", "model", *ROLE_COUNTS)


def _role_usage(run_id: str, item: OutputItem) -> list[tuple[Any, ...]]:
    """The sample's ``usage_by_role`` (``ROLE_USAGE_COLUMNS``): what the roles beside the target cost
    (a simulated user, an attacker)."""
    entries = (item.sample or {}).get("usage_by_role")
    if not isinstance(entries, list):
        return []
    counts: dict[tuple[str, str], list[int]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("model") or not entry.get("role"):
            continue
        summed = counts.setdefault((str(entry["role"]), str(entry["model"])), [0] * len(ROLE_COUNTS))
        for index, name in enumerate(ROLE_COUNTS):
            summed[index] += int(entry.get(name) or 0)
    return [(run_id, item.datasource_item_id, role, model, *summed) for (role, model), summed in counts.items()]


RESULT_COLUMNS = (
    "run_id",
    "datasource_item_id",
    "criterion",
    "metric",
    "status",
    "passed",
    "score",
    "model",
    *USAGE_COLUMNS,
)
RESULT_VALUES = frozenset({"passed", "score"})
"""A validated result's verdict (a bool or None) and score (a float or None), as either driver takes them."""


def _usage_columns(result: Result) -> tuple[Any, ...]:
    """Judges report their model calls in ``properties.usage``; stored as columns to sum per run."""
    usage = result.properties.get("usage")
    if not isinstance(usage, dict) or not usage.get("model"):
        return NO_USAGE
    return (str(usage["model"]), *(int(usage.get(key) or 0) for key in USAGE_COLUMNS))


NO_USAGE = (None, *(0 for _ in USAGE_COLUMNS))


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
