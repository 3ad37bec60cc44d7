"""Datasets: readers (JSONL streamed, CSV, inline), item_schema checks, special row shapes."""

from assay.dataset.readers import Row, read_csv, read_inline, read_jsonl
from assay.dataset.rows import OptimizerTask, SimulationSeed, row_kind
from assay.dataset.schema import ItemSchema
from assay.dataset.source import Dataset, ScanReport, scan

__all__ = [
    "Dataset",
    "ItemSchema",
    "OptimizerTask",
    "Row",
    "ScanReport",
    "SimulationSeed",
    "read_csv",
    "read_inline",
    "read_jsonl",
    "row_kind",
    "scan",
]
