"""Registers every built-in evaluator; wired as the ``assay`` entry point ``builtins``."""

from __future__ import annotations

from assay.evaluators import judges, nlp, promptfoo
from assay.evaluators.agents import task_navigation
from assay.evaluators.catalog import Catalog
from assay.evaluators.graders import model_graders, multi, python_grader, string_check, text_similarity
from assay.evaluators.rag import document_retrieval


def register(catalog: Catalog) -> None:
    nlp.register(catalog)
    judges.register(catalog)
    catalog.add(task_navigation.SPEC)
    catalog.add(document_retrieval.SPEC)
    catalog.add(string_check.SPEC)
    catalog.add(text_similarity.SPEC)
    catalog.add(model_graders.LABEL_MODEL)
    catalog.add(model_graders.SCORE_MODEL)
    catalog.add(python_grader.SPEC)
    catalog.add(multi.SPEC)
    catalog.add(promptfoo.SPEC)
