"""Evaluators: the protocol, the catalog, ``@evaluator`` and the built-ins."""

from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score
from assay.evaluators.catalog import Catalog, load_catalog
from assay.evaluators.decorator import evaluator

__all__ = ["Catalog", "Evaluator", "EvaluatorSpec", "Metric", "Score", "evaluator", "load_catalog"]
