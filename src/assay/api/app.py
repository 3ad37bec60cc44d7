"""``create_app(store, ...)``: the OpenAI Evals and Files API on FastAPI, under every prefix the
SDKs use: ``/v1``, ``/openai/v1``, ``/api/projects/{project}/openai/v1`` and ``/openai``."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from assay.api import errors, routes_datasets, routes_evals, routes_evaluators, routes_files, routes_runs
from assay.api.context import ApiContext
from assay.evaluators.catalog import Catalog, load_catalog
from assay.llm import ModelRegistry
from assay.report import ui
from assay.store import Store

PREFIXES = ("/v1", "/openai/v1", "/api/projects/{project}/openai/v1", "/openai")


def create_app(
    store: Store, *, catalog: Callable[[], Catalog] | None = None, models: Callable[[], ModelRegistry] | None = None
) -> FastAPI:
    app = FastAPI(title="assay", description="OpenAI Evals API for assay", docs_url="/docs", redoc_url=None)
    app.state.assay = ApiContext(store, catalog or (lambda: load_catalog(store)), models or ModelRegistry)
    errors.install(app)
    for prefix in PREFIXES:
        for router in (routes_files.router, routes_evals.router, routes_runs.router, routes_evaluators.router):
            app.include_router(router, prefix=prefix)
    # Foundry's project REST lives beside the OpenAI-compatible paths, not under them.
    app.include_router(routes_evaluators.router, prefix="/api/projects/{project}")
    app.include_router(routes_datasets.router, prefix="/api/projects/{project}")
    app.include_router(ui.router)
    return app
