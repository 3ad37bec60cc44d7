"""assay: evaluate LLM models and agents.

The happy path:

    import assay
    result = assay.evaluate(data="data.jsonl", evaluators={"f1": "builtin.f1_score"})
"""

from assay.dataset import Dataset
from assay.errors import AssayError, ConfigError, DataError, ItemError, UserError
from assay.evaluate import evaluate
from assay.evaluators import EvaluatorSpec, Metric, Score, evaluator, load_catalog
from assay.messages import Message, normalize
from assay.results import OutputItem, Result, RunSummary
from assay.store import Store


def load_dataset(path: str) -> Dataset:
    """A dataset from a JSONL or CSV file, streamed when read."""
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
