"""The Ray tests: skipped without Ray, and run by one xdist worker so that one local cluster
(``ray_cluster``, in tests/conftest.py) serves them all."""

from __future__ import annotations

import os

import pytest

ray = pytest.importorskip("ray")


def pytest_collection_modifyitems(items):
    """Under pytest-xdist the Ray tests share one worker, so one cluster serves them all."""
    for item in items:
        if "tests/ray/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.xdist_group("ray"))
