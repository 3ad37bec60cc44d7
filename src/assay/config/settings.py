"""Every ``ASSAY_*`` environment variable, in one place, read when asked (never at import): a test,
a notebook or a server that sets one is heard at once. A value that is not valid is refused naming
the variable and what it takes (``assay serve`` and ``assay worker`` read them all as they start).

``docs/configuration.md`` lists them; a test holds that list, this model and the code to each other.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay.errors import ConfigError

PREFIX = "ASSAY_"


class Settings(BaseModel):
    """The process's settings; each field is the variable ``ASSAY_<FIELD NAME IN CAPITALS>``."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    home: Path = Path(".assay")
    """Where the SQLite store, saved datasets, TLS certificates and optimizer state live."""
    database_url: str | None = None
    """A SQLAlchemy URL (``postgresql+psycopg://...``); unset: SQLite under ``ASSAY_HOME``."""
    lease_seconds: float = Field(default=30.0, gt=0)
    """How long a run's lease lasts without renewal (renewed every second while the run executes)."""
    store_outage_seconds: float = Field(default=120.0, gt=0)
    """How long a run waits for a database that went away before it fails (resumable)."""
    run_processes: Literal["auto"] | Annotated[int, Field(ge=1)] = "auto"
    """Processes a local run whose criteria need no model (F1, BLEU, string checks) spreads over:
    ``auto``, one per core once each has a thousand items; 1: this process only."""

    @field_validator("run_processes", mode="before")
    @classmethod
    def _auto_or_count(cls, value: object) -> object:
        # Without this the refusal names only one side of the union ("input should be 'auto'").
        if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            return value
        if isinstance(value, str) and value.strip().isdigit() and int(value) >= 1:
            return int(value)
        raise ValueError("expected auto or a whole number of at least 1")

    pg_idle_in_transaction_seconds: float = Field(default=20.0, gt=0)
    """PostgreSQL ends a session idle inside a transaction this long."""
    max_upload_mb: float = Field(default=512.0, gt=0)
    """The largest file or dataset upload the server reads."""
    max_json_mb: float = Field(default=64.0, gt=0)
    """The largest JSON request body the server reads."""
    otlp_max_bytes: int = Field(default=64 * 1024 * 1024, gt=0)
    """The largest OTLP trace export the server reads, decompressed."""
    rate_runs_per_minute: float = Field(default=60.0, ge=0)
    """Runs one caller may create per minute (a burst of as many); 0: no limit."""
    rate_uploads_per_minute: float = Field(default=120.0, ge=0)
    """Uploads one caller may make per minute; 0: no limit."""
    sandbox: Literal["auto", "require", "unsandboxed"] = "auto"
    """``require``: refuse untrusted code when bubblewrap is missing (``assay serve`` and ``assay worker``
    set it); ``unsandboxed``: the operator's explicit choice to let a server run posted code in a plain
    subprocess where bubblewrap is missing (not isolation); ``auto``: bwrap when installed, else a plain
    subprocess (the local CLI, running the user's own files)."""
    sandbox_cgroup: Literal["auto", "off"] = "auto"
    """``off``: no cgroup per sandboxed call, only per-process limits."""
    bwrap: str | None = None
    """The bubblewrap binary (``none``: behave as if there were none); unset: ``bwrap`` on PATH."""
    sandbox_max_seconds: float = Field(default=120.0, gt=0)
    """The longest any sandboxed call may run."""
    sandbox_max_memory_mb: int = Field(default=2048, gt=0)
    """The most memory a sandboxed call's process tree may hold."""
    sandbox_max_processes: int = Field(default=32, gt=0)
    """The most processes a sandboxed call may have at once."""
    sandbox_max_file_mb: int = Field(default=64, gt=0)
    """The largest file a sandboxed call may write."""
    sandbox_max_output_bytes: int = Field(default=1024 * 1024, gt=0)
    """The most output a sandboxed call may print."""
    allowed_hosts: str = ""
    """Host names ``assay serve`` answers to besides the loopback names, comma-separated (``name``,
    ``*.example.com``, ``*`` for any); a request naming another host gets 421. Without API keys the
    server answers loopback names only unless this names more; with keys it checks once this is set."""
    public_url: str | None = None
    """The server's address as its clients reach it (``https://evals.example.com``), for the URLs it
    hands out (dataset SAS URLs); unset: the address each request reached, its ``Host`` checked."""
    evaluator_endpoints: str = ""
    """Hosts endpoint evaluators and alert webhooks may call from ``assay serve`` and ``assay worker``, comma-separated
    (``host``, ``host:port``, ``*.example.com``); none by default, and loopback or link-local
    addresses only when named exactly. A local ``assay run`` calls what its evaluators name."""
    rule_window_seconds: float = Field(default=10.0, gt=0)
    """How long an evaluation rule gathers the responses it sampled before one run evaluates them
    all (a run per window, not one per response)."""

    schedule_starting_deadline_seconds: float = Field(default=3600.0, ge=0)
    """How late a schedule may still fire a firing it missed (the server down or busy at its time),
    as Kubernetes CronJob's ``startingDeadlineSeconds``: later than this the firing is recorded as
    missed and makes no run. Of several missed firings only the latest is caught up on."""

    evaluation_events_endpoint: str | None = None
    """An OTLP/HTTP logs endpoint (``http://collector:4318/v1/logs``) sent each completed run's verdicts
    as ``gen_ai.evaluation.result`` events, parented to the span judged when the item came from one."""

    @classmethod
    def variables(cls) -> dict[str, str]:
        """Each variable's name and what it does."""
        return {PREFIX + name.upper(): field.description or "" for name, field in cls.model_fields.items()}


def settings() -> Settings:
    """The settings of this process's environment as it is now."""
    return _parsed(tuple(os.environ.get(name) for name in _NAMES))


_NAMES = tuple(PREFIX + name.upper() for name in Settings.model_fields)


@functools.lru_cache(maxsize=8)
def _parsed(values: tuple[str | None, ...]) -> Settings:
    given = {name: value for name, value in zip(Settings.model_fields, values, strict=True) if value not in (None, "")}
    try:
        return Settings.model_validate(given)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0])
        raise ConfigError(
            f"{PREFIX}{field.upper()}={given.get(field)!r}: {error['msg'].lower()}",
            hint=f"fix or unset {PREFIX}{field.upper()} (docs/configuration.md lists each variable)",
        ) from None
