"""Traces: OTLP ingestion, GenAI dialects and the conversion of spans into items to evaluate."""
