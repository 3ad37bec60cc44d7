"""The peer's ``azure.ai.evaluation._evaluators._tool_selection``: ``_ToolSelectionEvaluator``."""

from assay.azure.judges import _ToolSelectionEvaluator

__all__ = ["_ToolSelectionEvaluator"]
