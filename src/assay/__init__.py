"""assay: evaluate LLM models and agents.

The happy path:

    import assay
    result = assay.evaluate(data="data.jsonl", evaluators={"f1": "builtin.f1_score"})

Names are imported when first used, so ``import assay`` (and every ``assay`` command) starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.dataset import Dataset
    from assay.errors import AssayError, ConfigError, DataError, ItemError, UserError
    from assay.evaluation import evaluate
    from assay.evaluators import EvaluatorSpec, Metric, Score, evaluator, load_catalog
    from assay.messages import Message, normalize
    from assay.results import OutputItem, Result, RunSummary
    from assay.store import Store

WHERE = {
    "Dataset": "assay.dataset",
    "AssayError": "assay.errors",
    "ConfigError": "assay.errors",
    "DataError": "assay.errors",
    "ItemError": "assay.errors",
    "UserError": "assay.errors",
    "evaluate": "assay.evaluation",
    "EvaluatorSpec": "assay.evaluators",
    "Metric": "assay.evaluators",
    "Score": "assay.evaluators",
    "evaluator": "assay.evaluators",
    "load_catalog": "assay.evaluators",
    "Message": "assay.messages",
    "normalize": "assay.messages",
    "OutputItem": "assay.results",
    "Result": "assay.results",
    "RunSummary": "assay.results",
    "Store": "assay.store",
}


def __getattr__(name: str) -> Any:
    if name not in WHERE:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    value = getattr(importlib.import_module(WHERE[name]), name)
    globals()[name] = value  # later lookups skip this function
    return value


def load_dataset(path: str) -> Dataset:
    """A dataset from a JSONL or CSV file, streamed when read."""
    from assay.dataset import Dataset

    return Dataset.from_path(path)


__all__ = [
    "AssayError",
    "ConfigError",
    "DataError",
    "Dataset",
    "EvaluatorSpec",
    "ItemError",
    "Message",
    "Metric",
    "OutputItem",
    "Result",
    "RunSummary",
    "Score",
    "Store",
    "UserError",
    "evaluate",
    "evaluator",
    "load_catalog",
    "load_dataset",
    "normalize",
]
