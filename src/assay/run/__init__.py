"""The run engine: prepare (validate), start, execute with bounded concurrency, summarise."""

from assay.run.criteria import BoundCriterion, bind_criteria
from assay.run.definition import EvalDefinition
from assay.run.engine import RunJob, RunOptions, evaluate_item, execute
from assay.run.runner import PreparedRun, RunOutcome, check_resumable, finish_run, prepare, start

__all__ = [
    "BoundCriterion",
    "EvalDefinition",
    "PreparedRun",
    "RunJob",
    "RunOptions",
    "RunOutcome",
    "bind_criteria",
    "check_resumable",
    "evaluate_item",
    "execute",
    "finish_run",
    "prepare",
    "start",
]
