"""LLM-judge evaluators: quality, RAG, agents, tools and safety."""

from __future__ import annotations

from assay.evaluators.catalog import Catalog
from assay.evaluators.judges.agents import AGENTS
from assay.evaluators.judges.composite import COMPOSITES, composite_spec
from assay.evaluators.judges.judge import JudgeDefinition, judge_spec
from assay.evaluators.judges.quality import QUALITY
from assay.evaluators.judges.safety import CONTENT_SAFETY, FLAGS, HARMS

DEFINITIONS: tuple[JudgeDefinition, ...] = (*QUALITY, *AGENTS, *HARMS, *FLAGS)


def register(catalog: Catalog) -> None:
    for definition in DEFINITIONS:
        catalog.add(judge_spec(definition))
    catalog.add(CONTENT_SAFETY)
    for composite in COMPOSITES:
        catalog.add(composite_spec(composite))
