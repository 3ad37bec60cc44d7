"""Assets a project keeps: files, named datasets, custom evaluators, and the model-call cache."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

from assay.errors import ConfigError, NotFoundError
from assay.store import tables as t
from assay.store import values
from assay.store.base import DEFAULT_PROJECT, StoreBase, new_id, now

CACHE_LOCK_TIMEOUT_MS = 5000
"""How long a write to the model-call cache waits for a key another session is writing (PostgreSQL)."""


class AssetsStore(StoreBase):
    # model call cache (the llm layer's CallCache) ------------------------------------------

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The cached responses among ``keys``, by key (one query per 500 keys). Through the driver:
        a run asks the cache for every model call, and SQLAlchemy's statement and result work was
        most of each ask (and, on a run's threads, held the interpreter the event loop needs)."""
        found: dict[str, dict[str, Any]] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(keys), 500):
                chunk = tuple(keys[start : start + 500])
                for key, response in conn.exec_driver_sql(self._cached_answers(len(chunk)), chunk):
                    # PostgreSQL's driver decodes jsonb itself (through the store's JSON codec).
                    found[key] = values.loads(response) if isinstance(response, str | bytes) else response
        return found

    def cached_keys(self) -> Iterator[str]:
        """Every key the model-call cache holds, streamed (a cache of millions is not held in memory)."""
        with self.engine.connect() as conn:
            keys = conn.execution_options(stream_results=True, yield_per=10_000).execute(sa.select(t.llm_cache.c.key))
            try:
                yield from keys.scalars()
            finally:
                keys.close()  # PostgreSQL's server-side cursor, also when the reader stops early

    def _cached_answers(self, count: int) -> str:
        mark = "?" if self.engine.dialect.paramstyle == "qmark" else "%s"
        return f"SELECT key, response FROM {t.llm_cache.name} WHERE key IN ({', '.join([mark] * count)})"

    def put_many(self, entries: list[tuple[str, str, dict[str, Any]]], *, replace: bool = False) -> None:
        """Store ``(key, model, response)`` entries in one transaction; a key already there keeps its
        answer unless ``replace`` (``--cache refresh``)."""
        stamp = now()
        rows = [{"key": key, "model": model, "response": answer, "created_at": stamp} for key, model, answer in entries]
        with self.engine.begin() as conn:
            if self.engine.dialect.name == "postgresql":
                # Another session writing the same keys and stalled (a stopped process holds its row
                # locks) must not hold this run up: the cache is not worth waiting for.
                conn.exec_driver_sql(f"SET LOCAL lock_timeout = {CACHE_LOCK_TIMEOUT_MS}")
            if not replace:  # the common case, through the driver's executemany (a run writes every answer)
                self._insert_new(conn, t.llm_cache, rows)
                return
            insert = self._insert(t.llm_cache)
            fresh = {name: insert.excluded[name] for name in ("model", "response", "created_at")}
            conn.execute(insert.on_conflict_do_update(index_elements=[t.llm_cache.c.key], set_=fresh), rows)

    # custom evaluators ---------------------------------------------------------------------

    def add_evaluator(
        self,
        *,
        name: str,
        kind: str,
        content: str,
        project: str = DEFAULT_PROJECT,
        details: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """Store a definition; unchanged content keeps its version, a change makes the next one.
        ``details`` given (display name, description, ...) replace the kept version's."""
        digest = hashlib.sha256(content.encode()).hexdigest()
        table = t.evaluators
        with self.engine.begin() as conn:
            latest = (
                conn.execute(
                    sa.select(table)
                    .where(table.c.project == project, table.c.name == name)
                    .order_by(table.c.version.desc())
                    .limit(1)
                )
                .mappings()
                .first()
            )
            if latest is not None and latest["digest"] == digest and latest["kind"] == kind:
                if details is None:
                    return dict(latest), False
                conn.execute(
                    table.update().where(*_evaluator_key(project, name, latest["version"])).values(details=details)
                )
                return {**latest, "details": details}, False
            row = {
                "project": project,
                "name": name,
                "version": (latest["version"] + 1) if latest else 1,
                "kind": kind,
                "content": content,
                "digest": digest,
                "created_at": now(),
                "details": details,
            }
            conn.execute(table.insert().values(**row))
        return row, True

    def update_evaluator(self, project: str, name: str, version: int, details: dict[str, Any]) -> None:
        """Merge ``details`` into a version's (Foundry's update of an evaluator version in place)."""
        where = _evaluator_key(project, name, version)
        with self.engine.begin() as conn:
            current = conn.execute(sa.select(t.evaluators.c.details).where(*where)).first()
            if current is None:
                raise NotFoundError(f"no custom evaluator {name} version {version}")
            conn.execute(t.evaluators.update().where(*where).values(details={**(current[0] or {}), **details}))

    def delete_evaluator(self, project: str, name: str, version: int) -> None:
        with self.engine.begin() as conn:
            if not conn.execute(t.evaluators.delete().where(*_evaluator_key(project, name, version))).rowcount:
                raise NotFoundError(f"no custom evaluator {name} version {version}")

    def list_evaluators(self, project: str = DEFAULT_PROJECT) -> list[dict[str, Any]]:
        table = t.evaluators
        query = sa.select(table).where(table.c.project == project).order_by(table.c.name, table.c.version)
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    # datasets ------------------------------------------------------------------------------

    def register_dataset(
        self,
        *,
        name: str,
        version: str,
        uri: str,
        project: str = DEFAULT_PROJECT,
        replace: bool = False,
        file_id: str | None = None,
    ) -> dict[str, Any]:
        """Add ``name@version``; an existing one is an error, or with ``replace`` (the API's PUT,
        create-or-update as in Foundry) is pointed at ``uri`` (and the uploaded ``file_id`` it names)."""
        row = {
            "id": new_id("dataset"),
            "project": project,
            "name": name,
            "version": version,
            "uri": uri,
            "file_id": file_id,
            "description": None,
            "created_at": now(),
        }
        try:
            with self.engine.begin() as conn:
                conn.execute(t.datasets.insert().values(**row))
            return row
        except sa.exc.IntegrityError:
            if not replace:
                hint = "give it a new version (--version), or keep the one stored"
                raise ConfigError(f"dataset {name} version {version} already exists", hint=hint) from None
        mine = sa.and_(t.datasets.c.project == project, t.datasets.c.name == name, t.datasets.c.version == version)
        with self.engine.begin() as conn:
            conn.execute(t.datasets.update().where(mine).values(uri=uri, file_id=file_id))
        return self.get_dataset(name, version, project=project)

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

    def delete_dataset(self, name: str, version: str, project: str = DEFAULT_PROJECT) -> None:
        self.get_dataset(name, version, project=project)
        mine = sa.and_(t.datasets.c.project == project, t.datasets.c.name == name, t.datasets.c.version == version)
        with self.engine.begin() as conn:
            conn.execute(t.datasets.delete().where(mine))

    def list_datasets(self, project: str = DEFAULT_PROJECT) -> list[dict[str, Any]]:
        query = sa.select(t.datasets).where(t.datasets.c.project == project).order_by(t.datasets.c.name)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]


def _evaluator_key(project: str, name: str, version: int) -> tuple[sa.ColumnElement[bool], ...]:
    table = t.evaluators
    return table.c.project == project, table.c.name == name, table.c.version == version
