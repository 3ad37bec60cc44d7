"""``from azure.ai.evaluation._evaluators._common import EvaluatorBase``: the peer's base for
evaluators written as a class with ``async def _do_eval(self, eval_input) -> dict``; and its
``hoist_messages_to_conversation``, which makes ``messages=[...]`` a conversation."""

from assay.azure._evaluators._common._base_eval import EvaluatorBase
from assay.azure.evaluators import hoist_messages_to_conversation

__all__ = ["EvaluatorBase", "hoist_messages_to_conversation"]
