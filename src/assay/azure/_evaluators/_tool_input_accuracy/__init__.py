"""The peer's ``azure.ai.evaluation._evaluators._tool_input_accuracy``: ``_ToolInputAccuracyEvaluator``."""

from assay.azure.judges import _ToolInputAccuracyEvaluator

__all__ = ["_ToolInputAccuracyEvaluator"]
