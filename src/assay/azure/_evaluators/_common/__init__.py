"""``from azure.ai.evaluation._evaluators._common import EvaluatorBase``: the peer's base for
evaluators written as a class with ``async def _do_eval(self, eval_input) -> dict``."""

from assay.azure._evaluators._common._base_eval import EvaluatorBase

__all__ = ["EvaluatorBase"]
