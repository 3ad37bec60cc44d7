"""Where a server may send requests on a user's behalf: one policy for every outbound call an API
caller can aim (endpoint evaluators, alert webhooks) or set going (the agents and MCP servers the
operator configured), applied when the call is made.

A process that serves others (``assay serve``, ``assay worker``) calls ``serve_others()`` at start;
from then on a URL must name a host the operator allowed in ``ASSAY_EVALUATOR_ENDPOINTS`` (or in
the ``--models`` file, for its agents and MCP servers), and
every address that name resolves to must be public. A loopback, link-local, private or otherwise
special address is called only when the URL spells that address and an operator's entry names it
exactly (never through a name, never by a wildcard), so neither a request nor a DNS answer can reach the server's own
ports, the machine's other services or a cloud metadata service. The connection is made to the
address that was checked (``PinnedResolver``, ``post``), so a name that resolves differently a
moment later (DNS rebinding) changes nothing, and no call follows a redirect.

A local process (``assay run``, ``assay.evaluate()``) belongs to its user and calls what its
evaluators name (still without following redirects).
"""

from __future__ import annotations

import asyncio
import http.client
import ipaddress
import socket
import ssl
import urllib.parse
from dataclasses import dataclass
from typing import Any, Literal

import httpx2
from aiohttp.abc import AbstractResolver, ResolveResult

from assay.config.settings import settings
from assay.errors import UserError

_SERVING = False
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class OutboundRefused(UserError):
    code = "outbound_refused"


def serve_others() -> None:
    """This process serves API callers: their URLs must pass the operator's allow-list."""
    global _SERVING
    _SERVING = True


def serving() -> bool:
    """Whether this process serves others (what arrives may be hostile), not its own user."""
    return _SERVING


@dataclass(frozen=True)
class Destination:
    """A URL's host and port, and the addresses the policy let through, in the order to try them."""

    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]


def check_url(url: str, purpose: str) -> tuple[str, str, int]:
    """Refuse ``url`` unless this process may call its host by name (the allow-list; nothing is
    resolved): (scheme, host, port). What is saved is checked with this; what is called, with ``destination``."""
    return _parts(url, purpose, listed=_SERVING)


def _parts(url: str, purpose: str, listed: bool) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL; with ``listed``, only a host the allow-list names."""
    try:
        parsed = urllib.parse.urlsplit(url)
        port = parsed.port
    except ValueError:
        raise OutboundRefused(f"{purpose}: {url[:200]!r} is not a URL with a valid host and port") from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise OutboundRefused(f"{purpose}: {url[:200]!r} is not an http(s) URL")
    host = parsed.hostname.lower()
    port = port or (443 if parsed.scheme == "https" else 80)
    if listed and not any(_matches(entry, host, port) for entry in _allowed()):
        raise OutboundRefused(
            f"{purpose}: this server may not call {host}:{port}",
            hint="the operator allows hosts with ASSAY_EVALUATOR_ENDPOINTS (host, host:port or *.domain)",
        )
    return parsed.scheme, host, port


Named = Literal["request", "operator", "setting"]
"""Who named a URL: a request (the allow-list decides), the operator for requests to use (an agent's
endpoint, a tool set's MCP server: named, so listed, but its addresses checked as any), or an
operator's setting no request sets going (resolved and pinned, not checked)."""


def destination(url: str, purpose: str, named_by: Named = "request") -> Destination:
    """``url`` checked by name, resolved, and each address checked (see the module's doc and ``Named``)."""
    checked = _SERVING and named_by != "setting"
    scheme, host, port = _parts(url, purpose, listed=checked and named_by == "request")
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise OutboundRefused(f"{purpose}: cannot resolve {host} ({exc})") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if checked:
        for address in addresses:
            # A literal address passed the list only where an entry (or the operator's file) names it
            # exactly; a name never stands for an inside address, whatever DNS answers, except that an
            # operator who wrote ``localhost`` named the loopback address.
            ip = ipaddress.ip_address(address.split("%", 1)[0])
            loopback_named = named_by == "operator" and is_loopback_host(host) and ip.is_loopback
            if _special(ip) and address != _literal(host) and not loopback_named:
                raise OutboundRefused(
                    f"{purpose}: {host} resolves to {address}, an address this server does not call",
                    hint="loopback, link-local and private addresses are called only when the URL is the "
                    "address itself, named in ASSAY_EVALUATOR_ENDPOINTS or in the --models file",
                )
    if not addresses:
        raise OutboundRefused(f"{purpose}: {host} resolves to no address")
    return Destination(scheme, host, port, tuple(addresses))


def _allowed() -> list[str]:
    return [entry.strip().lower() for entry in settings().evaluator_endpoints.split(",") if entry.strip()]


def _literal(host: str) -> str | None:
    """The address a URL's host spells, normalized as ``getaddrinfo`` prints it; None for a name."""
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


def _split(entry: str) -> tuple[str, str]:
    """An entry's (name, port or ""): ``host``, ``host:port``, ``[v6]``, ``[v6]:port``, bare ``v6``."""
    if entry.startswith("["):
        name, _, rest = entry[1:].partition("]")
        return name, rest.removeprefix(":")
    if entry.count(":") == 1:
        name, _, port = entry.partition(":")
        return name, port
    return entry, ""


def _matches(entry: str, host: str, port: int) -> bool:
    name, wanted_port = _split(entry)
    if wanted_port and wanted_port != str(port):
        return False
    if name == host:
        return True  # named exactly: even a loopback address
    if name.startswith("*.") and host.endswith(name[1:]):
        return not _internal(host)
    return False


def is_loopback_host(host: str) -> bool:
    """``localhost``, a ``*.localhost`` name (RFC 6761) or a loopback address (``127.0.0.1``, ``::1``)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _internal(host: str) -> bool:
    try:
        return _special(ipaddress.ip_address(host))
    except ValueError:
        return is_loopback_host(host)


def _special(address: Address) -> bool:
    """Not a public address: loopback, link-local, private, shared, reserved, multicast, unspecified
    (IPv4 mapped into IPv6 judged as the IPv4 address it carries)."""
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    return not address.is_global or address.is_multicast


class PinnedResolver(AbstractResolver):
    """aiohttp's resolver for calls under the policy: a name resolves only to the addresses
    ``destination`` checked, so the connection goes where the check looked."""

    def __init__(self, purpose: str) -> None:
        self.purpose = purpose

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        url = f"http://{host if ':' not in host else f'[{host}]'}:{port or 80}/"
        checked = await asyncio.get_running_loop().run_in_executor(None, destination, url, self.purpose)
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=port,
                family=socket.AF_INET6 if ":" in address else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for address in checked.addresses
        ]

    async def close(self) -> None:
        return None


class PinnedTransport(httpx2.AsyncBaseTransport):
    """An httpx transport for calls under the policy (the MCP SDK's client takes one): each request
    is checked by ``destination`` and sent to the address checked, its ``Host`` header and TLS
    name still the URL's. ``named_by``: see ``Named``."""

    def __init__(self, purpose: str, named_by: Named = "request") -> None:
        self.purpose = purpose
        self.named_by = named_by
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await _pin(request, self.purpose, self.named_by)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def pinned_httpx_transport(purpose: str, named_by: Named = "request") -> Any:
    """``PinnedTransport`` for the ``httpx`` package, whose clients some SDKs take (the A2A SDK's)."""
    import httpx

    class Pinned(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            await _pin(request, purpose, named_by)
            return await self.inner.handle_async_request(request)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return Pinned()


async def _pin(request: Any, purpose: str, named_by: Named) -> None:
    """Check the request's URL by ``destination`` and point it at the address checked, its ``Host``
    header and TLS name still the URL's (an httpx or httpx2 request)."""
    checked = await asyncio.get_running_loop().run_in_executor(None, destination, str(request.url), purpose, named_by)
    if request.url.scheme == "https":
        request.extensions = {**request.extensions, "sni_hostname": checked.host}
    request.url = request.url.copy_with(host=checked.addresses[0])


def post(
    url: str, body: bytes, headers: dict[str, str], timeout: float, purpose: str, named_by: Named = "request"
) -> tuple[int, bytes]:
    """POST ``body`` to ``url`` under the policy, connected to a checked address, never following a
    redirect (a 3xx is the answer); (status, the answer's first 64 kB). Raises ``OutboundRefused``
    or ``OSError``. ``named_by``: see ``Named``."""
    return call("POST", url, body, headers, timeout, purpose, named_by)


def call(
    method: str,
    url: str,
    body: bytes | None,
    headers: dict[str, str],
    timeout: float,
    purpose: str,
    named_by: Named = "request",
    limit: int = 64 * 1024,
) -> tuple[int, bytes]:
    """``post`` for any method; (status, the answer's first ``limit`` bytes)."""
    target = destination(url, purpose, named_by)
    parsed = urllib.parse.urlsplit(url)
    path = (parsed.path or "/") + (f"?{parsed.query}" if parsed.query else "")
    last: OSError | None = None
    for address in target.addresses:
        connection = _connection(target, address, timeout)
        try:
            connection.request(method, path, body=body, headers={**headers, "Host": _host_header(target)})
            reply = connection.getresponse()
            return reply.status, reply.read(limit)
        except (OSError, http.client.HTTPException) as exc:  # a garbled answer is a failed call too
            last = exc if isinstance(exc, OSError) else OSError(f"{type(exc).__name__}: {exc}")
        finally:
            connection.close()
    assert last is not None
    raise last


def _host_header(target: Destination) -> str:
    default = 443 if target.scheme == "https" else 80
    name = f"[{target.host}]" if ":" in target.host else target.host
    return name if target.port == default else f"{name}:{target.port}"


def _connection(target: Destination, address: str, timeout: float) -> http.client.HTTPConnection:
    """A connection to ``address`` that speaks to ``target.host`` (its TLS name and certificate)."""

    class Pinned(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = socket.create_connection((address, target.port), timeout)

    class PinnedTls(http.client.HTTPSConnection):
        def connect(self) -> None:
            raw = socket.create_connection((address, target.port), timeout)
            context: Any = ssl.create_default_context()
            self.sock = context.wrap_socket(raw, server_hostname=target.host)

    kind = PinnedTls if target.scheme == "https" else Pinned
    return kind(target.host, target.port, timeout=timeout)
