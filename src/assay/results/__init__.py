"""The typed records of a run: results, output items and summaries."""

from assay.results.records import (
    CriterionSummary,
    ModelUsage,
    OutputItem,
    Result,
    ResultCounts,
    RunSummary,
)

__all__ = ["CriterionSummary", "ModelUsage", "OutputItem", "Result", "ResultCounts", "RunSummary"]
