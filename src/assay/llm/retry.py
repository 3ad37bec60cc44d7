"""Which failures to retry, and how long to wait: the server's word first, else backoff with jitter."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import openai

MAX_DELAY = 60.0


@dataclass(frozen=True)
class Failure:
    retry: bool
    throttled: bool
    delay: float | None
    """What the server asked for (retry-after-ms / retry-after), if anything."""
    message: str
    status: int | None = None
    """The provider's HTTP status, when it answered at all."""


def classify(exc: BaseException) -> Failure:
    import openai  # loaded already whenever a provider call failed

    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = f"{status} {getattr(exc, 'message', exc)}"
        if status == 429 and _code(exc) == "insufficient_quota":
            hint = "insufficient_quota: add credit; retrying cannot help"
            return Failure(False, True, None, f"{message} ({hint})", status)
        if status in (408, 409, 429) or status >= 500:
            return Failure(True, status == 429, _retry_after(exc.response.headers), message, status)
        return Failure(False, False, None, message, status)
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return Failure(True, False, None, f"{type(exc).__name__}: {exc}")
    return Failure(False, False, None, f"{type(exc).__name__}: {exc}")


def backoff(attempt: int, requested: float | None) -> float:
    if requested is not None:
        return min(MAX_DELAY, max(0.0, requested))
    return float(min(MAX_DELAY, 0.5 * 2**attempt) * random.uniform(0.5, 1.0))


def _code(exc: openai.APIStatusError) -> str | None:
    code = getattr(exc, "code", None)
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    error: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else body
    found = code or error.get("code") or error.get("type")
    return None if found is None else str(found)


def _retry_after(headers: Any) -> float | None:
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if value:
            try:
                return float(value)
            except ValueError:
                moment = parsedate_to_datetime(value)
                return max(0.0, moment.timestamp() - time.time())
    except (TypeError, ValueError):
        return None
    return None


def content_filter_of(exc: BaseException) -> dict[str, Any] | None:
    """The categories of Azure's content filter when it refused the prompt (a 400 whose code is
    ``content_filter``; the verdicts are in ``innererror.content_filter_result``), else None."""
    import openai

    if not isinstance(exc, openai.APIStatusError) or _code(exc) != "content_filter":
        return None
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    error: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else body
    inner: dict[str, Any] = error["innererror"] if isinstance(error.get("innererror"), dict) else {}
    found = inner.get("content_filter_result") or error.get("content_filter_result") or {}
    return dict(found) if isinstance(found, dict) else {}
