"""The store's base: one SQLAlchemy engine on SQLite (default) or PostgreSQL, migrated on open.

On SQLite the database runs in WAL mode; every run's writes go through the engine's single
writer task.
"""

from __future__ import annotations

import itertools
import operator
import sqlite3
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from assay.config.settings import settings
from assay.errors import ConfigError, NotFoundError
from assay.store import values
from assay.store.checkpoints import SAFETY_NET_PAGES, Checkpointer

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
HEAD_REVISION = "0022"
"""The newest migration's revision (a test holds it to alembic's own head): a store already there
opens without alembic."""
DEFAULT_PROJECT = "default"
LOCAL_PREFIX = "local:"
"""Starts the lease holder's name of a run a local process executes itself (``assay run``)."""


def lease_seconds() -> float:
    """How long a run's lease lasts without renewal (renewed every second while the run executes)."""
    return settings().lease_seconds


def default_url() -> str:
    """``ASSAY_DATABASE_URL`` if set, else SQLite under ``$ASSAY_HOME`` (default ``./.assay``)."""
    chosen = settings()
    if chosen.database_url:
        return chosen.database_url
    home = chosen.home
    home.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{home / 'assay.db'}"


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


Processing = list[tuple[int, Callable[[Any], Any]]]
"""Columns' bind processing, each by the column's index in the statement."""
Insertion = tuple[str, tuple[str, int] | None, Processing, Processing]
"""An insert statement, SQLite's statement of many rows and how many, the text columns it checks and
the columns it encodes."""
SQLITE_VARIABLES = 999
"""The values one SQLite statement may take, in every build (SQLite before 3.32 allows no more)."""


_INHERITED_POOLS: list[Any] = []
"""A forked child's references to its parent's connection pools (``StoreBase.after_fork``)."""


def now() -> int:
    return int(time.time())


class StoreBase:
    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_url()
        self.engine = _make_engine(self.url)
        self._insertions: dict[tuple[str, tuple[str, ...], frozenset[str]], Insertion] = {}
        # PostgreSQL's reads have an engine of their own (``_read_rows``); creating it connects nothing.
        self._reads = _make_engine(self.url, reads=True) if self.engine.dialect.name == "postgresql" else self.engine
        self._checkpoints = _checkpoints_of(self.engine)
        self._migrate()

    def _migrate(self) -> None:
        if self._at_head():
            return  # the common case, without importing alembic (a third of a second per process)
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def _at_head(self) -> bool:
        try:
            with self.engine.connect() as connection:
                current = connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
        except sa.exc.DBAPIError:
            return False  # a new database: no version table yet
        return current == [HEAD_REVISION]

    def close(self) -> None:
        if self._checkpoints is not None:
            self._checkpoints.close()
        self.engine.dispose()
        if self._reads is not self.engine:
            self._reads.dispose()

    def after_fork(self) -> None:
        """In a forked child: connections of its own from now on. The parent's, inherited, are kept
        as they are, never used nor closed (closing one would end the parent's session on PostgreSQL,
        or drop what SQLite holds for it), until the child ends without running finalizers
        (``os._exit``)."""
        for engine in {self.engine, self._reads}:
            _INHERITED_POOLS.append(engine.pool)
            engine.dispose(close=False)

    def _read_rows(self, query: sa.Executable, params: dict[str, Any]) -> tuple[list[str], list[sa.Row[Any]]]:
        """A read's column names and rows, by the read path: on PostgreSQL outside a transaction
        (each read one round trip; a transaction ended with one more, the pool's rollback on return)
        and without the pool's ping (another round trip per read, a tenth of an uncached API page).
        A connection the database dropped since it was last used (a restart) fails the read, which is
        then made once more on a new one: a read changes nothing, so it may be repeated."""
        try:
            return self._read_once(query, params)
        except sa.exc.DBAPIError as exc:
            if not exc.connection_invalidated:
                raise
        return self._read_once(query, params)

    def _read_once(self, query: sa.Executable, params: dict[str, Any]) -> tuple[list[str], list[sa.Row[Any]]]:
        with self._reads.connect() as conn:
            found = conn.execute(query, params)
            return list(found.keys()), list(found.all())

    @property
    def works_in_process(self) -> bool:
        """Whether the store's reads and writes are work in this process rather than waits on another
        (SQLite: file reads, which a write does not block in WAL mode, and file writes). The server
        computes such reads on its event loop, and a run that waits on no model writes there: in
        threads they would only take turns at the interpreter, each turn costing more than the work."""
        return self.engine.dialect.name == "sqlite"

    def is_transient(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the database being away for a while (PostgreSQL restarting, the network),
        worth retrying; a full disk or a bad statement is not."""
        if getattr(exc, "connection_invalidated", False):
            return True
        return self.engine.dialect.name == "postgresql" and isinstance(
            exc, sa.exc.OperationalError | sa.exc.InterfaceError
        )

    def _put_row(self, table: sa.Table, project: str, row_id: str, values: dict[str, Any]) -> bool:
        """Create or replace the row ``(project, id)`` of ``table`` (its ``created_at`` kept when it
        exists, set to ``values["updated_at"]`` when it does not); whether it is new."""
        mine = sa.and_(table.c.project == project, table.c.id == row_id)
        with self.engine.begin() as conn:
            if conn.execute(table.update().where(mine).values(**values)).rowcount:
                return False
            conn.execute(table.insert().values(project=project, id=row_id, created_at=values["updated_at"], **values))
        return True

    def _get_row(self, table: sa.Table, project: str | None, row_id: str, what: str) -> dict[str, Any]:
        """The row ``(project, id)`` of ``table`` (of any project when ``project`` is None: the UI of
        a server without keys); a NotFoundError naming ``what`` when there is none."""
        query = sa.select(table).where(table.c.id == row_id)
        if project is not None:
            query = query.where(table.c.project == project)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            raise NotFoundError(f"no {what} {row_id!r}")
        return dict(row)

    def _insert(self, table: sa.Table) -> Any:
        dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
        return dialect.insert(table)

    def _insert_new(self, conn: sa.Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        """Insert ``rows`` (all with the same keys), leaving rows already there as they are."""
        if rows:
            columns = tuple(rows[0])
            self._insert_tuples(conn, table, columns, [_values_getter(columns)(row) for row in rows])

    def _insert_tuples(
        self,
        conn: sa.Connection,
        table: sa.Table,
        columns: tuple[str, ...],
        rows: list[tuple[Any, ...]],
        *,
        ready: frozenset[str] = frozenset(),
    ) -> int:
        """Insert ``rows`` (values in ``columns``' order), leaving rows already there as they are,
        through the driver's executemany, without SQLAlchemy's per-row statement work (a hot path:
        every output item and result of a run is written here). Each column's bind processing
        (JSON encoding) is applied once per value; a text column's checks once per distinct value.
        The columns in ``ready`` arrive as the driver takes them (a JSON column as ``values.dumps``
        wrote it, a number or a bool as it is) and are passed unchanged. Returns how many rows were
        inserted (-1 where the driver cannot tell)."""
        if not rows:
            return 0
        statement, together, checks, encoders = self._insertion(table, columns, ready)
        for index, check in checks:
            for value in {row[index] for row in rows}:
                check(value)
        params = _encoded(rows, encoders) if encoders else rows
        if together is None or len(params) < together[1]:
            return conn.exec_driver_sql(statement, params).rowcount
        # SQLite takes the rows many to a statement (one VALUES list): its machine runs the insertion's
        # code once for all of them, not once per row as in an executemany, and that code stays in the
        # processor's caches (row by row, inserting missed the instruction cache three times as often).
        # PostgreSQL's driver pipelines an executemany already.
        many, size = together
        whole = len(params) - len(params) % size
        inserted = 0
        for start in range(0, whole, size):
            inserted += conn.exec_driver_sql(
                many, tuple(itertools.chain.from_iterable(params[start : start + size]))
            ).rowcount
        if whole < len(params):
            inserted += conn.exec_driver_sql(statement, params[whole:]).rowcount
        return inserted

    def _insertion(self, table: sa.Table, columns: tuple[str, ...], ready: frozenset[str]) -> Insertion:
        """For ``_insert_tuples``, once per table and columns: the statement, SQLite's statement of
        many rows and how many, the text columns to check and the columns to encode, each by its index
        (most, integers, need neither)."""
        key = (table.name, columns, ready)
        known = self._insertions.get(key)
        if known is None:
            dialect = self.engine.dialect
            mark = "?" if dialect.paramstyle == "qmark" else "%s"
            row = f"({', '.join([mark] * len(columns))})"
            statement = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES {row} ON CONFLICT DO NOTHING"
            size = min(100, SQLITE_VARIABLES // len(columns))
            together = (
                (statement.replace(f"VALUES {row}", f"VALUES {', '.join([row] * size)}"), size)
                if dialect.name == "sqlite" and size > 1
                else None
            )
            checks: Processing = []
            encoders: Processing = []
            for index, name in enumerate(columns):
                column = table.c[name]
                process = None if name in ready else column.type.dialect_impl(dialect).bind_processor(dialect)
                if process is None:
                    continue
                text = column.type if isinstance(column.type, values.StoreText) else None
                # A text column's processing only refuses a value (or, clipping, changes it).
                (checks if text is not None and not text.clip else encoders).append((index, process))
            known = statement, together, checks, encoders
            self._insertions[key] = known
        return known


def _encoded(rows: list[tuple[Any, ...]], encoders: Processing) -> list[tuple[Any, ...]]:
    params = []
    for row in rows:
        values = list(row)
        for index, encode in encoders:
            values[index] = encode(values[index])
        params.append(tuple(values))
    return params


def _values_getter(columns: tuple[str, ...]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """A row's values in ``columns``' order, always as a tuple (``itemgetter`` of one key is not)."""
    if len(columns) == 1:
        (name,) = columns
        return lambda row: (row[name],)
    return operator.itemgetter(*columns)


# JSON columns keep NaN, infinities, NUL and lone surrogates losslessly, alike on both databases.
_JSON_CODEC: dict[str, Any] = {"json_serializer": values.dumps, "json_deserializer": values.loads}


# Connections kept open: a server answers reads from up to 40 threads (the framework's pool), and a
# connection past the kept ones is closed on return, so busy reads would reconnect (and, on SQLite,
# set the pragmas again) for every request.
_POOL: dict[str, Any] = {"pool_size": 16, "max_overflow": 32}


def _make_engine(url: str, *, reads: bool = False) -> Engine:
    engine = _engine_for(url, reads=reads)

    @sa.event.listens_for(engine, "handle_error")
    def _user_errors(context: Any) -> BaseException | None:
        # A value a text column refused is the caller's mistake: raise it as itself, not wrapped.
        error = context.original_exception
        return error if isinstance(error, values.StoreValueError) else None

    return engine


def _bound_as_they_are() -> None:
    """Have sqlite3 bind a bool and None through its adapter registry: a value not exactly an int, a
    float or a text is otherwise first offered to the protocol's ``__adapt__``, an attribute lookup
    that raises and clears an AttributeError, three times per stored item. Binds what it did before
    (1 or 0, NULL); an adapter the program registered first is kept."""
    if (bool, sqlite3.PrepareProtocol) not in sqlite3.adapters:
        sqlite3.register_adapter(bool, int)
    if (type(None), sqlite3.PrepareProtocol) not in sqlite3.adapters:
        sqlite3.register_adapter(type(None), _null)


def _null(value: None) -> None:
    return value


def _engine_for(url: str, *, reads: bool) -> Engine:
    if url.startswith("sqlite"):
        _bound_as_they_are()
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 30}, **_POOL, **_JSON_CODEC)

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute(f"PRAGMA wal_autocheckpoint={SAFETY_NET_PAGES}")  # checkpoints come from a thread
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    # A worker stopped mid-transaction (SIGSTOP, a frozen VM) would hold its run's row lock for ever,
    # and claims skip locked rows, so no other worker could take the run over: PostgreSQL ends such a
    # session once it has idled inside a transaction this long. Our transactions never wait on a person.
    options = f"-c idle_in_transaction_session_timeout={_idle_in_transaction_ms()}"
    # The engine for reads pings no connection before use (its reads are retried instead), runs each
    # read on its own, outside a transaction (``StoreBase._read_rows``), and keeps as many connections
    # as a server computes reads at once (``readcache.COMPUTE_THREADS``).
    given: dict[str, Any] = (
        {"pool_pre_ping": False, "isolation_level": "AUTOCOMMIT", "pool_size": 4, "max_overflow": 16}
        if reads
        else {"pool_pre_ping": True, **_POOL}
    )
    try:
        return sa.create_engine(url, connect_args={"options": options}, **given, **_JSON_CODEC)
    except ModuleNotFoundError as exc:  # the URL names a driver this environment lacks
        hint = "pip install 'assay[postgres]'" if url.startswith("postgres") else f"install {exc.name}"
        raise ConfigError(f"the database driver for {url.split(':')[0]} is not installed", hint=hint) from None


def _checkpoints_of(engine: Engine) -> Checkpointer | None:
    """A SQLite file's checkpoints, made in a thread after each commit (``assay.store.checkpoints``)."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:" or database.startswith("file:"):
        return None
    checkpoints = Checkpointer(Path(database).resolve())

    @sa.event.listens_for(engine, "commit")
    def _committed(_connection: Any) -> None:
        # Told as the commit begins: the checkpoint waits ``SETTLE_SECONDS``, so it has ended by then.
        checkpoints.committed()

    return checkpoints


def _idle_in_transaction_ms() -> int:
    return int(settings().pg_idle_in_transaction_seconds * 1000)
