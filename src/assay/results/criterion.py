"""A testing criterion as an eval gives it, before it is bound (``assay.run.criteria``): the shape
the API, eval.yaml, the importers and the engine pass between them.

One of (OpenAI's and Foundry's wire forms, and assay's own):

    {type: azure_ai_evaluator, name, evaluator_name, evaluator_version?, initialization_parameters?,
     data_mapping?, threshold?, models?, reducer?}
    {type: string_check, name, input, reference, operation}
    {type: text_similarity, name, input, reference, evaluation_metric, pass_threshold}
    {type: label_model | score_model, name, model, input: [message templates], labels?,
     passing_labels?, range?, pass_threshold?, sampling_params?}
    {type: python, name, source, pass_threshold?, image_tag?}
    {type: multi, name, graders: {key: grader}, calculate_output, pass_threshold?}

Nothing here is checked yet: binding refuses what does not fit, naming the criterion.
"""

from __future__ import annotations

from typing import Any, TypedDict, cast


class Criterion(TypedDict, total=False):
    type: str
    name: str
    id: str
    """The criterion's id on the API (``with_ids``)."""
    evaluator_name: str
    evaluator_version: str | None
    initialization_parameters: dict[str, Any]
    data_mapping: dict[str, Any]
    threshold: Any
    models: Any
    """A panel of judges (``assay.run.panels``)."""
    reducer: Any
    """How a panel's or a repeat's scores combine (``assay.run.repeats``)."""
    input: Any
    reference: Any
    operation: str
    evaluation_metric: str
    pass_threshold: Any
    model: Any
    labels: list[str]
    passing_labels: list[str]
    range: list[float]
    sampling_params: dict[str, Any]
    source: str
    image_tag: str
    time_limit: Any
    memory_mb: Any
    graders: dict[str, Any]
    calculate_output: str
    evaluation_level: str


def as_criteria(wire: list[dict[str, Any]]) -> list[Criterion]:
    """JSON criteria (a request's, a stored eval's) as what they are meant to be: binding checks them."""
    return cast(list[Criterion], wire)


def as_wire(criterion: Criterion) -> dict[str, Any]:
    """A criterion as the JSON object it is, for code that reads keys it names at run time."""
    return cast(dict[str, Any], criterion)


def as_criterion(wire: dict[str, Any]) -> Criterion:
    """One JSON criterion as what it is meant to be (``as_criteria``)."""
    return cast(Criterion, wire)
