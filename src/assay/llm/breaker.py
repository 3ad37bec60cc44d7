"""Telling a dead endpoint from a busy one: a connect before the run, a circuit breaker during it.

A run against an endpoint that refuses connections (a stopped local server, a wrong port) or
refuses the key would otherwise retry every item with backoff and "complete" minutes later with
every item errored. 429s and 5xx mean the endpoint is there and busy: they keep their retries.
Only unreachable endpoints and authentication failures count towards the breaker.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import urlsplit

from assay.llm.config import ModelConfig

CONSECUTIVE_FAILURES = 5
"""Failures in a row (any item, any attempt) after which an endpoint is taken to be down."""
CONNECT_SECONDS = 5.0
AUTHENTICATION_STATUSES = (401, 403)


@dataclass
class Breaker:
    """Consecutive connection and authentication failures of one model's endpoint; any answer resets it."""

    failures: int = 0
    tripped: str | None = None
    """Why the endpoint is taken to be down (the last error), once it is."""

    def succeeded(self) -> None:
        self.failures = 0

    def failed(self, message: str) -> None:
        self.failures += 1
        if self.tripped is None and self.failures >= CONSECUTIVE_FAILURES:
            self.tripped = message

    def reset(self) -> None:
        self.failures, self.tripped = 0, None


def counts_towards_breaker(exc: BaseException, status: int | None) -> bool:
    """Connection refused, a name that does not resolve, a bad key: not a slow or busy endpoint."""
    import openai

    if status is not None:
        return status in AUTHENTICATION_STATUSES
    return isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError)


def address(config: ModelConfig) -> tuple[str, int] | None:
    """The host and port a model's calls go to, if its endpoint is a URL."""
    return address_of(config.url)


def address_of(url: str) -> tuple[str, int] | None:
    """The host and port of an endpoint's URL (None if it has no host)."""
    parts = urlsplit(url)
    if not parts.hostname:
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    return parts.hostname, port


async def unreachable(config: ModelConfig, seconds: float = CONNECT_SECONDS) -> str | None:
    """Why a model's endpoint cannot be connected to, or None when a connection opens.

    A TCP connect and nothing more: it spends no tokens and needs no key, so it works for every
    provider; a refused key is caught by the breaker on the first calls instead."""
    return await unreachable_at(config.url, seconds)


async def unreachable_at(url: str, seconds: float = CONNECT_SECONDS) -> str | None:
    """``unreachable`` for any endpoint's URL (an agent's, say)."""
    found = address_of(url)
    if found is None:
        return None
    host, port = found
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), seconds)
    except TimeoutError:
        return f"no answer from {host}:{port} within {seconds:g} s"
    except OSError as exc:
        return f"cannot connect to {host}:{port} ({exc.strerror or type(exc).__name__})"
    writer.close()
    try:
        await writer.wait_closed()
    except OSError:
        pass
    return None
