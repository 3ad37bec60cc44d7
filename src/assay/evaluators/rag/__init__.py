"""Retrieval evaluators that need no model."""
