"""The one model facade: every LLM call in assay goes through ``Model.generate``.

It owns, for one configured model: request shaping (reasoning models get
``max_completion_tokens`` and no temperature), the content-addressed cache, adaptive concurrency,
request and token budgets, retries that honour ``retry-after-ms`` / ``retry-after``, and usage.
The provider is the ``openai`` SDK (``AsyncOpenAI`` or ``AsyncAzureOpenAI``), one long-lived client
per endpoint and event loop, with the SDK's own retries off so ours are the only ones. Plain JSON
calls are sent by ``assay.llm.http.FastPoster`` with the URL and headers that client builds (see
there why); ``transport: sdk`` in a model's config sends every call through the client instead.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hashlib
import json
import os
import ssl
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.errors import AssayError, ConfigError
from assay.llm import batch
from assay.llm.breaker import Breaker, counts_towards_breaker
from assay.llm.cache import BatchedCache, CallCache
from assay.llm.config import ModelConfig
from assay.llm.entra import TokenSource, TokenUnavailable, token_source
from assay.llm.limits import OPENING, PACE, AdaptiveLimiter, Budgets, ProviderLimits, SharedBudget, local_budget
from assay.llm.retry import backoff, classify, content_filter_of
from assay.results.stored import CacheMode as CacheMode

if TYPE_CHECKING:
    from assay.llm.http import FastPoster


class ModelError(AssayError):
    """A model call failed for good (after retries, or a cache miss in replay mode)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        """The provider's last HTTP status, if it answered."""


class ContentFiltered(ModelError):
    """The provider's content filter stopped the call: Azure's 400 ``content_filter`` for a prompt,
    or ``finish_reason: content_filter`` for a completion. An outcome of the item, not a failure:
    it is recorded as *filtered* with the categories and severities the provider gave."""

    def __init__(self, model: str, stage: str, categories: dict[str, Any], text: str = "") -> None:
        flagged = filtered_categories(categories)
        shown = ", ".join(flagged) or "no category named"
        super().__init__(f"model {model!r}: the {stage} was filtered by the provider's content filter ({shown})", 400)
        self.stage = stage
        """``prompt`` (the request was refused) or ``completion`` (the answer was cut)."""
        self.categories = categories
        self.text = text
        """What the model wrote before its answer was cut, if anything."""

    def as_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "filtered": filtered_categories(self.categories), "categories": self.categories}


def filtered_categories(categories: dict[str, Any]) -> list[str]:
    """The names of the categories the filter acted on, with their severity: ``violence (medium)``."""
    named = []
    for name, verdict in categories.items():
        if isinstance(verdict, dict) and verdict.get("filtered") is True:
            severity = verdict.get("severity")
            named.append(f"{name} ({severity})" if isinstance(severity, str) and severity != "safe" else str(name))
    return named


class EndpointUnavailable(ModelError):
    """The model's endpoint refuses connections or the key (``assay.llm.breaker``): calls fail at
    once instead of retrying, and the run that needs it stops."""


_outages: contextvars.ContextVar[list[Model] | None] = contextvars.ContextVar("assay_outages", default=None)


def watch_outages() -> list[Model]:
    """From here on in this task (and the tasks it starts), each model whose call fails because
    its endpoint is unreachable or refuses the key is added to the returned list: such a failure
    says nothing about the item being evaluated, so the engine keeps that item for a resume."""
    seen: list[Model] = []
    _outages.set(seen)
    return seen


def _note_outage(model: Model) -> None:
    seen = _outages.get()
    if seen is not None and model not in seen:
        seen.append(model)


@dataclass(slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0


@dataclass(slots=True)
class Completion:
    text: str
    model: str
    usage: Usage
    finish_reason: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    cached: bool = False
    """Served from assay's cache: no call was made and no tokens were spent."""
    logprobs: list[float] | None = None
    """Each output token's log probability, when the call asked for them (``logprobs: true``)."""
    function_call: dict[str, Any] | None = None
    """The call of the legacy functions API (a request with ``functions``): ``{name, arguments}``."""
    refusal: str | None = None
    """Why the model refused (structured outputs' ``refusal``): ``text`` says it too."""


@dataclass
class _LoopState:
    """asyncio objects belong to one event loop; each loop gets its own client and limiter."""

    client: Any
    poster: FastPoster | None
    """None with ``transport: sdk``."""
    cache: BatchedCache | None
    limiter: AdaptiveLimiter
    requests: SharedBudget | None
    tokens: SharedBudget | None
    entra: TokenSource | None
    """Where the Entra ID token of each call comes from, for a model that authenticates with one."""
    limits_seen: ProviderLimits | None = None
    """The provider's limits the budgets above were made for (``Model.provider_limits``)."""


class Model:
    def __init__(
        self,
        config: ModelConfig,
        *,
        cache: CallCache | None = None,
        cache_mode: CacheMode = "use",
        budgets: Budgets = local_budget,
    ) -> None:
        self.config = config
        self.budgets = budgets
        self.cache = cache if cache_mode != "off" else None
        self.cache_mode = cache_mode
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = weakref.WeakKeyDictionary()
        self.calls = 0
        self.cache_hits = 0
        self.breaker = Breaker()
        self.retrying = 0
        """Calls waiting out a backoff now (the progress bar shows them)."""
        self.last_failure: str | None = None
        """The last failure that was retried, for the progress bar."""
        self.near: str | None = None
        """A configured model's name close to this one's, when the environment serves this name
        (``ModelRegistry.get``): the likely meaning of a typo, for the error a missing key raises."""
        self.provider_limits: ProviderLimits | None = None
        """The per-minute limits the provider last stated for this model, if it states any."""
        self.answered = False
        """The provider has answered once, so whether it states limits is known."""
        self.tokens_per_char = 0.25
        """Prompt tokens per character of the serialised prompt, calibrated on the provider's own
        counts (``usage.prompt_tokens``): a call's tokens are estimated before it is sent."""
        self.completion_tokens = 0.0
        """The mean completion of calls that set no ``max_tokens``, calibrated the same way."""
        self._calibration = [0.0, 0.0, 0.0, 0.0]  # characters, prompt tokens, completion tokens, calls

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def where(self) -> str:
        """The model and its endpoint, for messages."""
        return f"model {self.name!r} at {self.config.url}"

    def unavailable(self) -> EndpointUnavailable | None:
        """Why calls to this model fail at once, once its breaker has tripped."""
        if self.breaker.tripped is None:
            return None
        return EndpointUnavailable(f"{self.where} is unreachable: {self.breaker.tripped}")

    def check_credentials(self) -> None:
        # Without a base_url the client calls OPENAI_BASE_URL when it is set: a local server needs no key.
        calls_openai = self.config.base_url is None and not os.environ.get("OPENAI_BASE_URL")
        if self.config.provider == "openai" and calls_openai and not self.config.key():
            if self.near is not None:  # most likely a typo of a configured model's name
                raise ConfigError(
                    f"model {self.name!r} is not in models: (did you mean {self.near!r}?)",
                    hint=f"name a model of the models: section, or configure {self.name!r} there",
                )
            raise ConfigError(
                f"model {self.name!r} would call api.openai.com but no API key is set",
                hint="set OPENAI_API_KEY, or give the model a base_url for a local OpenAI-compatible server",
            )

    def request(self, messages: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
        """The chat-completions request body for these messages and sampling parameters."""
        body: dict[str, Any] = {"model": self.config.model, "messages": messages}
        max_tokens = params.pop("max_tokens", None)
        if self.config.is_reasoning:
            for key in ("temperature", "top_p", "presence_penalty", "frequency_penalty"):
                params.pop(key, None)
            if max_tokens is not None:
                body["max_completion_tokens"] = max(max_tokens, 4096)
        elif max_tokens is not None:
            body["max_tokens"] = max_tokens
        if not self.config.json_mode:
            params.pop("response_format", None)
        body.update({key: value for key, value in params.items() if value is not None})
        return body

    def client(self) -> Any:
        """The OpenAI client of the running event loop (the Batch API's files and batches go through it)."""
        return self._state().client

    def cache_key(self, body: dict[str, Any]) -> str:
        material = json.dumps({"endpoint": self.config.endpoint, "body": body}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(material.encode()).hexdigest()

    async def generate(self, messages: list[dict[str, Any]], **params: Any) -> Completion:
        body = self.request(messages, **params)
        cache = self._state().cache
        key = self.cache_key(body) if cache is not None else ""
        if cache is not None and self.cache_mode in ("use", "replay"):
            hit = await cache.get(key)
            if hit is not None:
                self.cache_hits += 1
                return self._unfiltered(_completion(hit, cached=True), hit)
            if self.cache_mode == "replay":
                raise ModelError(f"model {self.name!r}: no cached answer for this call (--cache replay)")
        response = await self._answer(body)
        if cache is not None:
            cache.put(key, self.config.model, response)
        return self._unfiltered(_completion(response, cached=False), response)

    async def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The provider's answer to a chat request: from the run's batches in batch mode (a Responses
        model's batch holds Responses requests, its answers read back in chat's shape), else, or when
        the batch gave none, sent on its own."""
        batching = batch.current()
        if batching is not None:
            responses = self.config.api == "responses"
            try:
                answer = await batching.queue(self).ask(responses_request(body) if responses else body)
                self.calls += 1
                return chat_shape(answer) if responses else answer
            except batch.BatchMiss:
                pass
        return dict(await self._call(body, lambda state: self._post(state, body)))

    def _unfiltered(self, completion: Completion, response: dict[str, Any]) -> Completion:
        """The completion, unless the provider's filter cut it (``ContentFiltered``)."""
        if completion.finish_reason != "content_filter":
            return completion
        choice = (response.get("choices") or [{}])[0]
        categories = choice.get("content_filter_results") or choice.get("content_filter_result") or {}
        raise ContentFiltered(self.name, "completion", dict(categories), completion.text)

    async def forward(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """Send an OpenAI-shaped request as it is, but for the model name (the capture pass-through).

        Budgets, adaptive concurrency and retries apply as for any call; the cache does not, since
        every forwarded call must produce a response of its own."""
        body = {**body, "model": self.config.model}
        reply: dict[str, Any] = await self._call(body, lambda state: _send(state, path, body))
        return reply

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Each text's embedding, from the endpoint's ``/embeddings`` (budgets and retries as any call)."""
        reply = await self.forward("/embeddings", {"input": texts})
        data = sorted(reply.get("data") or [], key=lambda entry: entry.get("index", 0))
        vectors = [entry.get("embedding") for entry in data]
        if len(vectors) != len(texts) or not all(isinstance(v, list) and v for v in vectors):
            raise ModelError(f"{self.where}: the embeddings answer holds {len(vectors)} vectors for {len(texts)} texts")
        return [[float(x) for x in vector] for vector in vectors]

    async def moderate(self, text: str) -> list[dict[str, Any]]:
        """The categories the endpoint's ``/moderations`` flags in ``text``: ``{code, confidence}``
        each, the highest score of a category flagged in any result."""
        reply = await self.forward("/moderations", {"input": text})
        flags: dict[str, float] = {}
        for result in reply.get("results") or []:
            if not isinstance(result, dict) or not result.get("flagged"):
                continue
            scores = result.get("category_scores") or {}
            for category, flagged in (result.get("categories") or {}).items():
                if flagged and (category not in flags or float(scores.get(category) or 0) > flags[category]):
                    flags[category] = float(scores.get(category) or 0)
        return [{"code": code, "confidence": confidence} for code, confidence in flags.items()]

    async def forward_stream(self, path: str, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Like ``forward`` with ``stream: true``: the provider's events, one dict each.

        Retries happen only until the provider starts answering; after that a broken stream is the
        caller's to see, as it would be talking to the provider itself."""
        body = {**body, "model": self.config.model, "stream": True}
        import openai

        stream_cls = openai.AsyncStream[object]
        stream: Any = await self._call(
            body, lambda state: state.client.post(path, body=body, cast_to=object, stream=True, stream_cls=stream_cls)
        )
        return _events(stream)

    def observe(self, headers: Mapping[str, str]) -> None:
        """Read a provider's answer's headers (every answer, errors too): the limits it states."""
        found = ProviderLimits.read(headers)
        if found is not None:
            self.provider_limits = found

    def _paced(self, state: _LoopState) -> None:
        """Budgets for the provider's stated limits, made once it has stated them: the lower of
        the user's ``rpm``/``tpm`` and ``PACE`` of the provider's figure."""
        self.answered = True
        state.limiter.open()
        found, seen = self.provider_limits, state.limits_seen
        if found is None or (seen is not None and found.per_minute == seen.per_minute):
            return
        state.limits_seen = found
        config = self.config
        for kind, stated, configured, remaining in (
            ("requests", found.requests_per_minute, config.rpm, found.remaining_requests),
            ("tokens", found.tokens_per_minute, config.tpm, found.remaining_tokens),
        ):
            if stated and (not configured or stated * PACE < configured):
                budget = self.budgets(config, kind, stated * PACE)
                if remaining is not None:  # what the calls before the budget existed left of it
                    budget.cap(remaining)
                setattr(state, kind, budget)

    def _estimate(self, body: dict[str, Any]) -> tuple[float, float]:
        """The characters of a call's prompt and the tokens it will be charged before it is sent.

        What providers charge a token budget: the prompt, and the ``max_tokens`` a call sets (at
        once, whatever it then writes: OpenAI and Azure OpenAI both count it), or else what it writes."""
        chars = float(len(json.dumps(body.get("messages", body.get("input")), ensure_ascii=False)))
        cap = _completion_cap(body)
        return chars, chars * self.tokens_per_char + (cap if cap else self.completion_tokens)

    def _calibrate(self, body: dict[str, Any], chars: float, usage: dict[str, Any]) -> float:
        """Learn from the provider's own counts; what it charged this call by them."""
        seen = self._calibration
        prompt = usage.get("prompt_tokens") or usage.get("input_tokens")
        completion = usage.get("completion_tokens") or usage.get("output_tokens")
        cap = _completion_cap(body)
        if chars and isinstance(prompt, int):
            seen[0] += chars
            seen[1] += prompt
            self.tokens_per_char = seen[1] / seen[0]
        if not cap and isinstance(completion, int):
            seen[2] += completion
            seen[3] += 1
            self.completion_tokens = seen[2] / seen[3]
        charged_prompt = prompt if isinstance(prompt, int) else chars * self.tokens_per_char
        charged_completion = cap or (completion if isinstance(completion, int) else self.completion_tokens)
        return float(charged_prompt + charged_completion)

    async def _call(self, body: dict[str, Any], send: Callable[[_LoopState], Awaitable[Any]]) -> Any:
        state = self._state()
        chars, estimate = 0.0, 0.0
        attempt = 0
        refreshed = False
        while True:
            down = self.unavailable()
            if down is not None:
                _note_outage(self)
                raise down
            # Only a token budget needs the estimate; serialising the prompt is not free on the hot path.
            requests, tokens = state.requests, state.tokens
            if tokens is not None and not chars:
                chars, estimate = self._estimate(body)
            if requests is not None:
                await requests.take(1)
            if tokens is not None:
                await tokens.take(estimate)
            await state.limiter.acquire()
            if (requests, tokens) != (state.requests, state.tokens):
                # The provider stated its limits while this call waited for a slot: it waits its turn
                # in the budgets made for them, or the first wave would meet a budget nobody paced to.
                state.limiter.give_up()
                continue
            throttled = False
            try:
                response = await send(state)
                self.calls += 1
                self.breaker.succeeded()
                self._paced(state)
                if tokens is not None:
                    usage = response.get("usage") if isinstance(response, dict) else None
                    if usage:
                        tokens.give_back(estimate - self._calibrate(body, chars, usage))
                return response
            except Exception as exc:  # noqa: BLE001 - classified below; unknown errors are not retried
                if isinstance(exc, TokenUnavailable):  # the credential stopped answering: the model is out of reach
                    self.breaker.failed(exc.message)
                    _note_outage(self)
                    raise ModelError(f"model {self.name!r}: {exc.message}", 401) from None
                failure = classify(exc)
                throttled = failure.throttled
                if failure.status is not None:
                    self._paced(state)
                prompt_filter = content_filter_of(exc) if failure.status == 400 else None
                if prompt_filter is not None:
                    raise ContentFiltered(self.name, "prompt", prompt_filter) from None
                if failure.status == 401 and state.entra is not None and not refreshed:
                    # The token expired in flight or was revoked: a new one, once, before it counts.
                    state.entra.refused(time.time())
                    refreshed = True
                    continue
                outage = counts_towards_breaker(exc, failure.status)
                if outage:
                    self.breaker.failed(failure.message)
                    down = self.unavailable()
                    if down is not None:
                        _note_outage(self)
                        raise down from None
                if not failure.retry or attempt >= self.config.max_retries:
                    if outage:
                        _note_outage(self)
                    tries = f" after {attempt + 1} attempts" if attempt else ""
                    raise ModelError(f"model {self.name!r}: {failure.message}{tries}", failure.status) from None
                delay = backoff(attempt, failure.delay)
                if throttled and tokens is not None:  # a refused call was not charged: its share is free
                    tokens.give_back(estimate)
                if throttled and failure.delay:  # Retry-After holds every caller of the budgets
                    for budget in (state.requests, state.tokens):
                        if budget is not None:
                            budget.hold(failure.delay)
            finally:
                # Paced to a stated budget, a 429 is drift the Retry-After hold corrects; halving the
                # calls in flight as well would leave the budget unspent.
                await state.limiter.release(throttled=throttled and state.limits_seen is None)
            attempt += 1
            self.retrying += 1
            self.last_failure = failure.message
            try:
                await asyncio.sleep(delay)
            finally:
                self.retrying -= 1

    async def _post(self, state: _LoopState, body: dict[str, Any]) -> dict[str, Any]:
        if self.config.api == "responses":
            return chat_shape(await _send(state, "/responses", responses_request(body)))
        return dict(await _send(state, "/chat/completions", body))

    async def aclose(self) -> None:
        """Write what the cache has queued, and close this event loop's client (its pooled
        connections die with the loop otherwise)."""
        state = self._states.pop(asyncio.get_running_loop(), None)
        if state is not None:
            if state.cache is not None:
                await state.cache.flush()
            if state.poster is not None:
                await state.poster.aclose()
            await state.client.close()

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._states.get(loop)
        if state is None:
            config = self.config
            entra = token_source(config) if config.uses_entra else None
            client = _client(config, entra, self.observe)
            cache = None
            if self.cache is not None:
                mode = self.cache_mode
                cache = BatchedCache(self.cache, replace=mode == "refresh", presence=mode == "use")
            poster = None
            if config.transport == "fast":
                from assay.llm.http import FastPoster

                connections = max(100, config.max_concurrency)
                bearer = None if entra is None else _bearer(entra)
                poster = FastPoster(
                    client,
                    timeout=config.timeout,
                    connections=connections,
                    tls=_tls(),
                    bearer=bearer,
                    observe=self.observe,
                )
            state = _LoopState(
                client=client,
                poster=poster,
                cache=cache,
                limiter=AdaptiveLimiter(config.max_concurrency, opening=None if self.answered else OPENING),
                requests=self.budgets(config, "requests", config.rpm) if config.rpm else None,
                tokens=self.budgets(config, "tokens", config.tpm) if config.tpm else None,
                entra=entra,
            )
            self._states[loop] = state
        return state


def _completion_cap(body: dict[str, Any]) -> int:
    cap = body.get("max_tokens") or body.get("max_completion_tokens") or body.get("max_output_tokens")
    return cap if isinstance(cap, int) else 0


async def _send(state: _LoopState, path: str, body: dict[str, Any]) -> Any:
    from assay.llm.http import FastPathUnavailable

    if state.poster is not None:
        try:
            return await state.poster.post(path, body)
        except FastPathUnavailable:
            await state.poster.aclose()
            state.poster = None
    # The SDK's low-level post: its rules for URL, auth and errors, without validating our body or
    # building pydantic objects for the reply.
    return await state.client.post(path, body=body, cast_to=object)


async def _events(stream: Any) -> AsyncIterator[dict[str, Any]]:
    async with stream:
        async for event in stream:
            yield event


def _bearer(source: TokenSource) -> Callable[[], Awaitable[str]]:
    """The current token of ``source``, as the SDK's token providers return it."""

    async def current() -> str:
        return (await source.token()).value

    return current


def _client(config: ModelConfig, entra: TokenSource | None, observe: Callable[[Mapping[str, str]], None]) -> Any:
    # The SDK is imported with the first client: an eval of local metrics alone never needs it.
    import openai

    async def headers_of(response: Any) -> None:
        observe(response.headers)

    key = config.key() or "not-needed"
    # The SDK's aiohttp transport (its documented choice for high concurrency): httpx's own pool
    # spends more CPU per call than the call itself once dozens of connections are open.
    http = openai.DefaultAioHttpClient(timeout=config.timeout, verify=_tls(), event_hooks={"response": [headers_of]})
    if config.provider == "azure":
        token = os.environ.get(config.bearer_token_env) if config.bearer_token_env else None
        if entra is not None:  # asked for on every request the SDK sends itself (streams, the slow path)
            auth: dict[str, Any] = {"azure_ad_token_provider": _bearer(entra)}
        else:
            auth = {"api_key": None if token else key, "azure_ad_token": token}
        return openai.AsyncAzureOpenAI(
            azure_endpoint=config.azure_endpoint or "",
            api_version=config.api_version,
            max_retries=0,
            timeout=config.timeout,
            http_client=http,
            **auth,
        )
    return openai.AsyncOpenAI(
        base_url=config.base_url,
        api_key=_bearer(entra) if entra is not None else key,
        max_retries=0,
        timeout=config.timeout,
        http_client=http,
    )


@functools.cache
def _tls() -> ssl.SSLContext:
    """One certificate store for every client in the process (the SDK's: certifi, or SSL_CERT_FILE):
    loading it costs some 50 ms of CPU, which each run would otherwise pay per model."""
    import httpx2

    return httpx2.create_ssl_context()


def responses_request(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions body as a Responses API request."""
    request: dict[str, Any] = {"model": body["model"], "input": [_response_message(m) for m in body["messages"]]}
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    if limit:
        request["max_output_tokens"] = limit
    for key in ("temperature", "top_p", "tools", "reasoning"):
        if key in body:
            request[key] = body[key]
    fmt = (body.get("response_format") or {}).get("type")
    if fmt in ("json_object", "json_schema"):
        request["text"] = {"format": body["response_format"] if fmt == "json_schema" else {"type": "json_object"}}
    return request


def _response_message(message: dict[str, Any]) -> dict[str, Any]:
    """A chat message whose content is a list of parts, with the parts the Responses API names."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    parts = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            parts.append({"type": "input_text", "text": part.get("text", "")})
        elif kind == "image_url":
            image = part.get("image_url") or {}
            url = image.get("url") if isinstance(image, dict) else image
            detail = image.get("detail", "auto") if isinstance(image, dict) else "auto"
            parts.append({"type": "input_image", "image_url": url, "detail": detail})
        else:
            parts.append(part)
    return {**message, "content": parts}


def chat_shape(reply: dict[str, Any]) -> dict[str, Any]:
    """A Responses API reply in the chat-completions shape the rest of the facade reads."""
    texts, calls, refusals = [], [], []
    for item in reply.get("output") or []:
        if item.get("type") == "message":
            texts += [part.get("text", "") for part in item.get("content") or [] if part.get("type") == "output_text"]
            refusals += [
                str(part.get("refusal") or "") for part in item.get("content") or [] if part.get("type") == "refusal"
            ]
        elif item.get("type") == "function_call":
            function = {"name": item.get("name"), "arguments": item.get("arguments", "{}")}
            calls.append({"id": item.get("call_id"), "type": "function", "function": function})
    usage = reply.get("usage") or {}
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
    if refusals:  # as chat completions says it: the content empty, the refusal beside it
        message["refusal"] = "".join(refusals)
    if calls:
        message["tool_calls"] = calls
    finish = "tool_calls" if calls else "stop"
    if (reply.get("incomplete_details") or {}).get("reason") == "content_filter":
        finish = "content_filter"
    return {
        "id": reply.get("id"),
        "model": reply.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage.get("input_tokens", 0),
            "completion_tokens": usage.get("output_tokens", 0),
            "total_tokens": usage.get("total_tokens", 0),
            "prompt_tokens_details": {"cached_tokens": (usage.get("input_tokens_details") or {}).get("cached_tokens")},
        },
    }


def _completion(response: dict[str, Any], *, cached: bool) -> Completion:
    choice = (response.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    usage = response.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    spent = Usage(
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        total_tokens=int(usage.get("total_tokens") or 0),
        cached_tokens=int(details.get("cached_tokens") or 0),
    )
    tokens = (choice.get("logprobs") or {}).get("content")
    refusal = message.get("refusal") if isinstance(message.get("refusal"), str) else None
    return Completion(
        # A model that refused (structured outputs) says why in ``refusal``, its content empty: that is
        # what it answered, as promptfoo takes it
        text=message.get("content") or refusal or "",
        refusal=refusal or None,
        model=str(response.get("model") or ""),
        usage=Usage() if cached else spent,
        finish_reason=choice.get("finish_reason"),
        tool_calls=list(message.get("tool_calls") or []),
        cached=cached,
        logprobs=[float(t["logprob"]) for t in tokens if isinstance(t, dict)] if isinstance(tokens, list) else None,
        function_call=message["function_call"] if isinstance(message.get("function_call"), dict) else None,
    )
