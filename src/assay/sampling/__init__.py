"""Choosing which traces to evaluate: random, or smart (dedup → hard filters → MinHash → farthest-first)."""

from assay.sampling.pipeline import Candidate, SampleReport, random_sample, smart_sample

__all__ = ["Candidate", "SampleReport", "random_sample", "smart_sample"]
