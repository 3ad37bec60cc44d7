"""The peer's ``azure.ai.evaluation._evaluators._task_completion``: ``_TaskCompletionEvaluator``."""

from assay.azure.judges import _TaskCompletionEvaluator

__all__ = ["_TaskCompletionEvaluator"]
