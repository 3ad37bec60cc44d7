"""One local Ray cluster for the whole session: starting one costs seconds, and Ray allows one per process."""

from __future__ import annotations

import os

import pytest

ray = pytest.importorskip("ray")


@pytest.fixture(scope="session")
def ray_cluster():
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


def pytest_collection_modifyitems(items):
    """Under pytest-xdist the Ray tests share one worker, so one cluster serves them all."""
    for item in items:
        if "tests/ray/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.xdist_group("ray"))
