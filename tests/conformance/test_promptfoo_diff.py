"""Real promptfoo (from npm) and ``assay run`` on the same config: every assertion's verdict and
score identical (``tests/conformance/promptfoo_diff.py``). ``make conformance`` installs promptfoo
and runs it; ``make test`` does not."""

from __future__ import annotations

import pytest

from tests.conformance.promptfoo_diff import BIN, PROMPTFOO_HOME, compare, report

pytestmark = pytest.mark.conformance


def test_promptfoo_and_assay_give_every_assertion_the_same_verdict():
    if not (BIN / "promptfoo").exists():
        pytest.skip(f"promptfoo is not installed under {PROMPTFOO_HOME}: `make conformance` installs it from npm")
    compared = compare()
    written = report(compared)
    print(written)  # noqa: T201 - the N of M and each miss, in the CI log
    assert all(entry.miss is None for entry in compared), written
