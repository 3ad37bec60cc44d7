"""Testing criteria: evaluators bound into an eval, checked before any item is evaluated.

A criterion in its wire form is one of:

    {type: azure_ai_evaluator, name, evaluator_name, evaluator_version?, initialization_parameters?,
     data_mapping?, threshold?}
    {type: string_check, name, input, reference, operation}
    {type: text_similarity, name, input, reference, evaluation_metric, pass_threshold}
    {type: label_model | score_model, name, model, input: [message templates], ...}
    {type: python, name, source, pass_threshold?}
    {type: multi, name, graders: {key: grader}, calculate_output, pass_threshold?}

``bind_criteria`` turns them into ``BoundCriterion`` objects or raises ``ConfigError`` naming the
criterion and the fix: unknown evaluators, bad parameters, unsupported levels, impossible mappings.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import typing
from collections.abc import Awaitable
from dataclasses import dataclass
from types import CoroutineType
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from assay.errors import ConfigError, Filtered, ItemError, MissingInput, Undetermined
from assay.evaluators.base import (
    EvaluationLevel,
    Evaluator,
    EvaluatorSpec,
    Score,
    computation_of,
    is_computes_only,
    is_judging_filtered,
)
from assay.evaluators.catalog import Catalog
from assay.evaluators.graders.formula import Formula
from assay.evaluators.graders.multi import multi_grader
from assay.llm import ModelRegistry
from assay.mapping import DataMapping, default_mapping
from assay.mapping.templates import TemplatePath
from assay.messages import MessageFormatError, conversation_context, normalize, split_turn, to_dicts
from assay.results import Result
from assay.results.criterion import Criterion, as_criteria, as_wire
from assay.results.records import ResultStatus
from assay.run.panels import check_panel, panel
from assay.run.repeats import check_reducer, repeated
from assay.store.item_rows import ResultForm, Verdict
from assay.store.tables import CRITERION_NAME_LIMIT
from assay.store.values import UNSTORABLE
from assay.targets.tools.workspace import run_in_workspace

GRADER_FIELDS = {
    "string_check": ("operation",),
    "text_similarity": ("evaluation_metric", "pass_threshold"),
    "label_model": ("model", "labels", "passing_labels"),
    "score_model": ("model", "range", "pass_threshold", "sampling_params"),
    "python": ("source", "pass_threshold", "image_tag", "time_limit", "memory_mb"),
}
MODEL_GRADERS = {"label_model", "score_model"}
# Parameters any criterion may carry that are not the evaluator factory's business.
GENERIC_PARAMETERS = {"threshold", "deployment_name", "model", "evaluation_level", "is_reasoning_model"}
INJECTED = {"model", "evaluation_level", "embeddings", "moderation", "workspace_agent"}
T = TypeVar("T")
FROM_MESSAGES = ("query", "response", "context")
"""Inputs a criterion given only ``messages`` still has: the turn split out of the conversation,
and the context it holds (system and developer messages, tool results)."""


@dataclass
class BoundCriterion:
    name: str
    type: str
    spec: EvaluatorSpec
    evaluator: Evaluator
    mapping: DataMapping
    threshold: float | None
    threshold_overridden: bool
    level: EvaluationLevel
    repeats: int = 1
    """How many times the evaluator scores each item (judges under ``repeats``)."""

    @functools.cached_property
    def metric(self) -> str:
        return self.spec.primary.name

    @functools.cached_property
    def _required(self) -> tuple[str, ...]:
        return tuple(self.spec.required_inputs)

    @functools.cached_property
    def _direction(self) -> str:
        return self.spec.primary.desirable_direction

    @property
    def computes_only(self) -> bool:
        """Whether judging an item is pure computation (``assay.evaluators.base.computes_only``)."""
        return is_computes_only(self.evaluator)

    def applies(self, item: dict[str, Any]) -> bool:
        """Whether this criterion judges ``item`` (a red-team risk criterion judges only attacks on its risk)."""
        return True

    def annotate(self, result: Result, item: dict[str, Any]) -> Result:
        """The result as stored; a red-team criterion adds what the attack was."""
        return result

    async def evaluate_all(self, item: dict[str, Any], sample: dict[str, Any] | None) -> list[Result]:
        """This criterion's results for ``item``: one, except for criteria that judge several
        checks an item lists (task-level criteria)."""
        return [await self.evaluate(item, sample)]

    @property
    def judges_filtered(self) -> bool:
        """Whether a sample the provider's filter stopped is judged rather than failed
        (``assay.evaluators.base.judges_filtered``)."""
        return is_judging_filtered(self.evaluator)

    def failed_for(self, item: dict[str, Any], error: ItemError) -> list[Result]:
        """The results when the item has no sample to judge (its target failed)."""
        return [self.failed(error)]

    async def evaluate(self, item: dict[str, Any], sample: dict[str, Any] | None) -> Result:
        try:
            inputs = self._inputs(item, sample)
            score = await self.evaluator(inputs)
        except Exception as exc:  # noqa: BLE001 - one evaluator failing on one item is data, not a crash
            return self._failure(exc)
        return self._result(score)

    def judge_block(
        self, items: list[dict[str, Any]], samples: list[dict[str, Any] | None]
    ) -> list[list[Result | Verdict] | None]:
        """Each item's results (``evaluate_all``, annotated; none where the criterion does not apply),
        for a criterion that only computes: the block's inputs, then its scores, then its results, a
        stage over every item before the next, so that each stage's code stays in the processor's
        caches (judged an item at a time, a run's code between evaluating and storing is too much for
        them). A plain result (``ResultForm``) is given as its ``Verdict``, to be encoded as it is.
        None for an item whose evaluation waited after all: the caller judges it the usual way."""
        if type(self).evaluate_all is not BoundCriterion.evaluate_all:  # a criterion of several results
            return [self._judged_now(item, sample) for item, sample in zip(items, samples, strict=True)]
        judged: list[list[Result | Verdict] | None] = [[] for _ in items]
        given: list[tuple[int, dict[str, Any]]] = []
        every = type(self).applies is BoundCriterion.applies  # applies to every item (most criteria)
        for index, (item, sample) in enumerate(zip(items, samples, strict=True)):
            if every or self.applies(item):
                try:
                    given.append((index, self._inputs(item, sample)))
                except Exception as exc:  # noqa: BLE001 - as in evaluate
                    judged[index] = [self.annotate(self._failure(exc), item)]
        # A plain function is called as it is, with no coroutine per item; a coroutine is made and driven
        # at once, so none is ever left unawaited (Ctrl-C inside one ends only that one).
        compute = computation_of(self.evaluator)
        scores: list[tuple[int, Score]] = []
        for index, inputs in given:
            try:
                scores.append((index, compute(inputs) if compute is not None else _finished(self.evaluator(inputs))))
            except _Waited:
                judged[index] = None
            except Exception as exc:  # noqa: BLE001 - as in evaluate
                judged[index] = [self.annotate(self._failure(exc), items[index])]
        form = self._plain_form
        for index, score in scores:
            verdict = None if form is None else self._verdict(form, score)
            judged[index] = [verdict if verdict is not None else self.annotate(self._result(score), items[index])]
        return judged

    @functools.cached_property
    def _plain_form(self) -> ResultForm | None:
        """How this criterion's plain results are stored; None where a result is more than its score
        and verdict (a red-team criterion annotates each) or has no pass mark to give a verdict."""
        threshold = self.threshold
        if type(self).annotate is not BoundCriterion.annotate or type(threshold) is not float:
            return None
        return ResultForm.of(self.type, self.name, self.metric, threshold)

    def _verdict(self, form: ResultForm, score: Score) -> Verdict | None:
        """``score`` as a plain result (what ``_result`` would make of it, ``Result.checked``), or None."""
        value = score.value
        if (
            type(value) is not float
            or value - value != 0.0  # NaN or infinite: stored tagged
            or score.reason is not None
            or score.label is not None
            or score.properties
            or score.skipped
        ):
            return None
        passed = self._passed(value, score.passed)
        return (form, value, passed) if type(passed) is bool else None

    def _passed(self, value: float, given: bool | None) -> bool | None:
        """The verdict on a score: the evaluator's own, unless the criterion set its pass mark; else
        the pass mark's; None where there is neither (a python grader without ``pass_threshold``)."""
        if given is not None and not self.threshold_overridden:
            return given
        threshold = self.threshold
        return None if threshold is None else _meets(value, threshold, self._direction)

    def _judged_now(self, item: dict[str, Any], sample: dict[str, Any] | None) -> list[Result | Verdict] | None:
        if not self.applies(item):
            return []
        try:
            return [self.annotate(result, item) for result in _finished(self.evaluate_all(item, sample))]
        except _Waited:
            return None

    def _inputs(self, item: dict[str, Any], sample: dict[str, Any] | None) -> dict[str, Any]:
        inputs = self.mapping.resolve(item, sample)
        if self.level == "turn" and "messages" in inputs:
            wanted = set(self.spec.inputs)
            split = not ({"query", "response"} & inputs.keys()) and "messages" not in wanted
            if split and {"query", "response"} & wanted:
                inputs.update(_split_messages(inputs["messages"]))
            if "context" in wanted and inputs.get("context") is None:
                inputs["context"] = _conversation_context(inputs["messages"])  # what the turn's claims rest on
        for name in self._required:
            if inputs.get(name) is None:
                break
        else:  # every input it needs is there (a hot path: once per item and criterion)
            return inputs
        # A conversation stands in for query and response (the evaluator splits or serialises it) and,
        # judged whole, for its context too.
        if inputs.get("messages") is None:
            missing = [name for name in self._required if inputs.get(name) is None]
        else:
            missing = [name for name in self._required if inputs.get(name) is None and name not in FROM_MESSAGES]
        if "context" in missing and isinstance(inputs.get("response"), list):
            # An agent's answer holds its own context: what its tools returned (a file search's passages)
            inputs["context"] = answer_context(inputs.get("query"), inputs["response"])
            if inputs["context"] is not None:
                missing.remove("context")
            elif missing == ["context"]:
                raise MissingInput(
                    "input 'context' is missing, and the response holds no tool results to take it from: "
                    "map it in data_mapping"
                )
        if missing:
            have = ", ".join(sorted(item)) or "no fields"
            raise MissingInput(f"input {missing[0]!r} is missing: map it in data_mapping (the item has {have})")
        return inputs

    def _result(self, score: Score) -> Result:
        properties = dict(score.properties)
        if score.label is not None:
            properties.setdefault("label", score.label)
        if score.skipped or score.value is None:
            reason = score.reason or "Not applicable"
            return Result(**self._identity(), status="skipped", reason=reason, properties=properties)
        threshold = self.threshold
        passed = self._passed(score.value, score.passed)
        if passed is not None and _already_typed(score, passed, properties):
            return Result.checked(
                self.type, self.name, self.metric, score.value, passed, threshold, score.reason, properties
            )
        return Result(
            **self._identity(),
            score=score.value,
            passed=passed,
            label=None if passed is None else "pass" if passed else "fail",
            reason=score.reason,
            properties=properties,
        )

    def _failure(self, exc: Exception) -> Result:
        if isinstance(exc, ItemError):
            return self._error(str(exc), exc.code, exc.details)
        return self._error(f"{type(exc).__name__}: {exc}", "evaluator_error")

    def failed(self, error: ItemError) -> Result:
        return self._error(str(error), error.code, error.details)

    def _identity(self) -> dict[str, Any]:
        """What every result of this criterion says of it."""
        return {"type": self.type, "name": self.name, "metric": self.metric, "threshold": self.threshold}

    def _error(self, message: str, code: str, details: dict[str, Any] | None = None) -> Result:
        base = self._identity()
        if code in (Filtered.code, Undetermined.code):  # outcomes of their own: no verdict, and no failure
            status: ResultStatus = "filtered" if code == Filtered.code else "undetermined"
            return Result(**base, status=status, reason=message, properties=dict(details or {}))
        properties = {**(details or {}), "error": {"code": code, "message": message}}
        return Result(**base, status="error", reason=message, properties=properties)


class _Waited(Exception):
    """A criterion that only computes waited after all (``_finished``)."""


def _finished(evaluation: Awaitable[T]) -> T:
    """The value of a coroutine that should not wait, driven to its end here; ``_Waited``, the
    coroutine closed, if it did wait (or is some other awaitable)."""
    if type(evaluation) is not CoroutineType:
        raise _Waited
    try:
        evaluation.send(None)
    except StopIteration as finished:
        value: T = finished.value
        return value
    evaluation.close()
    raise _Waited


def _already_typed(score: Score, passed: Any, properties: dict[str, Any]) -> bool:
    """Whether a verdict's values are already what validating its result would make of them."""
    return (
        type(score.value) is float
        and type(passed) is bool
        and (score.reason is None or type(score.reason) is str)
        and (not properties or all(type(key) is str for key in properties))
    )


def _threshold(
    spec: EvaluatorSpec, criterion: Criterion, params: dict[str, Any], given: Any, label: str
) -> float | None:
    """The criterion's pass mark: given, or a grader's ``pass_threshold``, or the evaluator's default."""
    threshold = spec.primary.threshold if given is None else _number(given, label)
    graded = criterion.get("type") in ("text_similarity", "score_model") or spec.takes_whole_item
    if graded and params.get("pass_threshold") is not None:
        threshold = float(params["pass_threshold"])
    return threshold


def _meets(value: float, threshold: float, direction: str) -> bool:
    return value <= threshold if direction == "decrease" else value >= threshold


def answer_context(query: Any, response: list[Any]) -> str | None:
    """What an agent's answer (``response`` as its messages, after ``query``) rests on: its tools'
    results and the instructions it was given; None when it holds neither."""
    return _conversation_context([*query, *response] if isinstance(query, list) else response)


def _conversation_context(value: Any) -> str | None:
    try:
        return conversation_context(normalize(value, where="messages"))
    except MessageFormatError as exc:
        raise ItemError(str(exc)) from None


def _split_messages(value: Any) -> dict[str, Any]:
    try:
        query, response = split_turn(normalize(value, where="messages"))
    except MessageFormatError as exc:
        raise ItemError(str(exc)) from None
    return {"query": to_dicts(query), "response": to_dicts(response)}


def bind_criteria(
    criteria: list[Criterion],
    catalog: Catalog,
    *,
    item_fields: set[str] | None,
    has_sample: bool = False,
    level: EvaluationLevel = "turn",
    models: ModelRegistry | None = None,
    any_level: bool = False,
    repeats: int = 1,
    list_fields: frozenset[str] = frozenset(),
) -> list[BoundCriterion]:
    """``any_level``: the level is not known yet (an eval is created; its runs choose): each
    criterion is checked at ``level`` if it supports it, else at a level it does support.
    ``repeats``: judges (evaluators that take a seed) are asked that many times per item.
    ``list_fields``: item fields that hold lists (or may: the schema does not say); a response
    mapped from one is an agent's answer, which holds its own context (``answer_context``)."""
    if not criteria:
        raise ConfigError("the eval has no testing criteria", hint="add at least one evaluator")
    bound: list[BoundCriterion] = []
    for index, criterion in enumerate(criteria):
        where = f"testing_criteria[{index}]"
        if not isinstance(criterion, dict):
            raise ConfigError(f"{where}: expected an object, got {type(criterion).__name__}")
        try:
            one = _bind_one(
                criterion,
                catalog,
                where,
                Binding(item_fields, has_sample, level, models, any_level, repeats, list_fields=list_fields),
            )
        except ConfigError as exc:
            exc.criterion_index = index
            raise
        if any(other.name == one.name for other in bound):
            raise ConfigError(f"{where}: the name {one.name!r} is used twice", hint="give each criterion its own name")
        bound.append(one)
    return bound


@dataclass
class Binding:
    """What every criterion of an eval is bound against."""

    item_fields: set[str] | None
    has_sample: bool
    level: EvaluationLevel
    models: ModelRegistry | None
    any_level: bool = False
    repeats: int = 1
    in_multi: bool = False
    """Binding a ``multi`` grader's sub-grader: OpenAI's grader types there carry no ``pass_threshold``."""
    list_fields: frozenset[str] = frozenset()


def _bind_one(criterion: Criterion, catalog: Catalog, where: str, binding: Binding) -> BoundCriterion:
    item_fields, has_sample, level = binding.item_fields, binding.has_sample, binding.level
    kind = criterion.get("type", "azure_ai_evaluator")
    if not isinstance(kind, str):
        raise ConfigError(f"{where}.type: must be a string such as 'azure_ai_evaluator', got {type(kind).__name__}")
    if kind == "multi":
        return _bind_multi(criterion, catalog, where, binding)
    if kind in GRADER_FIELDS:
        spec = catalog.get(kind)
        params = {key: value for key, value in as_wire(criterion).items() if key in GRADER_FIELDS[kind]}
        if kind == "text_similarity" and "pass_threshold" not in params and not binding.in_multi:
            # OpenAI's testing criterion requires one; inside multi the formula's own pass_threshold decides.
            raise ConfigError(f"{where}: text_similarity needs a numeric pass_threshold, e.g. 0.8")
        raw_mapping: dict[str, Any] | None = _grader_mapping(kind, criterion, where)
    elif kind == "azure_ai_evaluator":
        evaluator_name = criterion.get("evaluator_name")
        if not isinstance(evaluator_name, str):
            raise ConfigError(f"{where}: 'evaluator_name' is required, e.g. builtin.f1_score")
        spec = catalog.get(evaluator_name, criterion.get("evaluator_version"))
        params = dict(criterion.get("initialization_parameters") or {})
        raw_mapping = criterion.get("data_mapping")
    else:
        raise ConfigError(f"{where}: unknown criterion type {kind!r}")
    name = _criterion_name(criterion.get("name"), spec.short_name, where)
    if kind == "python" or (spec.takes_whole_item and raw_mapping is None):
        mapping = DataMapping({"item": "{{item}}", "sample": "{{sample}}"}, where=f"{where}", lenient=True)
        evaluator = _build(spec, params, f"testing criterion {name!r}", binding)
        if kind == "python":
            threshold = params.get("pass_threshold")
        else:  # a code evaluator's grade(sample, item): its THRESHOLD, or the criterion's pass_threshold
            threshold = _threshold(spec, criterion, params, criterion.get("threshold", params.get("threshold")), name)
        return BoundCriterion(name, kind, spec, evaluator, mapping, threshold, False, level)
    label = f"testing criterion {name!r}"
    if level not in spec.supported_evaluation_levels and binding.any_level:
        level = spec.supported_evaluation_levels[0]
        binding = Binding(binding.item_fields, binding.has_sample, level, binding.models, False, binding.repeats)
    if level not in spec.supported_evaluation_levels:
        levels = ", ".join(spec.supported_evaluation_levels)
        raise ConfigError(f"{label}: {spec.name} does not support evaluation_level {level!r} (it supports {levels})")
    threshold_given = criterion.get("threshold", params.get("threshold"))
    members = check_panel(criterion.get("models", params.pop("models", None)), f"{label}: models")
    accepted = inspect.signature(spec.factory).parameters
    if members is not None and "model" not in accepted:
        raise ConfigError(f"{label}: {spec.name} uses no model, so it cannot have a judge panel")
    repeats = binding.repeats if "seed" in accepted and members is None else 1
    reducer = check_reducer(criterion.get("reducer"), f"{label}: reducer")
    if members is not None:  # each model its own judge; the panel decides by strict majority
        evaluator = panel(
            {m: _build(spec, {**params, "model": m}, label, binding) for m in members},
            _threshold(spec, criterion, params, threshold_given, label),
            spec.primary.desirable_direction,
        )
    elif repeats > 1:  # judges take a seed: each repeat is a call of its own
        evaluator = repeated(
            lambda seed: _build(spec, {**params, "seed": seed}, label, binding),
            repeats,
            reducer,
            _threshold(spec, criterion, params, threshold_given, label),
            spec.primary.desirable_direction,
        )
    else:
        evaluator = _build(spec, params, label, binding)
    if raw_mapping is None:
        inputs = list(spec.inputs)
        if item_fields and "messages" in item_fields and {"query", "response"} & set(inputs) - item_fields:
            inputs.append("messages")  # a turn is split out of the conversation at run time
        mapping = default_mapping(inputs, item_fields, has_sample, where=f"{where}.data_mapping")
    else:
        mapping = DataMapping(raw_mapping, where=f"{where}.data_mapping")
        _check_mapped_inputs(spec, mapping, f"{where}.data_mapping")
        mapping.check_fields(name, item_fields, has_sample)
        unmapped = [i for i in spec.inputs if i not in mapping.templates and (item_fields is None or i in item_fields)]
        defaults = default_mapping(unmapped, item_fields, has_sample, where=f"{where}.data_mapping")
        mapping = DataMapping(
            raw_mapping, where=f"{where}.data_mapping", defaults=defaults, optional=spec.optional_inputs
        )
    _check_required(spec, mapping, label, item_fields, binding.list_fields)
    threshold = _threshold(spec, criterion, params, threshold_given, label)
    return BoundCriterion(name, kind, spec, evaluator, mapping, threshold, threshold_given is not None, level, repeats)


STANDARD_INPUTS = frozenset(
    {"query", "response", "context", "ground_truth", "tool_calls", "tool_definitions", "messages", "conversation"}
)


def _check_mapped_inputs(spec: EvaluatorSpec, mapping: DataMapping, where: str) -> None:
    """A built-in evaluator takes the inputs it names: a mapping key it does not take is a mistake
    (a typo, or the column's name where the input's belongs), not something to drop in silence."""
    if spec.evaluator_type != "builtin":
        return  # a custom evaluator may take any keyword
    # azd maps the standard inputs for every evaluator (query, response, tool_calls, tool_definitions):
    # those pass whether this one reads them or not; any other name it does not take is a mistake.
    unknown = [key for key in mapping.templates if key not in spec.inputs and key not in STANDARD_INPUTS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(spec.inputs), n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"{spec.name} takes: {', '.join(spec.inputs)}"
        raise ConfigError(f"{where}: {spec.name} takes no input {unknown[0]!r}", hint=hint)


def _bind_multi(criterion: Criterion, catalog: Catalog, where: str, binding: Binding) -> BoundCriterion:
    graders = criterion.get("graders")
    if isinstance(graders, dict) and isinstance(graders.get("type"), str):
        graders = {str(graders.get("name") or "grader"): graders}  # one grader, as the SDK types it
    if not isinstance(graders, dict) or not graders:
        hint = 'e.g. graders: {"exact": {"type": "string_check", ...}}, calculate_output: "exact"'
        raise ConfigError(
            f"{where}: a multi criterion needs 'graders': an object naming the graders its formula uses", hint=hint
        )
    subs: dict[str, BoundCriterion] = {}
    inside = dataclasses.replace(binding, in_multi=True)
    for key, sub in graders.items():
        inner = f"{where}.graders.{key}"
        if not isinstance(sub, dict):
            raise ConfigError(f"{inner}: expected a grader object, got {type(sub).__name__}")
        if sub.get("type") == "multi":
            raise ConfigError(f"{inner}: a multi grader cannot contain another multi grader")
        subs[key] = _bind_one(as_criteria([{**sub, "name": sub.get("name") or key}])[0], catalog, inner, inside)
    formula = Formula.parse(criterion.get("calculate_output"), set(subs), f"{where}.calculate_output")
    threshold = criterion.get("pass_threshold")
    if threshold is not None:
        threshold = _number(threshold, f"{where}.pass_threshold")
    evaluator = multi_grader({key: sub.evaluate for key, sub in subs.items()}, formula, threshold)
    mapping = DataMapping({"item": "{{item}}", "sample": "{{sample}}"}, where=where, lenient=True)
    name = _criterion_name(criterion.get("name"), "multi", where)
    return BoundCriterion(name, "multi", catalog.get("multi"), evaluator, mapping, threshold, False, binding.level)


def _grader_mapping(kind: str, criterion: Criterion, where: str) -> dict[str, Any] | None:
    if kind == "python":
        return None  # the grader sees the whole item and sample
    if kind in MODEL_GRADERS:
        if not isinstance(criterion.get("input"), list):
            raise ConfigError(f"{where}: a {kind} criterion needs 'input': a list of message templates")
        return {"input": criterion["input"]}
    mapping = {key: criterion.get(key) for key in ("input", "reference")}
    if any(value is None for value in mapping.values()):
        raise ConfigError(f"{where}: a {kind} criterion needs both 'input' and 'reference' templates")
    return mapping


def _build(spec: EvaluatorSpec, params: dict[str, Any], label: str, binding: Binding) -> Evaluator:
    accepted = inspect.signature(spec.factory).parameters
    unknown = [key for key in params if key not in accepted and key not in GENERIC_PARAMETERS]
    if unknown:
        known = ", ".join(k for k in accepted if k not in INJECTED) or "none"
        raise ConfigError(f"{label}: {spec.name} has no initialization parameter {unknown[0]!r} (it takes: {known})")
    kwargs = {key: value for key, value in params.items() if key in accepted and key not in INJECTED}
    kwargs = {key: _typed(spec.factory, key, value, label) for key, value in kwargs.items()}
    optional_model = "model" in accepted and accepted["model"].default is None
    if "model" in accepted and not (optional_model and _model_name(params, label) is None):
        # Judges get the Model itself, looked up by the name the criterion gives (or the default);
        # an evaluator that needs a model only for some items gets one when the criterion names it.
        models = binding.models or ModelRegistry()
        model = models.get(_model_name(params, label))
        model.check_credentials()
        kwargs["model"] = model
    if "evaluation_level" in accepted:
        kwargs["evaluation_level"] = binding.level
    if "embeddings" in accepted:  # the configured embeddings model, if any (text_similarity's cosine)
        kwargs["embeddings"] = (binding.models or ModelRegistry()).embeddings()
    if "moderation" in accepted:  # the configured moderation model, if any (promptfoo's moderation)
        kwargs["moderation"] = (binding.models or ModelRegistry()).moderation()
    if "workspace_agent" in accepted:  # an agentic grader's loop (promptfoo's agent-rubric): a target's
        kwargs["workspace_agent"] = run_in_workspace
    missing = [key for key, parameter in accepted.items() if _required(parameter) and key not in kwargs]
    if missing:
        raise ConfigError(f"{label}: {spec.name} needs {missing[0]!r}", hint=f"add '{missing[0]}' to the criterion")
    try:
        return spec.factory(**kwargs)
    except (TypeError, ValueError, ArithmeticError) as exc:  # the factory's own check of what the user gave
        given = ", ".join(sorted(kwargs)) or "no parameters"
        raise ConfigError(f"{label}: {spec.name} cannot be built from its parameters ({given}): {exc}") from None


def _typed(factory: Any, key: str, value: Any, label: str) -> Any:
    """A parameter's value as its factory's annotation types it (criteria arrive as JSON, so a
    dict where a metric's name belongs must be refused here, not crash the factory)."""
    adapter = _adapter(factory, key)
    if adapter is None:
        return value
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"]
        raise ConfigError(f"{label}: {key!r}: {problem} (got {value!r:.80})") from None


@functools.cache
def _adapter(factory: Any, key: str) -> TypeAdapter[Any] | None:
    try:
        hint = typing.get_type_hints(factory).get(key)
        return None if hint is None else TypeAdapter(hint)
    except Exception:  # noqa: BLE001 - a plugin's unresolvable or arbitrary annotation is not checked
        return None


def _required(parameter: inspect.Parameter) -> bool:
    named = parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    return named and parameter.default is parameter.empty


def _model_name(params: dict[str, Any], label: str) -> str | None:
    for key in ("model", "deployment_name"):
        value = params.get(key)
        if value is not None and not isinstance(value, str):
            raise ConfigError(
                f"{label}: '{key}' must be a model's name (a string), got {type(value).__name__}",
                hint="e.g. model: gpt-4.1-mini, or the name of an entry in models:",
            )
    return params.get("model") or params.get("deployment_name")


def _criterion_name(given: Any, default: str, where: str) -> str:
    """A criterion's name keys its results in the store: refuse one the store cannot hold now,
    not when the run writes its first result."""
    if given is None or given == "":
        return default
    if isinstance(given, int | float) and not isinstance(given, bool):
        given = str(given)  # `name: 2024` in YAML
    if not isinstance(given, str):
        raise ConfigError(f"{where}.name: must be a string, got {type(given).__name__}")
    if len(given) > CRITERION_NAME_LIMIT:
        raise ConfigError(
            f"{where}.name: is {len(given)} characters long; a criterion's name holds at most {CRITERION_NAME_LIMIT}",
            hint="give the criterion a shorter name",
        )
    if UNSTORABLE.search(given):
        raise ConfigError(f"{where}.name: holds a NUL character or a lone surrogate", hint="remove it from the name")
    return given


def _check_required(
    spec: EvaluatorSpec, mapping: DataMapping, label: str, item_fields: set[str] | None, list_fields: frozenset[str]
) -> None:
    if item_fields is None:
        return
    from_messages = "messages" in mapping.templates
    derivable = set(FROM_MESSAGES) if from_messages else set()
    response = mapping.templates.get("response")
    if response is not None and any(_may_be_an_answer(path, list_fields) for path in response.paths):
        derivable.add("context")  # an agent's answer holds its own: what its tools returned (``_inputs``)
    for name in spec.required_inputs:
        if name not in mapping.templates and name not in derivable:
            have = ", ".join(sorted(item_fields)) or "none"
            if from_messages:
                raise ConfigError(
                    f"{label}: {spec.name} needs input {name!r}, which a conversation does not hold "
                    f"(from messages come {', '.join(FROM_MESSAGES)}; item fields: {have})",
                    hint=f'map {name} to an item field: data_mapping: {{{name}: "{{{{item.<field>}}}}"}}',
                )
            raise ConfigError(
                f"{label}: {spec.name} needs input {name!r} but the items have no such field (fields: {have})",
                hint=f'add data_mapping: {{{name}: "{{{{item.<field>}}}}"}}',
            )


def _may_be_an_answer(path: TemplatePath, list_fields: frozenset[str]) -> bool:
    """Whether ``path`` reads an agent's answer (a list of messages): a target's, or an item field
    that holds lists."""
    if path.namespace == "sample":
        return True
    return path.namespace == "item" and bool(path.steps) and path.steps[0] in list_fields


def _number(value: Any, label: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{label}: threshold must be a number, got {value!r}")
    return float(value)
