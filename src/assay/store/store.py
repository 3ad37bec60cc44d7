"""The store: evals, runs, output items and datasets in SQLite (default) or PostgreSQL.

One SQLAlchemy engine per store. On SQLite the database runs in WAL mode and every write goes
through the run engine's single writer task. Output items are keyed ``(run_id,
datasource_item_id)`` and inserted with ``ON CONFLICT DO NOTHING``: a resumed run never writes an
item twice.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from assay.errors import NotFoundError
from assay.results import CriterionSummary, ModelUsage, OutputItem, Result, ResultCounts, RunSummary
from assay.store import tables as t

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
DEFAULT_PROJECT = "default"
USAGE_COLUMNS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "cached_tokens")
RUN_STATUSES = ("queued", "in_progress", "completed", "failed", "canceled")


def default_url() -> str:
    """``ASSAY_DATABASE_URL`` if set, else SQLite under ``$ASSAY_HOME`` (default ``./.assay``)."""
    url = os.environ.get("ASSAY_DATABASE_URL")
    if url:
        return url
    home = Path(os.environ.get("ASSAY_HOME", ".assay"))
    home.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{home / 'assay.db'}"


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def _now() -> int:
    return int(time.time())


class Store:
    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_url()
        self.engine = _make_engine(self.url)
        self._migrate()

    def _migrate(self) -> None:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def close(self) -> None:
        self.engine.dispose()

    def _insert(self, table: sa.Table) -> Any:
        dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
        return dialect.insert(table)

    # evals ---------------------------------------------------------------------------------

    def create_eval(
        self, *, name: str | None, data_source_config: dict[str, Any], testing_criteria: list[dict[str, Any]],
        metadata: dict[str, Any] | None = None, project: str = DEFAULT_PROJECT,
    ) -> dict[str, Any]:  # fmt: skip
        row = {
            "id": new_id("eval"), "project": project, "name": name, "data_source_config": data_source_config,
            "testing_criteria": testing_criteria, "metadata": metadata, "created_at": _now(),
        }  # fmt: skip
        with self.engine.begin() as conn:
            conn.execute(t.evals.insert().values(**row))
        return row

    def get_eval(self, eval_id: str) -> dict[str, Any]:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(t.evals).where(t.evals.c.id == eval_id)).mappings().first()
        if row is None:
            raise NotFoundError(f"no eval with id {eval_id!r}")
        return dict(row)

    # runs ----------------------------------------------------------------------------------

    def create_run(
        self, *, eval_id: str, data_source: dict[str, Any], options: dict[str, Any] | None = None,
        name: str | None = None, project: str = DEFAULT_PROJECT,
    ) -> dict[str, Any]:  # fmt: skip
        row = {
            "id": new_id("evalrun"), "project": project, "eval_id": eval_id, "name": name, "status": "queued",
            "data_source": data_source, "options": options or {}, "summary": None, "error": None,
            "metadata": None, "created_at": _now(), "finished_at": None,
        }  # fmt: skip
        with self.engine.begin() as conn:
            conn.execute(t.runs.insert().values(**row))
        return row

    def get_run(self, run_id: str) -> dict[str, Any]:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(t.runs).where(t.runs.c.id == run_id)).mappings().first()
        if row is None:
            raise NotFoundError(f"no run with id {run_id!r}", hint="`assay runs list` shows the runs in this store")
        return dict(row)

    def list_runs(self, *, limit: int = 20, status: str | None = None) -> list[dict[str, Any]]:
        query = sa.select(t.runs).order_by(t.runs.c.created_at.desc(), t.runs.c.id.desc()).limit(limit)
        if status:
            query = query.where(t.runs.c.status == status)
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def update_run(self, run_id: str, **values: Any) -> None:
        if values.get("status") in ("completed", "failed", "canceled"):
            values.setdefault("finished_at", _now())
        with self.engine.begin() as conn:
            conn.execute(t.runs.update().where(t.runs.c.id == run_id).values(**values))

    # output items --------------------------------------------------------------------------

    def add_output_items(self, run_id: str, items: Sequence[OutputItem]) -> None:
        """Insert a batch in one transaction; items already stored are left as they are."""
        if not items:
            return
        now = _now()
        item_rows = [
            {
                "run_id": run_id, "datasource_item_id": item.datasource_item_id, "status": item.status,
                "datasource_item": item.datasource_item, "sample": item.sample,
                "results": [r.model_dump() for r in item.results], "created_at": now,
            }
            for item in items
        ]  # fmt: skip
        result_rows = [
            {
                "run_id": run_id, "datasource_item_id": item.datasource_item_id, "criterion": r.name,
                "metric": r.metric, "status": r.status, "passed": r.passed, "score": r.score, **_usage_columns(r),
            }
            for item in items
            for r in item.results
        ]  # fmt: skip
        with self.engine.begin() as conn:
            conn.execute(self._insert(t.output_items).on_conflict_do_nothing(), item_rows)
            if result_rows:
                conn.execute(self._insert(t.results).on_conflict_do_nothing(), result_rows)

    def done_item_ids(self, run_id: str) -> set[int]:
        query = sa.select(t.output_items.c.datasource_item_id).where(t.output_items.c.run_id == run_id)
        with self.engine.connect() as conn:
            return set(conn.execute(query).scalars())

    def delete_output_items(self, run_id: str, item_ids: Sequence[int]) -> None:
        """Forget some items so a resumed run evaluates them again (``--retry-errors``)."""
        with self.engine.begin() as conn:
            for table in (t.results, t.output_items):
                for start in range(0, len(item_ids), 500):
                    chunk = list(item_ids[start : start + 500])
                    conn.execute(table.delete().where(table.c.run_id == run_id, table.c.datasource_item_id.in_(chunk)))

    def iter_output_items(
        self, run_id: str, *, after: int | None = None, limit: int | None = None, status: str | None = None,
        descending: bool = False, batch: int = 1000,
    ) -> Iterator[dict[str, Any]]:  # fmt: skip
        """Output items in ``datasource_item_id`` order, paged by keyset (never OFFSET)."""
        column = t.output_items.c.datasource_item_id
        remaining = limit
        cursor = after
        while remaining is None or remaining > 0:
            size = batch if remaining is None else min(batch, remaining)
            query = sa.select(t.output_items).where(t.output_items.c.run_id == run_id)
            if status:
                query = query.where(t.output_items.c.status == status)
            if cursor is not None:
                query = query.where(column < cursor if descending else column > cursor)
            query = query.order_by(column.desc() if descending else column).limit(size)
            with self.engine.connect() as conn:
                rows = [dict(row) for row in conn.execute(query).mappings()]
            yield from rows
            if len(rows) < size:
                return
            cursor = rows[-1]["datasource_item_id"]
            if remaining is not None:
                remaining -= len(rows)

    def summarize(self, run_id: str, criteria: Sequence[tuple[str, str]]) -> RunSummary:
        """Counts per item status and per criterion, and mean scores, computed by the database."""
        items = t.output_items.c
        res = t.results.c
        with self.engine.connect() as conn:
            status_rows = conn.execute(
                sa.select(items.status, sa.func.count()).where(items.run_id == run_id).group_by(items.status)
            ).all()
            by_status: dict[str, int] = {status: count for status, count in status_rows}
            per_criterion = conn.execute(
                sa.select(res.criterion, res.status, res.passed, sa.func.count(), sa.func.avg(res.score))
                .where(res.run_id == run_id)
                .group_by(res.criterion, res.status, res.passed)
            ).all()
        counts = ResultCounts(
            total=sum(by_status.values()), passed=by_status.get("pass", 0), failed=by_status.get("fail", 0),
            errored=by_status.get("error", 0), skipped=by_status.get("skipped", 0),
        )  # fmt: skip
        summaries = {name: CriterionSummary(testing_criteria=name, metric=metric) for name, metric in criteria}
        score_sums: dict[str, tuple[float, int]] = {}
        for name, status, passed, count, mean in per_criterion:
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
                total, n = score_sums.get(name, (0.0, 0))
                score_sums[name] = (total + float(mean) * count, n + count)
        for name, summary in summaries.items():
            decided = summary.passed + summary.failed
            summary.pass_rate = summary.passed / decided if decided else None
            if name in score_sums:
                total, n = score_sums[name]
                summary.mean_score = total / n
        return RunSummary(
            result_counts=counts, per_testing_criteria_results=list(summaries.values()),
            per_model_usage=self._model_usage(run_id),
        )  # fmt: skip

    def _model_usage(self, run_id: str) -> list[ModelUsage]:
        res = t.results.c
        query = (
            sa.select(res.model, sa.func.sum(res.calls), sa.func.sum(res.cache_hits), sa.func.sum(res.prompt_tokens),
                      sa.func.sum(res.completion_tokens), sa.func.sum(res.cached_tokens))
            .where(res.run_id == run_id, res.model.is_not(None))
            .group_by(res.model)
            .order_by(res.model)
        )  # fmt: skip
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            ModelUsage(
                model_name=model, invocation_count=int(calls or 0), cache_hits=int(hits or 0),
                prompt_tokens=int(prompt or 0), completion_tokens=int(completion or 0),
                total_tokens=int(prompt or 0) + int(completion or 0), cached_tokens=int(cached or 0),
            )
            for model, calls, hits, prompt, completion, cached in rows
        ]  # fmt: skip

    # model call cache (the llm layer's CallCache) ------------------------------------------

    def get(self, key: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            found = conn.execute(sa.select(t.llm_cache.c.response).where(t.llm_cache.c.key == key)).scalar()
        return dict(found) if found is not None else None

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        row = {"key": key, "model": model, "response": response, "created_at": _now()}
        with self.engine.begin() as conn:
            conn.execute(self._insert(t.llm_cache).on_conflict_do_nothing(), [row])

    # custom evaluators ---------------------------------------------------------------------

    def add_evaluator(
        self, *, name: str, kind: str, content: str, project: str = DEFAULT_PROJECT
    ) -> tuple[dict[str, Any], bool]:
        """Store a definition; unchanged content keeps its version, a change makes the next one."""
        digest = hashlib.sha256(content.encode()).hexdigest()
        table = t.evaluators
        with self.engine.begin() as conn:
            latest = conn.execute(
                sa.select(table).where(table.c.project == project, table.c.name == name)
                .order_by(table.c.version.desc()).limit(1)
            ).mappings().first()  # fmt: skip
            if latest is not None and latest["digest"] == digest and latest["kind"] == kind:
                return dict(latest), False
            row = {"project": project, "name": name, "version": (latest["version"] + 1) if latest else 1,
                   "kind": kind, "content": content, "digest": digest, "created_at": _now()}  # fmt: skip
            conn.execute(table.insert().values(**row))
        return row, True

    def list_evaluators(self, project: str = DEFAULT_PROJECT) -> list[dict[str, Any]]:
        table = t.evaluators
        query = sa.select(table).where(table.c.project == project).order_by(table.c.name, table.c.version)
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    # datasets ------------------------------------------------------------------------------

    def register_dataset(self, *, name: str, version: str, uri: str, project: str = DEFAULT_PROJECT) -> dict[str, Any]:
        row = {
            "id": new_id("dataset"), "project": project, "name": name, "version": version, "uri": uri,
            "file_id": None, "description": None, "created_at": _now(),
        }  # fmt: skip
        with self.engine.begin() as conn:
            conn.execute(t.datasets.insert().values(**row))
        return row

    def get_dataset(self, name: str, version: str | None = None, project: str = DEFAULT_PROJECT) -> dict[str, Any]:
        query = sa.select(t.datasets).where(t.datasets.c.project == project, t.datasets.c.name == name)
        if version is not None:
            query = query.where(t.datasets.c.version == str(version))
        with self.engine.connect() as conn:
            rows = [dict(r) for r in conn.execute(query).mappings()]
        if not rows:
            which = f"{name}@{version}" if version is not None else name
            raise NotFoundError(f"dataset not found: {which}", hint="register it with `assay dataset add NAME FILE`")
        return max(rows, key=lambda r: (r["created_at"], r["version"]))

    def list_datasets(self, project: str = DEFAULT_PROJECT) -> list[dict[str, Any]]:
        query = sa.select(t.datasets).where(t.datasets.c.project == project).order_by(t.datasets.c.name)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]


def _usage_columns(result: Result) -> dict[str, Any]:
    """Judges report their model calls in ``properties.usage``; stored as columns to sum per run."""
    usage = result.properties.get("usage")
    if not isinstance(usage, dict) or not usage.get("model"):
        usage = {}
    counts = {key: int(usage.get(key) or 0) for key in USAGE_COLUMNS}
    return {"model": str(usage["model"]) if usage else None, **counts}


def _make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return sa.create_engine(url, pool_pre_ping=True)
