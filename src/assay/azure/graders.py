"""The peer's wrappers of OpenAI's graders (``AzureOpenAIStringCheckGrader`` and kin).

The peer sends them to an Azure OpenAI Evals endpoint; here ``evaluate()`` runs each as the
testing criterion it wraps (assay's own ``string_check``, ``text_similarity``, ``label_model``,
``score_model`` and ``python`` graders), and writes the columns the peer writes from the Evals
API's results: ``outputs.<alias>.<field>`` for each of the result's fields and
``outputs.<alias>.<alias>_result`` (pass/fail).
"""

from __future__ import annotations

from typing import Any

from assay.azure.evaluators import catalog
from assay.azure.exceptions import ErrorTarget, user_error
from assay.azure.models import JUDGE, model_from
from assay.errors import ConfigError
from assay.llm import ModelConfig, ModelRegistry
from assay.results import Result
from assay.results.criterion import Criterion, as_criterion
from assay.run.criteria import bind_criteria

MODEL_GRADERS = ("label_model", "score_model")


class AzureOpenAIGrader:
    """``AzureOpenAIGrader(model_config=..., grader_config={...})``: any OpenAI grader, as a dict or
    an ``openai.types.graders`` object."""

    target = ErrorTarget.AOAI_GRADER

    def __init__(self, *, model_config: Any, grader_config: Any, credential: Any = None, **kwargs: Any) -> None:
        config = grader_config.model_dump(exclude_none=True) if hasattr(grader_config, "model_dump") else grader_config
        if not isinstance(config, dict) or not isinstance(config.get("type"), str) or not config.get("name"):
            raise user_error("grader_config must be an OpenAI grader with a type and a name", self.target)
        self.grader = dict(config)
        self.judged = config["type"] in MODEL_GRADERS
        self._model: ModelConfig | None = model_from(model_config, self.target) if self.judged else None
        try:  # a bad grader is refused now, as the peer's constructor refuses it
            bind_criteria([self.criterion()], catalog(), item_fields=None, models=self.models())
        except ConfigError as exc:
            raise user_error(f"{type(self).__name__}: {exc.message}", self.target) from None

    def criterion(self, name: str | None = None, model: str = JUDGE) -> Criterion:
        """The grader as a testing criterion, its model (for a model grader) called ``model``."""
        criterion = as_criterion({**self.grader, "name": name or self.grader["name"]})
        if self.judged:
            criterion["model"] = model
        return criterion

    def judge(self, name: str = JUDGE) -> ModelConfig | None:
        return None if self._model is None else self._model.model_copy(update={"name": name})

    def models(self) -> ModelRegistry:
        judge = self.judge()
        return ModelRegistry([judge] if judge is not None else [])

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise user_error(f"{type(self).__name__} runs inside evaluate(), as the peer's graders do", self.target)

    def columns(self, result: Result, alias: str) -> dict[str, Any]:
        """The fields of the Evals API's result for this grader, as the peer's table has them (each
        field of the result the API returns, and ``<alias>_result``)."""
        passed = bool(result.passed)
        fields = result.model_dump(exclude={"name"})
        fields.update({"score": 0.0 if result.score is None else result.score, "passed": passed, "sample": None})
        return {f"{alias}_result": "pass" if passed else "fail", **fields}


def grader_pass_rates(rows: list[dict[str, Any]], aliases: set[str]) -> dict[str, float]:
    """The peer's metric for a grader: ``<alias>.pass_rate`` over the rows it passed or failed."""
    rates = {}
    for alias in sorted(aliases):
        verdicts = [
            row.get(f"outputs.{alias}.passed") for row in rows if row.get(f"outputs.{alias}.status") == "completed"
        ]
        decided = [v for v in verdicts if isinstance(v, bool)]
        rates[f"{alias}.pass_rate"] = sum(decided) / len(decided) if decided else 0.0
    return rates


def _grader(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **{key: value for key, value in fields.items() if value is not None}}


class AzureOpenAIStringCheckGrader(AzureOpenAIGrader):
    def __init__(
        self,
        *,
        model_config: Any,
        input: str,  # noqa: A002 - the peer's name
        name: str,
        operation: str,
        reference: str,
        credential: Any = None,
        **kwargs: Any,
    ) -> None:
        grader = _grader("string_check", input=input, name=name, operation=operation, reference=reference)
        super().__init__(model_config=model_config, grader_config=grader, credential=credential)


class AzureOpenAITextSimilarityGrader(AzureOpenAIGrader):
    def __init__(
        self,
        *,
        model_config: Any,
        evaluation_metric: str,
        input: str,  # noqa: A002 - the peer's name
        pass_threshold: float,
        reference: str,
        name: str,
        credential: Any = None,
        **kwargs: Any,
    ) -> None:
        grader = _grader(
            "text_similarity",
            evaluation_metric=evaluation_metric,
            input=input,
            pass_threshold=pass_threshold,
            reference=reference,
            name=name,
        )
        super().__init__(model_config=model_config, grader_config=grader, credential=credential)


class AzureOpenAILabelGrader(AzureOpenAIGrader):
    def __init__(
        self,
        *,
        model_config: Any,
        input: list[dict[str, Any]],  # noqa: A002 - the peer's name
        labels: list[str],
        model: str,
        name: str,
        passing_labels: list[str],
        credential: Any = None,
        **kwargs: Any,
    ) -> None:
        grader = _grader("label_model", input=input, labels=labels, name=name, passing_labels=passing_labels)
        super().__init__(model_config=model_config, grader_config=grader, credential=credential)


class AzureOpenAIScoreModelGrader(AzureOpenAIGrader):
    def __init__(
        self,
        *,
        model_config: Any,
        input: list[dict[str, Any]],  # noqa: A002 - the peer's name
        model: str,
        name: str,
        range: list[float] | None = None,  # noqa: A002 - the peer's name
        pass_threshold: float | None = None,
        sampling_params: dict[str, Any] | None = None,
        credential: Any = None,
        **kwargs: Any,
    ) -> None:
        grader = _grader(
            "score_model",
            input=input,
            name=name,
            range=range,
            pass_threshold=pass_threshold,
            sampling_params=sampling_params,
        )
        super().__init__(model_config=model_config, grader_config=grader, credential=credential)


class AzureOpenAIPythonGrader(AzureOpenAIGrader):
    def __init__(
        self,
        *,
        model_config: Any,
        name: str,
        image_tag: str | None = None,
        pass_threshold: float,
        source: str,
        credential: Any = None,
        **kwargs: Any,
    ) -> None:
        grader = _grader("python", name=name, image_tag=image_tag, pass_threshold=pass_threshold, source=source)
        super().__init__(model_config=model_config, grader_config=grader, credential=credential)
