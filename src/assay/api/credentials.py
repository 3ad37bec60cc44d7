"""The API key a request presents, read one way for the auth check and for the read cache's key."""

from __future__ import annotations

from collections.abc import Mapping


def presented(headers: Mapping[str, str]) -> str:
    """``Authorization: Bearer KEY`` or ``api-key: KEY`` (else "")."""
    header = headers.get("authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else headers.get("api-key", "").strip()
