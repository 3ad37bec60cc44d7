"""A real assay server (uvicorn on a free port, workers in threads) for the openai SDK to call."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pytest
from openai import OpenAI

from assay.api import create_app
from assay.api.background import for_workers
from assay.evaluators import load_catalog
from assay.run.worker import start_workers
from tests.support.servers import uvicorn_in_thread


@dataclass
class Served:
    url: str
    store: object
    app_state: object = None
    """The server's ApiContext, for tests that change its limits."""
    clients: list[OpenAI] = field(default_factory=list)

    def client(self, key: str = "anonymous", prefix: str = "/v1") -> OpenAI:
        """An SDK client for this server, closed when the test ends (no socket left to the GC)."""
        client = OpenAI(base_url=f"{self.url}{prefix}", api_key=key, max_retries=0)
        self.clients.append(client)
        return client


@pytest.fixture
def served(store, models):
    app = create_app(store, catalog=lambda project: load_catalog(store, project), models=lambda: models)
    with uvicorn_in_thread(app) as url:
        catalog = lambda project: load_catalog(store, project)  # noqa: E731
        stop, workers = start_workers(
            store, catalog, lambda: models, 2, background=for_workers(store, catalog, lambda: models)
        )
        served = Served(url, store, app.state.assay)
        yield served
        for client in served.clients:
            client.close()
        stop.set()
        for worker in workers:
            worker.join(timeout=10)


def wait_for(client: OpenAI, eval_id: str, run_id: str, seconds: float = 60):
    """The seed documents' polling loop."""
    deadline = time.monotonic() + seconds
    run = client.evals.runs.retrieve(run_id=run_id, eval_id=eval_id)
    while run.status not in ("completed", "failed", "canceled") and time.monotonic() < deadline:
        time.sleep(0.1)
        run = client.evals.runs.retrieve(run_id=run_id, eval_id=eval_id)
    return run
