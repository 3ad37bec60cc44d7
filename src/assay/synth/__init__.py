"""Synthetic test data: queries a model writes, deduplicated, saved as a dataset and evaluated."""

from assay.synth.queries import Brief, Generated, generate_queries, generate_scenarios

__all__ = ["Brief", "Generated", "generate_queries", "generate_scenarios"]
