"""``create_app(store, ...)``: the OpenAI Evals and Files API on FastAPI, under every prefix the
SDKs use: ``/v1``, ``/openai/v1``, ``/api/projects/{project}/openai/v1`` and ``/openai``; beside
it, the capture pass-through (``/chat/completions``, ``/responses``) under the same prefixes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from assay.api import (
    errors,
    openapi,
    routes_agents,
    routes_alerts,
    routes_blobs,
    routes_capture,
    routes_connections,
    routes_conversations,
    routes_datasets,
    routes_deployments,
    routes_evals,
    routes_evaluators,
    routes_files,
    routes_generation_jobs,
    routes_graders,
    routes_insight_monitors,
    routes_insights,
    routes_optimize,
    routes_redteams,
    routes_rules,
    routes_runs,
    routes_schedules,
    routes_taxonomies,
    routes_traces,
)
from assay.api.context import ApiContext
from assay.api.guard import BrowserGuard
from assay.api.limits import BodyLimit
from assay.api.readcache import CachedReads
from assay.api.readonly import ReadOnly
from assay.api.responses import WireJSON
from assay.api.ui import access, alerts, insights_pages, pages, reviews, traces
from assay.evaluators.catalog import Catalog, load_catalog
from assay.llm import ModelRegistry
from assay.store import Store

PREFIXES = ("/v1", "/openai/v1", "/api/projects/{project}/openai/v1", "/openai")


def create_app(
    store: Store,
    *,
    catalog: Callable[[str], Catalog] | None = None,
    models: Callable[[], ModelRegistry] | None = None,
    read_only: bool = False,
) -> FastAPI:
    """``catalog(project)`` gives the evaluators a project can use (built-ins and its own custom ones);
    ``read_only`` refuses every request but reads (``assay view``)."""
    if models is None:
        shared = ModelRegistry()  # one registry, so pass-through calls reuse their clients
        models = lambda: shared  # noqa: E731
    registry = models

    @asynccontextmanager
    async def lifespan(served: FastAPI) -> AsyncIterator[None]:
        yield
        served.state.assay.close()
        await registry().aclose()  # type: ignore[no-untyped-call]  # the pass-through's model clients belong to the server's event loop

    app = FastAPI(
        title="assay",
        description="OpenAI Evals API for assay",
        docs_url="/docs",
        redoc_url=None,
        default_response_class=WireJSON,
        lifespan=lifespan,
    )
    app.state.assay = ApiContext(store, catalog or (lambda project: load_catalog(store, project)), models)
    app.add_middleware(CachedReads, cache=app.state.assay.reads)  # innermost: added first
    errors.install(app)
    openapi.install(app)
    app.add_middleware(BodyLimit)
    access.install(app)
    if read_only:
        app.add_middleware(ReadOnly)
    app.add_middleware(BrowserGuard, keys_exist=app.state.assay.keys_exist)  # outermost: before any route or body

    for prefix in PREFIXES:
        routers = (
            routes_files,
            routes_evals,
            routes_runs,
            routes_evaluators,
            routes_capture,
            routes_conversations,
            routes_graders,
        )
        for router in (module.router for module in routers):
            app.include_router(router, prefix=prefix)
    # Foundry's project REST lives beside the OpenAI-compatible paths, not under them.
    app.include_router(routes_evaluators.router, prefix="/api/projects/{project}")
    app.include_router(routes_datasets.router, prefix="/api/projects/{project}")
    app.include_router(routes_connections.router, prefix="/api/projects/{project}")
    app.include_router(routes_deployments.router, prefix="/api/projects/{project}")
    app.include_router(routes_taxonomies.router, prefix="/api/projects/{project}")
    app.include_router(routes_agents.router, prefix="/api/projects/{project}")
    app.include_router(routes_redteams.router, prefix="/api/projects/{project}")
    app.include_router(routes_optimize.router, prefix="/api/projects/{project}")
    app.include_router(routes_rules.router, prefix="/api/projects/{project}")
    app.include_router(routes_schedules.router, prefix="/api/projects/{project}")
    app.include_router(routes_alerts.router, prefix="/api/projects/{project}")
    app.include_router(routes_insights.router, prefix="/api/projects/{project}")
    app.include_router(routes_generation_jobs.router, prefix="/api/projects/{project}")
    app.include_router(routes_insight_monitors.router, prefix="/api/projects/{project}")
    app.include_router(routes_blobs.router)  # where a dataset upload's SAS URL points
    app.include_router(routes_traces.router)  # OTLP's own paths, /v1/traces and /v1/logs, beside the OpenAI ones
    app.include_router(pages.router)
    app.include_router(traces.router)
    app.include_router(reviews.router)
    app.include_router(insights_pages.router)
    app.include_router(alerts.router)
    return app
