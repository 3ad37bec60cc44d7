"""Shared fixtures: a store per test on SQLite and, when ASSAY_TEST_DATABASE_URL is set, PostgreSQL."""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, settings
from playwright.sync_api import sync_playwright

from assay.llm import ModelConfig, ModelRegistry
from assay.store import Store
from tests.support.fixtures import start_llm_server

# Property tests generate the same cases on every run (seeded by the test), whatever the hash seed or
# test order: a fuzz case that fails does so every time, never once in a while.
settings.register_profile(
    "assay", derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("assay")

pytest_plugins = ["pytester"]  # assay's pytest plugin is tested in pytest processes of its own

PG_URL = os.environ.get("ASSAY_TEST_DATABASE_URL")
BACKENDS = ["sqlite", "postgresql"] if PG_URL else ["sqlite"]


@pytest.fixture(autouse=True)
def own_assay_home(tmp_path, monkeypatch):
    """Each test's default store is its own (``assay.evaluate()`` and the CLI write to ``$ASSAY_HOME``),
    never the checkout's ``./.assay`` or another test's."""
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "default-assay-home"))
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)


@contextlib.contextmanager
def postgres_database():
    """A PostgreSQL database of its own (its URL), dropped afterwards."""
    assert PG_URL, "set ASSAY_TEST_DATABASE_URL"
    name = f"assay_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield sa.engine.make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path):
    """A fresh store; on PostgreSQL a database of its own, dropped afterwards."""
    if request.param == "sqlite":
        store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
        yield store
        store.close()
        return
    with postgres_database() as url:
        store = Store(url)
        try:
            yield store
        finally:
            store.close()


@pytest.fixture
def own_llm():
    """A scripted provider of this test's own: a count of calls no other test's traffic can move."""
    server = start_llm_server()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def llm():
    """The scripted OpenAI-compatible server, one process for the whole session."""
    server = start_llm_server()
    yield server
    server.stop()


@pytest.fixture
def models(llm, store):
    """A registry whose model ``judge`` is served by the scripted server, cached in the test's store."""
    llm.reset()
    config = ModelConfig(name="judge", model="gpt-4.1-mini", base_url=llm.base_url, api_key="test", max_retries=4)
    return ModelRegistry([config], cache=store)


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def browser():
    """Debian's Chromium, driven by Playwright."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def ray_cluster():
    """One local Ray cluster for the whole session: starting one costs seconds, and Ray allows one per
    process. Its users (tests/ray/, the newcomer's path) share one xdist worker (``xdist_group("ray")``)."""
    ray = pytest.importorskip("ray")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # no token file written under ~/.ray
    # Loopback only: the cluster's processes bind 127.0.0.1, not the machine's address.
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=256 * 1024**2,
        _node_ip_address="127.0.0.1",
    )
    yield ray
    ray.shutdown()
