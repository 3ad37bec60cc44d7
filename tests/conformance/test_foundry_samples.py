"""Microsoft's samples from the azure-ai-projects sdist, run unchanged against ``assay serve --tls``
(``tests/conformance/foundry_samples.py``). ``make conformance`` runs it; ``make test`` does not
(it downloads the sdist once, and takes minutes)."""

from __future__ import annotations

import pytest

from tests.conformance.foundry_samples import SAMPLES_PYTHON, VERSION, report, run_all

pytestmark = pytest.mark.conformance

SHARE = 0.9
"""The part of the samples not listed as needing Azure-only services that must exit 0."""


def test_microsofts_samples_run_unchanged_against_assay():
    if not SAMPLES_PYTHON.exists():
        pytest.skip(f"{SAMPLES_PYTHON} is missing: `make conformance` builds the samples' own venv")
    result = run_all()
    if result is None:
        pytest.skip(f"azure-ai-projects=={VERSION}'s sdist could not be downloaded: no package index reachable")
    outcomes, excluded = result
    written = report(outcomes, excluded)
    print(written)  # noqa: T201 - the N of M and every miss's reason, in the CI log
    passed = sum(outcome.passed for outcome in outcomes)
    assert len(outcomes) >= 60, written  # the sdist's set, not a part of it
    assert passed >= SHARE * len(outcomes), written
