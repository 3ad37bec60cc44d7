"""Every error assay raises on purpose.

    AssayError
    ├── UserError              a mistake the user can fix; printed without a traceback
    │   ├── ConfigError        eval.yaml, testing criteria, data mappings, evaluator options
    │   ├── DataError          a dataset with bad lines; carries every DataIssue, not only the first
    │   ├── UnknownEvaluatorError
    │   └── NotFoundError      a run, eval, file or dataset that does not exist
    ├── ItemError              one item cannot be evaluated (a mapping path it lacks, a bad input);
    │   │                      it becomes that item's ``error`` result and the run goes on
    │   ├── Undetermined       a judge gave no readable verdict: an ``undetermined`` result
    │   └── Filtered           a content filter stopped a call the item needed: a ``filtered`` result
    └── RunStopped             a run stopped part-way; what was stored is kept, and it resumes
        ├── StoreError         the database failed (unreachable too long, disk full)
        ├── ExecutorError      the executor lost part of a run (a Ray actor gone for good)
        └── ModelUnreachable   a model's endpoint refuses connections or the key

User errors carry a short ``code`` and a ``hint`` that says how to fix the problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


class AssayError(Exception):
    """Base of every error assay raises on purpose."""


class UserError(AssayError):
    """A mistake in what the user gave us; the message says where and how to fix it."""

    code = "invalid_input"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class ConfigError(UserError):
    code = "invalid_config"
    criterion_index: int | None = None
    """Which testing criterion the error is about, so a caller can point at its line."""


def invalid_settings(where: str, exc: ValidationError) -> ConfigError:
    """A settings block pydantic refused, as one line naming each bad field and what is wrong."""
    problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}" for e in exc.errors())
    return ConfigError(f"{where}: {problems}")


class UnknownEvaluatorError(ConfigError):
    code = "unknown_evaluator"


class UnknownAgentError(ConfigError):
    """A target names an agent nothing serves and the project did not make: eval.yaml points at
    its ``target:`` or ``agent:`` line."""


class NotFoundError(UserError):
    code = "not_found"


@dataclass(frozen=True)
class DataIssue:
    """One bad line of a dataset: where it is and what is wrong with it."""

    source: str
    line: int
    message: str
    field: str | None = None

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}"


class DataError(UserError):
    code = "invalid_data"

    def __init__(self, issues: list[DataIssue], *, total_issues: int | None = None) -> None:
        self.issues = issues
        self.total_issues = total_issues if total_issues is not None else len(issues)
        lines = [str(issue) for issue in issues]
        if self.total_issues > len(issues):
            lines.append(f"... and {self.total_issues - len(issues)} more")
        super().__init__(
            "\n".join(lines),
            hint="fix the lines above; `assay dataset validate FILE` lists every bad line",
        )


class ItemError(AssayError):
    """One item cannot be evaluated; recorded as that item's error result."""

    code = "invalid_item"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}
        """Kept in the error result's properties (a judge's raw answer, the tokens it spent)."""


class MissingInput(ItemError):
    """An input the item needs is not there (unmapped, absent, or an empty list where one item is the
    least): the data or its mapping must say more. Told apart from an input of the wrong value, as
    the peer's ``MISSING_FIELD`` and ``INVALID_VALUE`` are."""

    code = "missing_input"


class Undetermined(ItemError):
    """A judge was asked but gave no verdict that can be read (an answer that could not be parsed
    even after a repair request, a refusal to judge, a safety judge whose call failed): the outcome
    is *undetermined*, neither a pass nor a fail, and never counted as either."""

    code = "undetermined"


class Filtered(ItemError):
    """A provider's content filter stopped a call the item needed (the target's or a judge's): the
    outcome is *filtered*, neither a verdict nor an error. ``details["content_filter"]`` holds the
    stage and the categories with their severities."""

    code = "content_filter"


class RunStopped(AssayError):
    """A run stopped part-way by something outside what the user gave it; what was stored is kept,
    and the run can be resumed. Shown as its message and hint, without a traceback."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class StoreError(RunStopped):
    """The database failed under a run."""


class ExecutorError(RunStopped):
    """The executor lost part of a run (a Ray actor that could not be restarted)."""


class ModelUnreachable(RunStopped):
    """A model the run needs refuses connections or its key, before the run or during it."""


def first_line(exc: BaseException) -> str:
    """An error's own first line (never a traceback or a statement), else its type's name."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def store_failure(exc: BaseException, action: str) -> StoreError:
    """A database error as one clear line: the driver's own first line, never the SQL."""
    first = first_line(getattr(exc, "orig", None) or exc)
    hint = "nothing stored is lost; once the database is reachable (or has room), resume the run"
    return StoreError(f"the store could not {action}: {first}", hint=hint)
