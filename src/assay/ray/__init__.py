"""``--executor ray``: one run's items spread over Ray actors, on one machine or a cluster.

The driver (the ``assay`` process) reads the dataset, hands items to actors in batches with a
bounded number in flight, and writes every result itself, keyed by item: an actor that dies is
restarted by Ray and its batch is redone, and a result that arrives twice is stored once. Actors
bind the same criteria and target as the driver from a ``RunBinding`` and share one limiter actor
for the models' request and token budgets. ``pip install 'assay[ray]'`` brings Ray in.
"""

from __future__ import annotations

from typing import Any

from assay.errors import ConfigError

INSTALL_HINT = "pip install 'assay[ray]'"


def require_ray() -> Any:
    """The ``ray`` module, or a ConfigError that says how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError("--executor ray needs Ray, which is not installed", hint=INSTALL_HINT) from None
    return ray
