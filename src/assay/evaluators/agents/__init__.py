"""Agent evaluators that need no model."""
