"""The HTTP API: OpenAI Evals + Files, with Foundry's extensions."""

from assay.api.app import create_app

__all__ = ["create_app"]
