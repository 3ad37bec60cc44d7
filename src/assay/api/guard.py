"""What a browser may not do to a server: the defences against web pages that call ``assay serve``.

A browser on the server's machine is a loopback caller, and a key-less server trusts loopback
callers. So a web page the user opens could post to ``http://127.0.0.1:8000`` (a cross-site
``text/plain`` POST needs no CORS preflight), or rebind its own name to 127.0.0.1 and read the
answers as same-origin. Three checks, in this order, stop that:

- **Host**: a key-less server answers only requests whose ``Host`` names it: the loopback names
  (``localhost``, ``*.localhost``, ``127.0.0.1``, ``[::1]``) and what the operator adds with
  ``--allowed-host`` or ``ASSAY_ALLOWED_HOSTS``. Anything else is DNS rebinding or a
  misdirected request: 421. A server with keys checks it too once the operator names hosts.
- **Origin**: a request that changes something (POST, PUT, PATCH, DELETE) and carries a browser's
  ``Origin`` must come from the server's own origin (scheme, host and port of ``Host``): else 403.
  SDKs and command-line clients send no ``Origin`` and are not affected.
- **Content type**: JSON routes take JSON content types only (``assay.api.context.json_body``), so
  an HTML form or a ``no-cors`` fetch cannot pass for an API call.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from assay.config.settings import settings
from assay.outbound import is_loopback_host

CHANGES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def host_name(netloc: str) -> str:
    """The name in a ``Host`` header (``name``, ``name:port``, ``[v6]:port``), lower case, without the port."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        return netloc[1 : netloc.find("]")] if "]" in netloc else ""
    return netloc.rsplit(":", 1)[0] if netloc.count(":") == 1 else netloc


def configured_hosts() -> list[str]:
    """The names the operator lets this server answer to, besides loopback (``ASSAY_ALLOWED_HOSTS``)."""
    return [entry.strip().lower() for entry in settings().allowed_hosts.split(",") if entry.strip()]


def host_allowed(name: str, allowed: list[str]) -> bool:
    for entry in allowed:
        if entry == "*" or entry == name or (entry.startswith("*.") and name.endswith(entry[1:])):
            return True
    return False


def same_origin(origin: str, scheme: str, host: str) -> bool:
    """Whether a browser's ``Origin`` is this server's own, as the request reached it."""
    own = _address(origin.strip().lower())
    return own is not None and own == _address(f"{scheme}://{host.strip().lower()}")


def _address(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin, the port filled in; None when it is not one."""
    parsed = urllib.parse.urlsplit(url)
    try:
        port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme)
    except ValueError:
        return None
    if parsed.scheme not in ("http", "https") or not parsed.hostname or port is None:
        return None
    return parsed.scheme, parsed.hostname, port


class BrowserGuard:
    """The ``Host`` and ``Origin`` checks of the module's doc, before any route sees the request."""

    def __init__(self, app: ASGIApp, keys_exist: Callable[[], bool]) -> None:
        self.app = app
        self.keys_exist = keys_exist

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = origin = None
        for key, value in scope["headers"]:  # the two headers read, not a dict of all of them
            if key == b"host":
                host = value.decode("latin-1")
            elif key == b"origin":
                origin = value.decode("latin-1")
        refusal = self._refusal(scope, host or "", origin)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message, code = refusal
        body = json.dumps({"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}})
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body.encode()})

    def _refusal(self, scope: Scope, host: str, origin: str | None) -> tuple[int, str, str] | None:
        name = host_name(host)
        # No Host at all is no browser (they always send one): HTTP/1.0 clients and in-process callers.
        # A loopback name is served always; the settings are read only for other names.
        if host and not is_loopback_host(name):
            allowed = configured_hosts()
            if (allowed or not self.keys_exist()) and not host_allowed(name, allowed):
                return (
                    421,
                    f"this server does not answer to the host {name!r}; the operator names the hosts "
                    "it serves with --allowed-host or ASSAY_ALLOWED_HOSTS",
                    "host_not_allowed",
                )
        if origin is not None and scope["method"] in CHANGES:
            if not same_origin(origin, str(scope.get("scheme", "http")), host):
                return (
                    403,
                    f"a page from {origin[:200]!r} may not change anything on this server; "
                    "call the API from a program, or use the server's own web UI",
                    "cross_origin_refused",
                )
        return None
