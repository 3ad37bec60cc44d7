"""Named models for a process: criteria, targets and simulated users look models up here."""

from __future__ import annotations

import asyncio
import copy
import difflib
import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from assay.errors import ConfigError, ModelUnreachable
from assay.llm.breaker import unreachable
from assay.llm.cache import CallCache
from assay.llm.config import ModelConfig, from_environment
from assay.llm.limits import Budgets, local_budget
from assay.llm.model import CacheMode, Model

log = logging.getLogger(__name__)
UNREACHABLE_HINT = "start the model's server, or correct its base_url or key"


MAX_UNCONFIGURED = 256
"""Model names from requests that no models file configures, each a client kept for reuse: bounded,
whatever names callers invent."""

DEPLOYMENT_PLACEHOLDER = re.compile(r"\{\{\s*\w+\s*\}\}")
"""A model named by a placeholder, as Foundry's samples write ``{{aoai_deployment_and_model}}``."""


class ModelRegistry:
    """Configured models by name; a name nobody configured is served by the environment's endpoint."""

    def __init__(
        self,
        configs: Iterable[ModelConfig] = (),
        *,
        cache: CallCache | None = None,
        cache_mode: CacheMode = "use",
        default: str | None = None,
        agents: Iterable[Any] = (),
        budgets: Budgets = local_budget,
        tool_sets: Mapping[str, list[dict[str, Any]]] | None = None,
    ) -> None:
        self.configs = {config.name: config for config in configs}
        self.budgets = budgets
        """Where the models' request and token budgets live (a Ray limiter actor shares them across processes)."""
        self.cache = cache
        self.cache_mode = cache_mode
        self.default = default or (next(iter(self.configs)) if len(self.configs) == 1 else None)
        self._models: dict[str, Model] = {}
        self._used: dict[str, Model] = {}
        """The models looked up through this registry (a run's own view: ``for_run``)."""
        self.agents = list(agents)
        """Agents by name and version (``assay.targets.agents.AgentConfig``), for agent targets."""
        self.tool_sets = dict(tool_sets or {})
        """Tool sets by name, as the operator configured them (``tools:`` in the ``--models`` file):
        the only tools a request over the API may give a model target."""

    def get(self, name: str | None) -> Model:
        if name and DEPLOYMENT_PLACEHOLDER.fullmatch(name):
            name = None  # Foundry fills {{aoai_deployment_and_model}} with the project's default deployment
        name = name or self.default or "gpt-4.1-mini"
        if name not in self._models:
            unconfigured = len(self._models.keys() - self.configs.keys())
            if name not in self.configs and unconfigured >= MAX_UNCONFIGURED:
                raise ConfigError(
                    f"model {name[:100]!r}: this process already serves {MAX_UNCONFIGURED} model names its "
                    "models file does not configure",
                    hint="name a model the models file configures",
                )
            config = self.configs.get(name) or from_environment(name)
            model = Model(config, cache=self.cache, cache_mode=self.cache_mode, budgets=self.budgets)
            if name not in self.configs:  # the environment's endpoint serves it: was a configured name meant?
                model.near = next(iter(difflib.get_close_matches(name, list(self.configs), n=1, cutoff=0.75)), None)
            self._models[name] = model
        self._used[name] = self._models[name]
        return self._models[name]

    def serve(self, name: str, model: Model) -> None:
        """Answer ``name`` with ``model``, made elsewhere (a stand-in for the model's calls)."""
        self._models[name] = model

    def embeddings(self) -> Model | None:
        """The embeddings model (a ``models:`` entry with ``api: embeddings``), if one is configured."""
        return self._first_of("embeddings")

    def moderation(self) -> Model | None:
        """The moderation model (a ``models:`` entry with ``api: moderation``), if one is configured."""
        return self._first_of("moderation")

    def _first_of(self, api: str) -> Model | None:
        name = next((c.name for c in self.configs.values() if c.api == api), None)
        return None if name is None else self.get(name)

    def for_run(self) -> ModelRegistry:
        """The same models, counting which of them one run looks up (a server's registry serves many runs)."""
        view = copy.copy(self)
        view._used = {}
        return view

    def used(self) -> list[Model]:
        return list(self._used.values())

    async def check_reachable(self) -> None:
        """Before a run: connect to the endpoint of every model it uses; raise when one is down.

        A model that answers only from the cache (``replay``) needs no endpoint. A reachable
        endpoint clears its model's breaker, so a server's next run tries again."""
        live = [model for model in self.used() if model.cache_mode != "replay"]
        reasons = await asyncio.gather(*(unreachable(model.config) for model in live))
        for model, reason in zip(live, reasons, strict=True):
            if reason is not None:
                raise ModelUnreachable(f"{model.where} is unreachable: {reason}", hint=UNREACHABLE_HINT)
            model.breaker.reset()
        for model in live:
            await credential_check(model)

    def tripped(self) -> Model | None:
        """A model this run uses whose endpoint went down during it."""
        return next((model for model in self.used() if model.breaker.tripped is not None), None)

    def with_cache_mode(self, mode: CacheMode) -> ModelRegistry:
        """The same models and cache under another mode, for one run (models of its own, so the
        shared registry's mode is untouched)."""
        if mode == self.cache_mode:
            return self
        registry = ModelRegistry(
            self.configs.values(),
            cache=self.cache,
            cache_mode=mode,
            default=self.default,
            agents=self.agents,
            budgets=self.budgets,
            tool_sets=self.tool_sets,
        )
        return registry

    def models(self) -> list[Model]:
        return list(self._models.values())

    async def aclose(self) -> None:
        for model in self._models.values():
            await model.aclose()


async def credential_check(model: Model) -> str:
    """How the model's calls authenticate; for Entra ID, a token is obtained now (which credential
    answered, or why none did: ``TokenUnavailable``). Never the key or the token itself."""
    config = model.config
    if config.uses_entra:
        from assay.llm.entra import TokenUnavailable, token_source

        try:
            token = await token_source(config).token()
        except TokenUnavailable as exc:
            raise TokenUnavailable(f"{model.where}: {exc.message}", hint=exc.hint) from None
        described = f"{token.describe()} (scope {config.token_scope})"
        log.info("%s: %s", model.where, described)
        return described
    if config.bearer_token_env:
        state = "set" if os.environ.get(config.bearer_token_env) else "not set"
        return f"bearer token from ${config.bearer_token_env} ({state}; not refreshed)"
    if config.key():
        return "api key" + (f" from ${config.api_key_env}" if config.api_key_env and not config.api_key else "")
    return "no credential (a local server that needs none)"
