"""``from azure.ai.evaluation._evaluators._task_navigation_efficiency import ...``, where the peer keeps it."""

from assay.azure.agents import _TaskNavigationEfficiencyEvaluator, _TaskNavigationEfficiencyMatchingMode

__all__ = ["_TaskNavigationEfficiencyEvaluator", "_TaskNavigationEfficiencyMatchingMode"]
