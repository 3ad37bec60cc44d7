"""Where a server may send requests on a user's behalf: one policy for every outbound call an API
caller can aim (endpoint evaluators today).

A process that serves others (``assay serve``, ``assay worker``) calls ``serve_others()`` at start;
from then on a URL must name a host the operator allowed in ``ASSAY_EVALUATOR_ENDPOINTS``. A
loopback or link-local address is allowed only when named exactly (never by a wildcard), so a
request cannot reach the server's own ports or a cloud metadata service. A local process (``assay
run``, ``assay.evaluate()``) belongs to its user and calls what its evaluators name.
"""

from __future__ import annotations

import ipaddress
import urllib.parse

from assay.errors import UserError
from assay.settings import settings

_SERVING = False


class OutboundRefused(UserError):
    code = "outbound_refused"


def serve_others() -> None:
    """This process serves API callers: their URLs must pass the operator's allow-list."""
    global _SERVING
    _SERVING = True


def check_url(url: str, purpose: str) -> None:
    """Refuse ``url`` unless this process may call it (see the module's doc)."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise OutboundRefused(f"{purpose}: {url!r} is not an http(s) URL")
    if not _SERVING:
        return
    host = parsed.hostname.lower()
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    allowed = [entry.strip().lower() for entry in settings().evaluator_endpoints.split(",") if entry.strip()]
    if not any(_matches(entry, host, port) for entry in allowed):
        raise OutboundRefused(
            f"{purpose}: this server may not call {host}:{port}",
            hint="the operator allows hosts with ASSAY_EVALUATOR_ENDPOINTS (host, host:port or *.domain)",
        )


def _matches(entry: str, host: str, port: int) -> bool:
    name, _, wanted_port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
    if wanted_port and wanted_port != str(port):
        return False
    if name == host:
        return True  # named exactly: even a loopback address
    if name.startswith("*.") and host.endswith(name[1:]):
        return not _internal(host)
    return False


def _internal(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or host.endswith(".localhost")
    return address.is_loopback or address.is_link_local
