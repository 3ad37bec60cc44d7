"""The HTTP API: OpenAI Evals + Files, with Foundry's extensions.

``create_app`` is imported on first use: the CLI imports small parts of this package (``announce``,
to print a running server's link after a run) without loading FastAPI and every route.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.api.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from assay.api.app import create_app

        return create_app
    raise AttributeError(f"module 'assay.api' has no attribute {name!r}")
