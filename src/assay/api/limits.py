"""Request bodies are counted while they arrive: one over its limit is refused (413) before it is
all read, whether or not it declared a ``Content-Length``. OTLP bodies keep their own cap.

``ASSAY_MAX_UPLOAD_MB`` (default 512) bounds file and dataset uploads; ``ASSAY_MAX_JSON_MB``
(default 64) every other body.
"""

from __future__ import annotations

from starlette.middleware.body_limit import RequestBodyLimitResponder
from starlette.types import ASGIApp, Receive, Scope, Send

from assay.config.settings import settings

MB = 1024 * 1024


def _limit_for(path: str) -> int | None:
    if path.endswith(("/v1/traces", "/v1/logs")):
        return None  # the receiver reads with its own (decompressed) limit
    if path.endswith("/files") or "/datasets/" in path or path.startswith("/blobs/"):
        return int(settings().max_upload_mb * MB)
    return int(settings().max_json_mb * MB)


class BodyLimit:
    """Starlette's body limiter (which FastAPI's body parsing understands), with the limit by path."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # A GET or HEAD has no body to count (its answer would pass through the limiter's send).
        counted = scope["type"] == "http" and scope["method"] not in ("GET", "HEAD")
        limit = _limit_for(scope.get("path", "")) if counted else None
        if limit is None:
            await self.app(scope, receive, send)
            return
        await RequestBodyLimitResponder(self.app, limit)(scope, receive, send)
