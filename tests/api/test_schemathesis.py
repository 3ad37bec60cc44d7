"""A bounded schemathesis run against the server's own OpenAPI document, on SQLite and PostgreSQL:
generated requests for every operation (bodies from OpenAI's spec where it has them) must never
get a server error. Seeded (derandomized), so it finds the same cases every time."""

from __future__ import annotations

import contextlib

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from assay.api import create_app
from assay.evaluators import load_catalog
from assay.llm import ModelRegistry
from assay.store import Store
from tests.conftest import BACKENDS, postgres_database


@pytest.fixture(scope="module", params=BACKENDS)
def fuzzed_app(request, tmp_path_factory):
    with contextlib.ExitStack() as stack:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path_factory.mktemp('schemathesis') / 'assay.db'}"
        else:
            url = stack.enter_context(postgres_database())
        store = Store(url)
        stack.callback(store.close)
        yield create_app(store, catalog=lambda project: load_catalog(store, project), models=lambda: ModelRegistry())


CASES_PER_OPERATION = 8


def test_no_generated_request_gets_a_server_error(fuzzed_app, monkeypatch):
    monkeypatch.setenv("ASSAY_RATE_RUNS_PER_MINUTE", "0")
    monkeypatch.setenv("ASSAY_RATE_UPLOADS_PER_MINUTE", "0")
    api = schemathesis.openapi.from_asgi("/openapi.json", fuzzed_app)
    failures: list[str] = []
    cases = 0
    for result in api.get_all_operations():
        operation = result.ok()

        @given(operation.as_strategy())
        @settings(max_examples=CASES_PER_OPERATION, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        def call(case):
            nonlocal cases
            cases += 1
            try:  # in-process, an unhandled exception reaches us instead of a 500: both are failures
                case.validate_response(case.call(), checks=[not_a_server_error])
            except Exception as exc:  # noqa: BLE001 - every failing operation is reported, not the first
                failures.append(f"{case.method.upper()} {case.path}: {exc}"[:500])
                raise

        with contextlib.suppress(Exception):
            call()
    assert cases >= CASES_PER_OPERATION * 50  # the run covered the document, not a corner of it
    assert not failures, "\n".join(dict.fromkeys(failures))
