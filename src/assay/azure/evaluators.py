"""azure-ai-evaluation's evaluator classes as thin adapters over assay's catalog.

Each class names the catalog evaluator it runs and the result key it reports. A call binds one
testing criterion the way a run does (the same mapping, thresholds and verdict), evaluates the
keyword inputs, and writes the result under the peer's 1.18 keys: ``X``, ``X_score``,
``X_passed``, ``X_result``, ``X_reason``, ``X_status``, ``X_threshold``, ``X_properties``. No
evaluator is implemented twice: the numbers are the catalog's.

Calls are synchronous, as the peer's are (inside a running event loop they run on a thread of
their own). ``conversation={"messages": [...]}`` is evaluated turn by turn and aggregated as the
peer does (numbers averaged, or the worst for harms; other values from the last turn; every turn
under ``evaluation_per_turn``).
"""

from __future__ import annotations

import inspect
import json
import math
import warnings
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from assay.azure.exceptions import ErrorBlame, ErrorCategory, ErrorTarget, EvaluationException, user_error
from assay.azure.models import JUDGE, model_from
from assay.errors import ConfigError, ItemError, MissingInput
from assay.evaluators.catalog import Catalog, load_catalog
from assay.llm import ModelConfig, ModelRegistry
from assay.llm.model import Completion, Model, Usage
from assay.results import Result
from assay.results.criterion import Criterion
from assay.run.criteria import bind_criteria
from assay.sync import run_sync

T = TypeVar("T")
FLOW_TIMEOUT = 600
"""What the peer gives its flow as ``timeout`` (seconds)."""
_catalog: Catalog | None = None


def catalog() -> Catalog:
    """The catalog every adapter binds against, loaded once per process."""
    global _catalog
    if _catalog is None:
        _catalog = load_catalog()
    return _catalog


class EvaluatorBase:
    """One catalog evaluator behind the peer's calling convention and output keys."""

    builtin: ClassVar[str]
    key: ClassVar[str]
    target: ClassVar[ErrorTarget] = ErrorTarget.UNKNOWN
    judged: ClassVar[bool] = False
    """Asks a model (``model_config``, else the environment's default model)."""
    harm: ClassVar[bool] = False
    """A content harm: ``X`` is the severity label, conversations take the worst turn."""
    per_turn: ClassVar[bool] = False
    """Takes ``conversation=`` (evaluated turn by turn)."""
    _RESULT_KEY: ClassVar[str]
    """``key``, by the peer's name for it."""
    legacy_key: ClassVar[bool] = False
    """Also writes ``gpt_X`` (the peer still does for tool_call_accuracy)."""
    requires_tool_definitions: ClassVar[bool] = False
    """A direct call without ``tool_definitions`` is refused, as the peer's validator refuses it."""
    requires_tool_calls: ClassVar[bool] = False
    """A direct call with neither ``response`` nor ``tool_calls`` is refused, as the peer's is."""
    validates_inputs: ClassVar[bool] = True
    """The peer checks this one's inputs with a validator, whose words for a missing input are
    "Query is a required input and cannot be None."; the others (retrieval, response completeness)
    fail in its base class: "X: Either 'conversation' or individual inputs must be provided."."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "key" in cls.__dict__:  # the peer's classes name their output key so
            cls._RESULT_KEY = cls.key

    def __init__(
        self,
        init: dict[str, Any] | None = None,
        threshold: float | None = None,
        model_config: Any = None,
        reported_threshold: float | None = None,
    ) -> None:
        """``threshold`` decides the verdict; ``reported_threshold`` is only what ``X_threshold`` says,
        where the peer reports one its verdict does not use (ROUGE's F1 threshold, say)."""
        self._init = dict(init or {})
        self._threshold = threshold
        self._reported = reported_threshold if reported_threshold is not None else threshold
        self._model: ModelConfig | None = model_from(model_config, self.target) if model_config is not None else None
        try:  # a bad parameter is refused now, as the peer refuses it in the constructor
            self._bound(set(catalog().get(self.builtin).required_inputs))
        except ConfigError as exc:
            raise user_error(f"{type(self).__name__}: {exc.message}", self.target) from None

    @property
    def _result_key(self) -> str:
        return self.key

    # -- the criterion ---------------------------------------------------------------------

    def criterion(self, name: str | None = None, model: str = JUDGE) -> Criterion:
        """This evaluator as a testing criterion (``evaluate()`` runs it so), its judge called ``model``."""
        init = dict(self._init)
        if self.judged and self._model is not None:
            init["model"] = model
        criterion: Criterion = {
            "type": "azure_ai_evaluator",
            "name": name or self.key,
            "evaluator_name": self.builtin,
            "initialization_parameters": init,
        }
        if self._threshold is not None:
            criterion["threshold"] = self._threshold
        return criterion

    def judge(self, name: str = JUDGE) -> ModelConfig | None:
        """The judge's configuration under ``name``; None: the environment's default model."""
        return None if self._model is None else self._model.model_copy(update={"name": name})

    def models(self) -> ModelRegistry:
        return ModelRegistry([self._model] if self._model is not None else [])

    def _bound(self, fields: set[str], models: ModelRegistry | None = None) -> Any:
        (bound,) = bind_criteria([self.criterion()], catalog(), item_fields=fields, models=models or self.models())
        return bound

    # -- a direct call -----------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        if self.per_turn:  # ``messages=[...]`` is a conversation (azure-ai-evaluation 1.18)
            hoist_messages_to_conversation(kwargs)
        conversation = kwargs.pop("conversation", None)
        if self.judged and self.validates_inputs and conversation is None:
            self._validated(kwargs)
            self._validated_tools(kwargs)
        inputs = {key: value for key, value in kwargs.items() if value is not None}
        if args or (conversation is None and not inputs):
            raise user_error(
                f"{type(self).__name__}: Either 'conversation' or individual inputs must be provided.",
                ErrorTarget.CONVERSATION,
            )
        if conversation is not None:
            if not self.per_turn:
                raise user_error(
                    f"{type(self).__name__} does not support conversation input; pass its inputs by name", self.target
                )
            return self._conversation(conversation)
        return self.peer_dict(run_sync(self._evaluate(inputs)), inputs)

    def _validated(self, given: dict[str, Any]) -> None:
        """The peer's validator on ``query`` and ``response``, in its words: given as None (where
        required), an empty string or list, or neither text nor a list of messages."""
        required = set(catalog().get(self.builtin).required_inputs)
        for name in ("query", "response"):
            if name not in given and (name not in required or given):
                continue  # nothing given at all: the validator names the first required input
            value, shown = given.get(name), name.capitalize()
            problem: tuple[str, ErrorCategory] | None = None
            if value is None:
                if name in required:
                    problem = (f"{shown} is a required input and cannot be None.", ErrorCategory.MISSING_FIELD)
            elif value == "":
                problem = (f"{shown} string cannot be empty.", ErrorCategory.MISSING_FIELD)
            elif not isinstance(value, (str, list)):
                problem = (f"{shown} must be a string or a list of messages.", ErrorCategory.INVALID_VALUE)
            elif value == []:
                problem = (f"{shown} list cannot be empty.", ErrorCategory.MISSING_FIELD)
            if problem is not None:
                raise user_error(problem[0], self.target, problem[1])

    def _validated_tools(self, given: dict[str, Any]) -> None:
        """The peer's tool validators, in its words: the tool judges that need definitions refuse a
        call without them (or with one definition not in a list), and those that judge calls refuse
        one with neither a response nor tool calls."""
        definitions = given.get("tool_definitions")
        if self.requires_tool_definitions:
            if not definitions:
                raise user_error(
                    "Tool definitions input is required but not provided.", self.target, ErrorCategory.MISSING_FIELD
                )
            if not isinstance(definitions, (str, list)):
                raise user_error("Tool definitions must be provided as a list of dictionaries.", self.target)
        if self.requires_tool_calls and not given.get("tool_calls") and not given.get("response"):
            raise user_error(
                "No tool calls found in response or provided tool_calls.", self.target, ErrorCategory.MISSING_FIELD
            )

    async def _evaluate(self, inputs: dict[str, Any]) -> Result:
        spec = catalog().get(self.builtin)
        for name in spec.required_inputs:
            if name in inputs or any(name in group for group in spec.one_of_inputs):
                continue
            if not self.judged or not self.validates_inputs:  # the peer's base class's words
                raise user_error(
                    f"{type(self).__name__}: Either 'conversation' or individual inputs must be provided.",
                    ErrorTarget.CONVERSATION,
                )
            raise user_error(
                f"{name.replace('_', ' ').capitalize()} is a required input and cannot be None.",
                self.target,
                ErrorCategory.MISSING_FIELD,
            )
        models = self.models()
        flow = getattr(self, "_flow", None)
        if flow is not None and self._model is not None:
            models.serve(JUDGE, FlowModel(self.judge() or self._model, flow, inputs))
        try:
            bound = self._bound(set(inputs), models)
            result: Result = await bound.evaluate(inputs, None)
        except ConfigError as exc:
            raise user_error(f"{type(self).__name__}: {exc.message}", self.target) from None
        finally:
            await models.aclose()
        if result.status == "undetermined":  # the judge answered, and no verdict could be read
            raise EvaluationException(
                f"{type(self).__name__}: Evaluator returned invalid output. "
                f"{'Invalid score value: ' if 'score' in (result.reason or '') else ''}{result.reason}",
                target=self.target,
                category=ErrorCategory.FAILED_EXECUTION,
                blame=ErrorBlame.SYSTEM_ERROR,
            )
        if result.status == "error":
            failed = f"{type(self).__name__}: {result.reason}"
            code = (result.properties.get("error") or {}).get("code")
            if code == MissingInput.code:  # the input is not there
                raise user_error(failed, self.target, ErrorCategory.MISSING_FIELD)
            if code == ItemError.code:  # the input is wrong
                raise user_error(failed, self.target)
            raise EvaluationException(
                failed, target=self.target, category=ErrorCategory.FAILED_EXECUTION, blame=ErrorBlame.SYSTEM_ERROR
            )
        return result

    # -- the peer's keys -----------------------------------------------------------------

    def peer_dict(self, result: Result, inputs: dict[str, Any]) -> dict[str, Any]:
        key = self.key
        score = result.score
        properties = dict(result.properties or {})
        value: Any = properties.get("label", score) if self.harm and score is not None else score
        verdict = "not_applicable" if result.status == "skipped" else result.label or "unknown"
        out: dict[str, Any] = {key: value}
        if self.legacy_key:
            out[f"gpt_{key}"] = score
        out.update(
            {
                f"{key}_score": score,
                f"{key}_passed": result.passed,
                f"{key}_result": verdict,
                f"{key}_reason": result.reason,
                f"{key}_status": result.status,
                f"{key}_threshold": result.threshold if self._reported is None else self._reported,
                f"{key}_properties": None if result.status == "skipped" else self.peer_properties(result, inputs),
            }
        )
        return out

    def peer_properties(self, result: Result, inputs: dict[str, Any]) -> Any:
        if not self.judged:
            return None
        usage = (result.properties or {}).get("usage") or {}
        raw = (result.properties or {}).get("raw_answer")
        shown = json.dumps(inputs, ensure_ascii=False, default=str)
        finish = (result.properties or {}).get("finish_reason")
        judged = (result.properties or {}).get("judge")  # what the judge's answer gave as its properties
        return {
            **(self.judge_properties(judged) if isinstance(judged, dict) else {}),
            "prompt_tokens": usage.get("prompt_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0),
            "total_tokens": usage.get("total_tokens", 0),
            "finish_reason": finish,
            "model": usage.get("model"),
            "sample_input": json.dumps([{"role": "user", "content": shown}]),
            "sample_output": json.dumps([{"role": "assistant", "content": raw}]) if raw is not None else None,
        }

    def judge_properties(self, judged: dict[str, Any]) -> dict[str, Any]:
        """The properties the judge's answer gave, as the peer reports them beside the token counts."""
        return dict(judged)

    # -- conversations, the SDK's way ---------------------------------------------------------

    def _conversation(self, conversation: Any) -> dict[str, Any]:
        messages = conversation.get("messages") if isinstance(conversation, dict) else None
        if not isinstance(messages, list) or not messages:
            raise user_error("Conversation must be a dict with a non-empty 'messages' list.", ErrorTarget.CONVERSATION)
        turns = conversation_turns(messages, conversation.get("context"))
        if not turns:
            raise user_error(
                "Conversation must contain at least one user message followed by an assistant reply.",
                ErrorTarget.CONVERSATION,
            )

        async def every_turn() -> list[dict[str, Any]]:
            return [self.peer_dict(await self._evaluate(turn), turn) for turn in turns]

        per_turn = run_sync(every_turn())
        if len(per_turn) == 1:
            return per_turn[0]  # one turn is reported as it is, as the peer does
        aggregated: dict[str, Any] = {}
        for name in per_turn[0]:
            values = [turn[name] for turn in per_turn]
            numbers = [float(v) for v in values if isinstance(v, (int, float))]  # bools too: True counts 1
            if len(numbers) == len(values) and values:
                worst = self.harm and name.endswith("_score")
                aggregated[name] = max(numbers) if worst else sum(numbers) / len(numbers)
            else:
                aggregated[name] = values[-1]
        aggregated["evaluation_per_turn"] = {name: [turn[name] for turn in per_turn] for name in per_turn[0]}
        return aggregated


class FlowModel(Model):
    """The judge's calls answered by the peer's prompty flow where a test replaced it
    (``evaluator._flow = MagicMock(side_effect=...)``, as the peer's own unit tests do): the flow is
    called with the evaluator's inputs, and its ``llm_output`` is the judge's answer."""

    def __init__(self, config: ModelConfig, flow: Callable[..., Any], inputs: dict[str, Any]) -> None:
        super().__init__(config)
        self.flow, self.inputs = flow, inputs
        self.awaited: tuple[Any, Any] = (None, None)
        """The last awaitable the flow gave and what it came to."""

    async def generate(self, messages: list[dict[str, Any]], **params: Any) -> Completion:
        answer = self.flow(timeout=FLOW_TIMEOUT, **self.inputs)
        if inspect.isawaitable(answer):
            # A mock made with ``return_value=coroutine`` gives the same coroutine to every call
            # (a repair request asks again): awaited once, its answer stands for all of them.
            if answer is self.awaited[0]:
                answer = self.awaited[1]
            else:
                self.awaited = (answer, await answer)
                answer = self.awaited[1]
        output = answer.get("llm_output", answer) if isinstance(answer, dict) else answer
        text = output if isinstance(output, str) else json.dumps(output, default=str)
        self.calls += 1
        return Completion(text=text, model=self.config.model, usage=Usage())


def hoist_messages_to_conversation(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``messages=[...]`` given where ``conversation=`` is meant, made a conversation, in place: the
    ``context`` and ``tool_definitions`` given beside it go into it, and a ``ground_truth`` onto each
    assistant turn that has none of its own (copies of the caller's list and turns, which are left
    as they were). Unchanged when a conversation is given or no messages are."""
    if kwargs.get("conversation") is not None or kwargs.get("messages") is None:
        return kwargs
    messages = kwargs.pop("messages")
    conversation: dict[str, Any] = {"messages": messages}
    for name in ("context", "tool_definitions"):
        value = kwargs.pop(name, None)
        if value is not None:
            conversation[name] = value
    ground_truth = kwargs.pop("ground_truth", None)
    if ground_truth is not None and isinstance(messages, list):
        conversation["messages"] = [
            {**message, "ground_truth": ground_truth}
            if isinstance(message, dict) and message.get("role") == "assistant" and "ground_truth" not in message
            else message
            for message in messages
        ]
    kwargs["conversation"] = conversation
    return kwargs


def conversation_turns(messages: list[Any], context: Any) -> list[dict[str, Any]]:
    """User → assistant pairs, each a single-turn input (the peer zips them the same way)."""
    turns, query = [], None
    for message in messages:
        if not isinstance(message, dict):
            raise user_error(
                "Each conversation message must be a dict with 'role' and 'content'.", ErrorTarget.CONVERSATION
            )
        if message.get("role") == "user":
            query = message.get("content")
        elif message.get("role") == "assistant" and query is not None:
            turn = {"query": query, "response": message.get("content")}
            found = message.get("context", context)
            if found is not None:
                turn["context"] = found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)
            if message.get("ground_truth") is not None:
                turn["ground_truth"] = message["ground_truth"]
            turns.append(turn)
            query = None
    return turns


def _number(value: Any, name: str, target: ErrorTarget, kind: type = float) -> Any:
    """The peer's constructor checks: ROUGE thresholds must be floats, say."""
    if kind is float and (not isinstance(value, float) or math.isnan(value)):
        raise user_error(f"{name} must be a float, got {type(value)}", target)
    return value


def _ignored(**given: Any) -> None:
    """Arguments the peer needs for its cloud service and assay does not (it judges locally)."""
    named = [name for name, value in given.items() if value is not None]
    if named:
        warnings.warn(
            f"{', '.join(named)}: not used by assay (safety is judged locally by your judge model)", stacklevel=3
        )
