"""Entra ID tokens for Azure models: obtained through azure-identity, cached, refreshed before they expire.

In tenants that disable api-keys (``disableLocalAuth``) every Azure OpenAI and Foundry call carries a
bearer token that lives about an hour; a run, a schedule or a server outlives it. So each model that
authenticates with Entra ID asks ``TokenSource.token()`` before every call: one cached token per
credential and scope, shared by every call, event loop and thread of the process, renewed once it
nears its end (at the credential's ``refresh_on``, else when a third of its life or five minutes
is left), and dropped when the provider answers 401 to a call sent with it, so that call is retried
once with a new token (``Model._call``).

Tokens never leave the process they were obtained in: a Ray actor or worker builds its models from
their configuration and obtains its own. Neither tokens nor credentials are logged; what is shown is
which credential answered (``Token.credential``) and when its token expires.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.llm.config import ModelConfig

INSTALL_HINT = "install assay[azure] (azure-identity) for Entra ID, or give the model an api key"
REFRESH_MARGIN = 300.0
"""Seconds before expiry at which a long-lived token is renewed, as azure-core's bearer policy does."""


class TokenUnavailable(ConfigError):
    """No credential of the configured kind could give a token: the run cannot call the model."""


@dataclass(frozen=True, slots=True)
class Token:
    value: str
    expires_on: float
    refresh_at: float
    obtained_at: float
    credential: str
    """The credential class that answered (of a chain, the link that did): ``AzureCliCredential``."""

    def fresh(self, now: float) -> bool:
        return now < self.refresh_at

    def describe(self, now: float | None = None) -> str:
        left = self.expires_on - (time.time() if now is None else now)
        return f"Entra ID token from {self.credential}, expires in {_duration(left)}"


class TokenSource:
    """The token of one credential and scope for this process."""

    def __init__(self, config: ModelConfig) -> None:
        self.kind = config.credential
        self.scope = config.token_scope
        self.tenant_id = config.tenant_id
        self.client_id = config.managed_identity_client_id
        self.obtained = 0
        """Tokens obtained so far: the first and each refresh."""
        self._token: Token | None = None
        self._credential: Any = None
        self._lock = threading.Lock()
        self._loop_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def __reduce__(self) -> Any:
        raise TypeError("an Entra ID token source stays in its process: build the model from its config there")

    async def token(self) -> Token:
        """A token fresh enough to send; obtains one (off the event loop) when none is."""
        found = self._token
        if found is not None and found.fresh(time.time()):
            return found
        loop = asyncio.get_running_loop()
        lock = self._loop_locks.get(loop)
        if lock is None:
            lock = self._loop_locks[loop] = asyncio.Lock()
        async with lock:  # one refresh per loop at a time; the calls of other loops wait on the thread lock
            return await asyncio.to_thread(self.token_now)

    def token_now(self) -> Token:
        """``token()`` for a thread that may block: the credential may run ``az`` or call an endpoint."""
        with self._lock:
            found = self._token
            if found is not None and found.fresh(time.time()):
                return found
            self._token = self._obtain()
            self.obtained += 1
            return self._token

    def refused(self, answered_at: float) -> None:
        """The provider answered 401 at ``answered_at``: drop the token obtained before then (the one
        that call carried, or at worst one a moment newer), unless another call has obtained one since."""
        with self._lock:
            if self._token is not None and self._token.obtained_at <= answered_at:
                self._token = None

    def _obtain(self) -> Token:
        if self._credential is None:
            self._credential = _credential(self.kind, self.client_id, self.tenant_id)
        credential = self._credential
        from azure.core.exceptions import ClientAuthenticationError  # installed with azure-identity

        try:
            if hasattr(credential, "get_token_info"):
                options = {"tenant_id": self.tenant_id} if self.tenant_id else None
                info = credential.get_token_info(self.scope, options=options)
                value, expires_on, refresh_on = info.token, float(info.expires_on), info.refresh_on
            else:
                extra = {"tenant_id": self.tenant_id} if self.tenant_id else {}
                access = credential.get_token(self.scope, **extra)
                value, expires_on, refresh_on = access.token, float(access.expires_on), None
        except ClientAuthenticationError as exc:
            raise TokenUnavailable(
                f"no Entra ID token for {self.scope} from the {self.kind} credential: {_first_lines(exc)}",
                hint="sign in (az login), or run with a managed or workload identity, or give the model an api key",
            ) from None
        now = time.time()
        lifetime = max(0.0, expires_on - now)
        refresh_at = expires_on - min(REFRESH_MARGIN, lifetime / 3)
        if refresh_on:
            refresh_at = min(refresh_at, float(refresh_on))
        answered = getattr(credential, "_successful_credential", None) or credential  # a chain's link that answered
        return Token(value, expires_on, refresh_at, now, type(answered).__name__)


_sources: dict[tuple[str, str, str | None, str | None], TokenSource] = {}
_sources_lock = threading.Lock()


def token_source(config: ModelConfig) -> TokenSource:
    """The process's token source for this model's credential and scope (models that share them
    share one token)."""
    key = (config.credential, config.token_scope, config.tenant_id, config.managed_identity_client_id)
    with _sources_lock:
        source = _sources.get(key)
        if source is None:
            source = _sources[key] = TokenSource(config)
        return source


def _credential(kind: str, client_id: str | None, tenant_id: str | None) -> Any:
    try:
        import azure.identity as identity
    except ImportError:
        raise ConfigError("Entra ID authentication needs azure-identity", hint=INSTALL_HINT) from None
    try:
        return _make_credential(identity, kind, client_id, tenant_id)
    except ValueError as exc:  # a named credential whose settings are missing (workload identity's variables)
        raise TokenUnavailable(
            f"the {kind} credential cannot be used here: {exc}",
            hint="set that credential's environment variables, or use credential: default",
        ) from None


def _make_credential(identity: Any, kind: str, client_id: str | None, tenant_id: str | None) -> Any:
    if kind == "azure_cli":
        return identity.AzureCliCredential(tenant_id=tenant_id or "")
    if kind == "azure_developer_cli":
        return identity.AzureDeveloperCliCredential(tenant_id=tenant_id or "")
    if kind == "managed_identity":
        return identity.ManagedIdentityCredential(client_id=client_id)
    if kind == "workload_identity":
        return identity.WorkloadIdentityCredential(tenant_id=tenant_id, client_id=client_id)
    if kind == "environment":
        return identity.EnvironmentCredential()
    allowed = {"additionally_allowed_tenants": [tenant_id]} if tenant_id else {}
    return identity.DefaultAzureCredential(managed_identity_client_id=client_id, **allowed)


def _first_lines(exc: BaseException, limit: int = 12) -> str:
    lines = [line.rstrip() for line in str(exc).splitlines() if line.strip()]
    shown = "\n  ".join(lines[:limit])
    return shown + ("\n  …" if len(lines) > limit else "")


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{max(0.0, seconds):.0f} s"
    return f"{seconds / 60:.0f} min"


def forget() -> None:
    """Drop every token and credential this process holds (its identity changed; tests)."""
    with _sources_lock:
        _sources.clear()
