"""``assay view``: the same server, refusing every request that would change the store."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

READS = frozenset({"GET", "HEAD", "OPTIONS"})
SIGN_IN = "/ui/login"  # a viewer of a store with API keys signs in; that changes nothing stored


class ReadOnly:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in READS or scope.get("path") == SIGN_IN:
            await self.app(scope, receive, send)
            return
        message = "assay view serves this store read-only; `assay serve` serves it to change it"
        body = json.dumps(
            {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": "read_only"}}
        ).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 405, "headers": headers})
        await send({"type": "http.response.body", "body": body})
