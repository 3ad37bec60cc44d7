"""Results of a run, as stored and as returned by every interface (DESIGN.md "Results")."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

ResultStatus = Literal["completed", "skipped", "error", "undetermined", "filtered"]
"""``undetermined``: the judge gave no verdict that could be read (``assay.errors.Undetermined``);
``filtered``: a provider's content filter stopped the target's or the judge's call. Neither is a
verdict: pass rates leave them out, and summaries count them apart."""
ItemStatus = Literal["pass", "fail", "error", "undetermined", "filtered", "skipped"]


class Result(BaseModel):
    """One testing criterion's verdict on one item."""

    type: str = "azure_ai_evaluator"
    """The criterion type: ``azure_ai_evaluator``, ``string_check``, ``text_similarity``, ..."""
    name: str
    """The testing criterion's name."""
    metric: str
    """The evaluator's primary metric, e.g. ``f1_score`` or ``bleu``."""
    score: float | None = None
    """On the evaluator's native scale (0–1 NLP, 1–5 quality, 0–7 severity)."""
    label: Literal["pass", "fail"] | None = None
    passed: bool | None = None
    threshold: float | None = None
    reason: str | None = None
    status: ResultStatus = "completed"
    properties: dict[str, Any] = Field(default_factory=dict)
    """Secondary metrics, per-metric verdicts, error details, token usage."""

    @classmethod
    def checked(
        cls,
        type: str,
        name: str,
        metric: str,
        score: float,
        passed: bool,
        threshold: float | None,
        reason: str | None,
        properties: dict[str, Any],
    ) -> Result:
        """A completed result of values already of the types validation would give (a float score,
        a bool verdict, text keys): ``model_construct`` without its per-field work, once per item and
        criterion of every run. Its fields keep the order they are declared in, as stored JSON does."""
        result = _new(cls)
        _set(
            result,
            "__dict__",
            {
                "type": type,
                "name": name,
                "metric": metric,
                "score": score,
                "label": "pass" if passed else "fail",
                "passed": passed,
                "threshold": threshold,
                "reason": reason,
                "status": "completed",
                "properties": properties,
            },
        )
        _set(result, "__pydantic_fields_set__", set(_RESULT_FIELDS))
        _set(result, "__pydantic_extra__", None)
        _set(result, "__pydantic_private__", None)
        return result


class OutputItem(BaseModel):
    """An item, what was generated for it, and every criterion's result."""

    datasource_item_id: int
    datasource_item: dict[str, Any]
    sample: dict[str, Any] | None = None
    results: list[Result]
    status: ItemStatus
    """``pass`` only when every criterion passed."""

    @classmethod
    def checked(
        cls,
        datasource_item_id: int,
        datasource_item: dict[str, Any],
        sample: dict[str, Any] | None,
        results: list[Result],
    ) -> OutputItem:
        """An output item of parts already typed and checked (a read row, validated results), with its
        status: ``model_construct`` without its per-field work, once per item of every run."""
        item = _new(cls)
        _set(
            item,
            "__dict__",
            {
                "datasource_item_id": datasource_item_id,
                "datasource_item": datasource_item,
                "sample": sample,
                "results": results,
                "status": cls.status_of(results),
            },
        )
        _set(item, "__pydantic_fields_set__", set(_OUTPUT_ITEM_FIELDS))
        _set(item, "__pydantic_extra__", None)
        _set(item, "__pydantic_private__", None)
        return item

    @staticmethod
    def status_of(results: list[Result]) -> ItemStatus:
        """Priority as the peer counts rows: any failure fails, else any error errors; else a result
        without a verdict makes the item ``undetermined`` or ``filtered`` (neither a pass nor a fail)."""
        if len(results) == 1:  # most runs judge an item once
            (only,) = results
            if only.status == "completed":
                return "fail" if only.passed is False else "pass"
            if only.status == "error" or only.status == "undetermined" or only.status == "filtered":
                return only.status
            return "skipped" if only.status == "skipped" else "pass"
        if any(r.status == "completed" and r.passed is False for r in results):
            return "fail"
        if any(r.status == "error" for r in results):
            return "error"
        if any(r.status == "undetermined" for r in results):
            return "undetermined"
        if any(r.status == "filtered" for r in results):
            return "filtered"
        if results and all(r.status == "skipped" for r in results):
            return "skipped"
        return "pass"


_new = object.__new__
_set = object.__setattr__
_OUTPUT_ITEM_FIELDS = frozenset(OutputItem.model_fields)
_RESULT_FIELDS = frozenset(Result.model_fields)


class ResultCounts(BaseModel):
    total: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    undetermined: int = 0
    """Items a judge gave no readable verdict on: neither passed nor failed."""
    filtered: int = 0
    """Items a provider's content filter stopped (the target's or a judge's call): neither passed nor failed."""


class CriterionSummary(BaseModel):
    testing_criteria: str
    """The criterion's name."""
    metric: str
    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    undetermined: int = 0
    """Items this criterion's judge gave no readable verdict on."""
    filtered: int = 0
    """Items whose call (the target's or this criterion's judge's) a content filter stopped."""
    pass_rate: float | None = None
    """passed / (passed + failed): errored, undetermined, filtered and skipped items are left out
    (``n`` is that denominator)."""
    n: int = 0
    """passed + failed: the items the pass rate is over."""
    pass_rate_ci: list[float] | None = None
    """Wilson's 95% interval of the pass rate."""
    mean_score: float | None = None
    mean_score_ci: list[float] | None = None
    """Student's t 95% interval of the mean score."""
    clusters: int | None = None
    """With ``cluster_by``: the clusters the intervals are over (n counts the items in them)."""
    flaky: int | None = None
    """With repeats: the items whose repeats disagreed on the verdict."""
    attack_strategy: str | None = None
    """Set on a red-team run's per-technique rows: passed are the attacks defended, failed those that succeeded."""


class ModelUsage(BaseModel):
    model_name: str
    invocation_count: int = 0
    """Calls actually made; answers served from assay's cache are counted in ``cache_hits``."""
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = None
    """From the model's price table, when the config gives one."""


class RoleUsage(ModelUsage):
    """One role's calls to one model: ``target`` (what is evaluated), ``judge``, ``simulated_user``,
    ``attacker``."""

    role: str


class SimulationSummary(BaseModel):
    """With a ``builtin.simulator_fidelity`` criterion: whom each simulated conversation's outcome
    is to be put on."""

    simulation_unreliable: int = 0
    """The simulated user went wrong (fidelity did not pass): the conversation says little about the agent."""
    agent_failed: int = 0
    """A faithful simulation on which another criterion failed or errored: the agent's failure."""
    agent_passed: int = 0


class TaskScore(BaseModel):
    name: str
    score: float | None
    """0–1: the mean of the task's criteria and shared evaluators, each normalised."""
    criteria_passed: int = 0
    criteria_total: int = 0
    trials: int = 1
    """With target repeats: the trials the score is the mean of."""


class TaskSummary(BaseModel):
    """A task dataset's scores (seed 002): per task, and the composite over tasks."""

    composite: float | None = None
    tasks: list[TaskScore] = Field(default_factory=list)


class TrialCriterion(BaseModel):
    """One criterion over the target's trials: per k, the chance that at least one of k trials
    passes (pass@k) and that all k pass (pass^k, τ-bench's reliability), each the mean over items of
    the unbiased estimator from the item's n trials."""

    testing_criteria: str
    items: int = 0
    pass_at_k: dict[int, float] = Field(default_factory=dict)
    pass_hat_k: dict[int, float] = Field(default_factory=dict)
    pass_at_k_ci: list[float] | None = None
    """The interval of pass@k at the largest k, over items (an item's trials are one cluster)."""
    pass_hat_k_ci: list[float] | None = None


class TrialSummary(BaseModel):
    """A run whose target ran ``trials`` times per item (``repeats: {target: K}``)."""

    trials: int
    per_testing_criteria: list[TrialCriterion] = Field(default_factory=list)


class AgentCriterionSummary(BaseModel):
    """One criterion's verdicts on one agent's items of a multi-agent workflow run (``workflow``
    for the items judging the workflow overall)."""

    agent: str
    testing_criteria: str
    passed: int = 0
    failed: int = 0
    errored: int = 0
    pass_rate: float | None = None


class RunSummary(BaseModel):
    result_counts: ResultCounts = Field(default_factory=ResultCounts)
    per_testing_criteria_results: list[CriterionSummary] = Field(default_factory=list)
    per_model_usage: list[ModelUsage] = Field(default_factory=list)
    per_role_usage: list[RoleUsage] = Field(default_factory=list)
    """The same calls by who made them: the target, the judges, a simulated user, an attacker."""
    simulation: SimulationSummary | None = None
    red_team: dict[str, Any] | None = None
    """A red-team run's scorecard (``assay.redteam.scorecard``)."""
    tasks: TaskSummary | None = None
    trials: TrialSummary | None = None
    """With target repeats: pass@k and pass^k per criterion over each item's trials."""
    per_agent: list[AgentCriterionSummary] | None = None
    """A multi-agent workflow's run (trace items with ``workflow_part``): each criterion per agent."""
    score_steps: dict[str, list[tuple[float, int]]] | None = None
    """Per criterion, its scores counted in steps of 0.001 (for the charts; not on the wire)."""

    def pass_rate(self) -> float | None:
        counts = self.result_counts
        decided = counts.passed + counts.failed
        return counts.passed / decided if decided else None
