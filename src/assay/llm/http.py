"""The hot path of a model call: a JSON POST on a pooled aiohttp session, addressed, authenticated
and failed exactly as the ``openai`` SDK client would do it.

Why not ``client.post`` for every call: at a hundred calls in flight, the SDK's per-request work
(pydantic request options, an httpx2 ``Request`` with its ``URL`` and ``Headers`` objects, then the
same again on the aiohttp side) costs more client CPU than everything else in a judge call
together, and on a small machine that CPU is what caps throughput (``bench/judge_throughput.py``).

So the SDK client still decides everything that makes a request right: it builds one request per
path and model (Azure deployment paths, ``api-version``, ``api-key`` or bearer auth, user agent and
platform headers), and we send many bodies with that URL and those headers. Failures come back as
the SDK's own exceptions (``openai.RateLimitError`` with its body and headers, ``APITimeoutError``,
``APIConnectionError``), so retry rules read them unchanged. Streaming stays on the SDK.

Asking for the template uses the client's private request builder. Should an SDK release change it,
``FastPathUnavailable`` is raised once and the model layer sends through the client from then on:
slower, never wrong.
"""

from __future__ import annotations

import json
import logging
import ssl
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
import httpx2
import openai

log = logging.getLogger(__name__)

# Per-request headers of the template request; aiohttp and each send supply their own.
_PER_REQUEST = {"content-length", "idempotency-key", "x-stainless-retry-count"}
# A template's credential, when each post sends the token current then (it is refreshed as it expires).
_CREDENTIALS = {"authorization", "api-key"}


class FastPathUnavailable(Exception):
    """This SDK build cannot lend its request builder: send through the client instead."""


@dataclass(frozen=True, slots=True)
class _Template:
    url: str
    headers: dict[str, str]
    proxy: str | None
    request: httpx2.Request
    """The SDK's request itself: exceptions carry it, as the SDK's own do."""


class FastPoster:
    """JSON POSTs for one SDK client on one event loop."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        *,
        timeout: float,
        connections: int,
        tls: ssl.SSLContext | None = None,
        bearer: Callable[[], Awaitable[str]] | None = None,
        observe: Callable[[Mapping[str, str]], None] | None = None,
    ) -> None:
        self.client = client
        self.observe = observe
        """Shown the headers of every reply (``Model.observe`` reads the provider's limits there)."""
        self.bearer = bearer
        """The current Entra ID token, asked for on every post (templates keep no credential then)."""
        self.tls = tls
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.connections = connections
        self._session: aiohttp.ClientSession | None = None
        self._templates: dict[tuple[str, str], _Template] = {}

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        """The decoded JSON reply, or the exception the SDK would raise."""
        template = await self._template(path, str(body.get("model", "")))
        data = json.dumps(body).encode()
        sent = template.headers
        if self.bearer is not None:
            sent = {**sent, "Authorization": f"Bearer {await self.bearer()}"}
        try:
            post = self._open().post(template.url, data=data, headers=sent, proxy=template.proxy)
            async with post as reply:
                status, content = reply.status, await reply.read()
                headers = list(reply.headers.items())
                if self.observe is not None:
                    self.observe(reply.headers)
        except TimeoutError as exc:
            raise openai.APITimeoutError(request=template.request) from exc
        except aiohttp.ClientError as exc:
            message = f"Connection error: {type(exc).__name__}: {exc}"
            raise openai.APIConnectionError(message=message, request=template.request) from exc
        if status >= 400:
            response = httpx2.Response(status, headers=headers, content=content, request=template.request)
            raise _status_error(self.client, response)
        try:
            return json.loads(content)
        except ValueError:
            response = httpx2.Response(status, headers=headers, content=content, request=template.request)
            text = content[:200].decode(errors="replace")
            message = f"the reply is not JSON: {text!r}"
            raise openai.APIResponseValidationError(response, text, message=message) from None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self.connections, ssl=self.tls if self.tls is not None else True)
            # Not trust_env: it looks the proxy up again on every request; each template knows its own.
            self._session = aiohttp.ClientSession(connector=connector, timeout=self.timeout)
        return self._session

    async def _template(self, path: str, model: str) -> _Template:
        found = self._templates.get((path, model))
        if found is None:
            try:
                request = await _sdk_request(self.client, path, model)
            except (ImportError, AttributeError, TypeError) as exc:
                log.warning(
                    "openai %s: cannot build request templates (%s); sending through the SDK instead",
                    openai.__version__,
                    exc,
                )
                raise FastPathUnavailable(str(exc)) from exc
            dropped = _PER_REQUEST | _CREDENTIALS if self.bearer is not None else _PER_REQUEST
            headers = {key: value for key, value in request.headers.items() if key.lower() not in dropped}
            url = str(request.url)
            found = self._templates[(path, model)] = _Template(url, headers, _proxy_for(url), request)
        return found


async def _sdk_request(client: Any, path: str, model: str) -> httpx2.Request:
    """The request the client would send for a JSON POST to ``path`` naming ``model``."""
    from openai._models import FinalRequestOptions

    options = FinalRequestOptions.construct(method="post", url=path, json_data={"model": model})
    options = await client._prepare_options(options)
    request: httpx2.Request = client._build_request(options)
    await client._prepare_request(request)
    return request


def _status_error(client: Any, response: httpx2.Response) -> openai.APIStatusError:
    """The SDK's exception for an error status (``RateLimitError``, ``BadRequestError`` ...)."""
    make = getattr(client, "_make_status_error_from_response", None)
    if make is not None:
        error: openai.APIStatusError = make(response)
        return error
    return openai.APIStatusError(f"Error code: {response.status_code}", response=response, body=response.text)


def _proxy_for(url: str) -> str | None:
    """The proxy the environment names for this URL (``HTTPS_PROXY``, ``NO_PROXY``), as the SDK's
    transports would use it."""
    parts = urllib.parse.urlsplit(url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return urllib.request.getproxies().get(parts.scheme)
