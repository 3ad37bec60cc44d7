"""Errors in OpenAI's shape, ``{"error": {message, type, param, code}}``, with the right status."""

from __future__ import annotations

import json
import logging
import math
import uuid

import sqlalchemy as sa
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.errors import AssayError, NotFoundError, StoreError, UserError, store_failure
from assay.report.run_view import TEMPLATES

log = logging.getLogger("assay.api")


class AuthError(Exception):
    def __init__(self, message: str, status: int = 401) -> None:
        super().__init__(message)
        self.status = status


class RateLimited(Exception):
    """A caller over its per-key budget for an action (``assay.api.ratelimit``)."""

    def __init__(self, action: str, retry_after: float) -> None:
        super().__init__(f"Rate limit reached for {action}: retry in {retry_after:.1f} s.")
        self.retry_after = retry_after


def error(status: int, message: str, kind: str, code: str | None = None, param: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}}, status_code=status)


TITLES = {400: "Bad request", 404: "Not found", 405: "Not allowed", 413: "Too large", 429: "Too many requests"}


def for_reader(request: Request, reply: JSONResponse) -> Response:
    """A web UI page's error as a page of the UI (its message, the status kept), an API's as OpenAI's JSON."""
    if not request.url.path.startswith("/ui"):
        return reply
    message = json.loads(bytes(reply.body))["error"]["message"]
    status = reply.status_code
    if status == 404 and message == "Not Found":  # Starlette's word for a path no route serves
        message = f"there is no page at {request.url.path}"
    title = TITLES.get(status, "Unavailable" if status == 503 else "Something went wrong")
    page = TEMPLATES.get_template("error.html").render(title=title, message=message)
    headers = {k: v for k, v in reply.headers.items() if k.lower() in ("retry-after", "allow")}
    return HTMLResponse(page, status_code=status, headers=headers)


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (Starlette names only the first route's)."""
    methods = {
        method
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE")
        if any(route.matches({**request.scope, "method": method})[0] == Match.FULL for route in request.app.routes)
    }
    return sorted(methods | ({"HEAD"} if "GET" in methods else set()))


class RequestId:
    """Every response carries ``x-request-id``, as OpenAI's do (the SDK logs it). A plain ASGI
    wrapper: Starlette's ``@app.middleware("http")`` costs a task and two memory streams per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                request_id = (b"x-request-id", f"req_{uuid.uuid4().hex}".encode())
                message["headers"] = [*message.get("headers", []), request_id]
            await send(message)

        await self.app(scope, receive, with_id)


def install(app: FastAPI) -> None:
    app.add_middleware(RequestId)

    @app.exception_handler(NotFoundError)
    async def not_found(request: Request, exc: NotFoundError) -> Response:
        return for_reader(request, error(404, exc.message, "invalid_request_error", "not_found"))

    @app.exception_handler(UserError)
    async def bad_request(request: Request, exc: UserError) -> Response:
        message = f"{exc.message} ({exc.hint})" if exc.hint else exc.message
        return for_reader(request, error(400, message, "invalid_request_error", exc.code))

    @app.exception_handler(RateLimited)
    async def rate_limited(_: Request, exc: RateLimited) -> JSONResponse:
        reply = error(429, str(exc), "requests", "rate_limit_exceeded")
        reply.headers["retry-after"] = str(max(1, math.ceil(exc.retry_after)))
        reply.headers["retry-after-ms"] = str(max(1, math.ceil(exc.retry_after * 1000)))
        return reply

    @app.exception_handler(AuthError)
    async def unauthorized(_: Request, exc: AuthError) -> JSONResponse:
        return error(exc.status, str(exc), "invalid_request_error", "invalid_api_key")

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {"loc": [], "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"] if p != "body")
        message = str(first["msg"])
        reply = error(400, f"{where}: {message}" if where else message, "invalid_request_error", param=where)
        return for_reader(request, reply)

    @app.exception_handler(HTTPException)
    async def http(request: Request, exc: HTTPException) -> Response:
        detail = "the request body is too large" if exc.status_code == 413 else str(exc.detail)
        reply = error(exc.status_code, detail, "invalid_request_error")
        reply.headers.update(exc.headers or {})
        if exc.status_code == 405:
            reply.headers["Allow"] = ", ".join(_allowed_methods(request))
        return for_reader(request, reply)

    @app.exception_handler(OverflowError)
    async def too_large(request: Request, exc: OverflowError) -> Response:
        # A number from the request past what the store's integers hold (SQLite's 64 bits), anywhere.
        reply = error(400, "a number in the request is too large", "invalid_request_error", "number_too_large")
        return for_reader(request, reply)

    @app.exception_handler(sa.exc.DataError)
    async def out_of_range(request: Request, exc: sa.exc.DataError) -> Response:
        # PostgreSQL's refusal of a value its column cannot hold (a number out of range): the caller's.
        message = "a value in the request is out of range for the store"
        return for_reader(request, error(400, message, "invalid_request_error", "out_of_range"))

    @app.exception_handler(StoreError)
    async def store_down(request: Request, exc: StoreError) -> Response:
        reply = error(503, exc.message, "server_error", "store_unavailable")
        reply.headers["retry-after"] = "5"
        return for_reader(request, reply)

    @app.exception_handler(sa.exc.OperationalError)
    async def database_away(request: Request, exc: sa.exc.OperationalError) -> Response:
        log.warning("the store is unavailable: %s", type(exc.orig).__name__)
        reply = error(503, store_failure(exc, "answer").message, "server_error", "store_unavailable")
        reply.headers["retry-after"] = "5"
        return for_reader(request, reply)

    @app.exception_handler(AssayError)
    async def internal(request: Request, exc: AssayError) -> Response:
        log.exception("internal error")
        return for_reader(request, error(500, str(exc), "server_error"))
