"""Work the API hands to the workers: insights (``assay.api.insights``) and agent insight runs
(``assay.api.agent_insights``) are stored as jobs no runner holds (``assay.api.jobs.queue_for_workers``),
and a worker thread of ``assay serve`` or ``assay worker`` takes one whenever it has no evaluation
run to execute. Their model calls then never hold a request, the firer, or another project's
schedule; more workers take more of them at once.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from assay.api.jobs import run_job
from assay.run.runner import local_worker

if TYPE_CHECKING:
    from assay.api.context import ApiContext
    from assay.evaluators.catalog import Catalog
    from assay.llm import ModelRegistry
    from assay.store import Store
    from assay.store.jobs import JobKind

KINDS: tuple[JobKind, ...] = ("insight_run", "insight")


def for_workers(
    store: Store, catalog: Callable[[str], Catalog], models: Callable[[], ModelRegistry]
) -> Callable[[], bool]:
    """What a worker calls when it is idle: take and do one job; whether there was one."""
    from assay.api.context import ApiContext

    return partial(work_once, ApiContext(store, catalog, models))


def work_once(ctx: ApiContext) -> bool:
    """Take the oldest waiting job, do it, store how it ended; False when none waits."""
    from assay.api import agent_insights, insights

    claimed = ctx.store.claim_job(KINDS, local_worker())
    if claimed is None:
        return False
    project, kind, job = claimed
    doers = {"insight": insights.perform, "insight_run": agent_insights.analyze}
    run_job(ctx, project, kind, job["id"], partial(doers[kind], ctx, project, job))
    return True
