"""Insights: Foundry's ``project_client.beta.insights`` for ``EvaluationRunClusterInsight`` and
``EvaluationComparison`` (the latter: ``assay runs compare`` per treatment, in Foundry's result shape).

The failed results of the runs named (``evalId``, ``runIds``) are clustered by their judges'
reasons and responses (``assay.loop.insights``); with ``modelConfiguration.modelDeploymentName`` (a
model of the server's ``--models``) each cluster is named by that model with a suggestion (a JSON
schema, parsing as the fallback), else by the terms that set it apart. Each cluster keeps its
samples (the result, the item's id and run). The request is checked and the insight stored
``Running`` when it is answered; the clustering (and the model's calls) is a job a worker takes
(``assay.api.background``), never a request's or the firer's thread, as Foundry's own insights are
polled (``GET /insights/{id}``, ``list``) until their ``state`` is ``Succeeded``, or ``Failed`` with
the reason.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.api.jobs import queue_for_workers
from assay.errors import AssayError, ConfigError
from assay.loop.insights import cluster
from assay.results import Result

if TYPE_CHECKING:
    from assay.api.context import ApiContext

log = logging.getLogger(__name__)
SAMPLES_PER_CLUSTER = 10
NAME_SCHEMA = {
    "type": "object",
    "properties": {
        "label": {"type": "string"},
        "description": {"type": "string"},
        "suggestion_title": {"type": "string"},
        "suggestion": {"type": "string"},
    },
    "required": ["label", "description", "suggestion_title", "suggestion"],
    "additionalProperties": False,
}


def accept(ctx: ApiContext, project: str, body: dict[str, Any]) -> dict[str, Any]:
    """Check what a ``POST /insights`` asks for (each mistake a 400 or 404 before anything is
    stored), store the insight ``Running`` and queue the job that makes it for a worker; the
    insight as stored."""
    _work(ctx, project, body)
    insight_id = f"insight_{uuid.uuid4().hex[:24]}"
    insight: dict[str, Any] = {
        "id": insight_id,
        "displayName": body.get("displayName") or str(body["request"]["type"]),
        "request": body["request"],
        "state": "Running",
        "metadata": {"createdAt": _iso(time.time())},
    }
    ctx.store.put_insight(project, insight_id, insight)
    queue_for_workers(ctx, project, "insight", {"id": insight_id, "body": body})
    return insight


def perform(ctx: ApiContext, project: str, job: dict[str, Any]) -> dict[str, Any]:
    """A worker's part: read the runs (and ask the model), and store the insight ``Succeeded`` with
    its result or ``Failed`` with why; the job's result names the insight."""
    insight = ctx.store.get_insight(project, job["id"])
    try:
        ended = {**insight, "state": "Succeeded", "result": _work(ctx, project, job["body"])()}
    except Exception as exc:  # noqa: BLE001 - the insight records why it failed
        log.warning("insight %s failed: %s", job["id"], exc, exc_info=not isinstance(exc, AssayError))
        ended = {**insight, "state": "Failed", "error": {"message": getattr(exc, "message", None) or str(exc)}}
    ended["metadata"] = {**insight["metadata"], "completedAt": _iso(time.time())}
    ctx.store.update_insight(project, job["id"], ended)
    return {"insightId": job["id"], "state": ended["state"]}


def _work(ctx: ApiContext, project: str, body: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    """The request checked; what makes its result."""
    request = body.get("request")
    kind = request.get("type") if isinstance(request, dict) else None
    if isinstance(request, dict) and kind == "EvaluationComparison":
        treatments = _checked_comparison(ctx, project, request)

        def compare() -> dict[str, Any]:
            return comparison(ctx, request, treatments)

        return compare
    if not isinstance(request, dict) or kind != "EvaluationRunClusterInsight":
        raise ConfigError(
            "request: expected {type: EvaluationRunClusterInsight, evalId, runIds} or "
            "{type: EvaluationComparison, evalId, baselineRunId, treatmentRunIds}",
            hint="AgentClusterInsight is not supported yet",
        )
    eval_id, run_ids = request.get("evalId"), request.get("runIds")
    if not isinstance(eval_id, str) or not isinstance(run_ids, list) or not run_ids:
        raise ConfigError("request: evalId and a non-empty runIds are required")
    for run_id in run_ids:
        ctx.store.get_run_in(project, eval_id, str(run_id))  # a NotFoundError (404) names it
    configuration = request.get("modelConfiguration") or {}
    model_name = configuration.get("modelDeploymentName") if isinstance(configuration, dict) else None
    if not isinstance(configuration, dict) or not isinstance(model_name, str | None):
        raise ConfigError("request.modelConfiguration: expected {modelDeploymentName: <a model's name>}")

    def clustered() -> dict[str, Any]:
        samples = _failures(ctx, eval_id, [str(r) for r in run_ids])
        clusters = [
            _cluster_object(ctx, model_name, samples, found, n)
            for n, found in enumerate(cluster([s.text for s in samples]))
        ]
        clusters = merge_alike(clusters) if model_name else clusters
        return {
            "type": "EvaluationRunClusterInsight",
            "clusterInsight": {
                "summary": {
                    "sampleCount": len(samples),
                    "uniqueClusterCount": len(clusters),
                    "uniqueSubclusterCount": sum(len(c.get("subClusters") or []) for c in clusters),
                    "method": "tfidf-spectral" + ("+model-labels" if model_name else ""),
                },
                "clusters": clusters,
            },
        }

    return clustered


EFFECTS = {
    "too few samples": "TooFewSamples",
    "inconclusive": "Inconclusive",
    "changed": "Changed",
    "improved": "Improved",
    "degraded": "Degraded",
}


def _checked_comparison(ctx: ApiContext, project: str, request: dict[str, Any]) -> list[str]:
    """An ``EvaluationComparison`` request's treatments, its runs found in the project."""
    eval_id, baseline, treatments = request.get("evalId"), request.get("baselineRunId"), request.get("treatmentRunIds")
    if (
        not isinstance(eval_id, str)
        or not isinstance(baseline, str)
        or not isinstance(treatments, list)
        or not treatments
    ):
        raise ConfigError("request: evalId, baselineRunId and a non-empty treatmentRunIds are required")
    for run_id in [baseline, *treatments]:
        ctx.store.get_run_in(project, eval_id, str(run_id))  # a NotFoundError (404) names it
    return [str(t) for t in treatments]


def comparison(ctx: ApiContext, request: dict[str, Any], treatments: list[str]) -> dict[str, Any]:
    """``EvaluationComparison``: each criterion's pass rate, baseline against each treatment, with
    ``assay runs compare``'s tests (McNemar mid-p, Holm) and verdicts in Foundry's words."""
    from assay.stats.compare import compare_runs

    baseline = str(request["baselineRunId"])
    rows: dict[str, dict[str, Any]] = {}
    for treatment in treatments:
        for c in compare_runs(ctx.store, baseline, treatment).criteria:
            row = rows.setdefault(
                c.name,
                {
                    "testingCriteria": c.name,
                    "metric": "pass_rate",
                    "evaluator": c.name,
                    "baselineRunSummary": _summary(baseline, c.n, c.passed_a),
                    "compareItems": [],
                },
            )
            row["compareItems"].append(
                {
                    "treatmentRunId": treatment,
                    "treatmentRunSummary": _summary(treatment, c.n, c.passed_b),
                    "deltaEstimate": c.delta,
                    "pValue": c.p_holm,
                    "treatmentEffect": EFFECTS[c.verdict],
                }
            )
    return {"type": "EvaluationComparison", "comparisons": list(rows.values()), "method": "mcnemar-mid-p-holm"}


def _summary(run_id: str, n: int, passed: int) -> dict[str, Any]:
    rate = passed / n if n else 0.0
    return {"runId": run_id, "sampleCount": n, "average": rate, "standardDeviation": (rate * (1 - rate)) ** 0.5}


@dataclass(frozen=True)
class Failure:
    """A failed result, with the text it is clustered by (its reason and the response)."""

    id: str
    text: str
    run_id: str
    item: int
    result: Result
    response: str
    eval_id: str


def _failures(ctx: ApiContext, eval_id: str, run_ids: list[str]) -> list[Failure]:
    """Every failed result of the runs, with the text it is clustered by."""
    found = []
    for run_id in run_ids:
        for output in ctx.store.iter_output_items(run_id):
            response = (output.sample or {}).get("output_text") or output.datasource_item.get("response") or ""
            for result in output.results:
                if result.status != "completed" or result.passed is not False:
                    continue
                text = f"{result.reason or ''} {response if isinstance(response, str) else ''}"
                found.append(
                    Failure(
                        id=f"{run_id}:{output.datasource_item_id}:{result.name}",
                        text=text,
                        run_id=run_id,
                        item=output.datasource_item_id,
                        result=result,
                        response=response if isinstance(response, str) else "",
                        eval_id=eval_id,
                    )
                )
    return found


def _cluster_object(
    ctx: ApiContext, model_name: str | None, samples: list[Failure], found: Any, number: int
) -> dict[str, Any]:
    members = [samples[i] for i in found.members]
    named = _named(ctx, model_name, members) if model_name else None
    label = (named or {}).get("label") or ", ".join(found.terms) or "failures"
    return {
        "id": f"cluster-{number + 1}",
        "label": label,
        "description": (named or {}).get("description") or f"{len(members)} failed results about {label}",
        "suggestionTitle": (named or {}).get("suggestion_title") or f"Look at the failures about {label}",
        "suggestion": (named or {}).get("suggestion") or "Read the samples' reasons and fix what they have in common.",
        "weight": len(members),
        "samples": [_sample(s) for s in members[:SAMPLES_PER_CLUSTER]],
    }


def merge_alike(clusters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One cluster for the clusters the model named alike (the same label, case and spacing aside),
    the clusters it was made of kept as its ``subClusters``; largest first, numbered again. Words
    alone can split one kind of failure whose texts share none; the model's names put it together."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for found in clusters:
        groups.setdefault(" ".join(str(found["label"]).lower().split()), []).append(found)
    merged = []
    for alike in groups.values():
        if len(alike) == 1:
            merged.append(alike[0])
            continue
        samples = [sample for found in alike for sample in found["samples"]]
        merged.append(
            {
                **alike[0],
                "weight": sum(found["weight"] for found in alike),
                "samples": samples[:SAMPLES_PER_CLUSTER],
                "subClusters": [dict(found) for found in alike],
            }
        )
    merged.sort(key=lambda found: -found["weight"])
    for number, found in enumerate(merged, start=1):
        found["id"] = f"cluster-{number}"
        for part, sub in enumerate(found.get("subClusters") or [], start=1):
            sub["id"] = f"cluster-{number}.{part}"
    return merged


def _sample(sample: Failure) -> dict[str, Any]:
    result = sample.result
    return {
        "id": sample.id,
        "type": "EvaluationResultSample",
        "features": {"criterion": result.name, "reason": result.reason, "response": sample.response[:300]},
        "correlationInfo": {
            "eval_id": sample.eval_id,
            "run_id": sample.run_id,
            "datasource_item_id": sample.item,
        },
        "evaluationResult": {
            "name": result.name,
            "type": result.type,
            "score": result.score,
            "passed": False,
        },
    }


def _named(ctx: ApiContext, model_name: str, members: list[Failure]) -> dict[str, Any] | None:
    """The model's name, description and suggestion for a cluster; None when it gives none."""
    from assay.llm import ModelError
    from assay.llm.structured import ask_structured
    from assay.sync import run_sync

    shown = "\n".join(f"- [{m.result.name}] {m.text[:300]}" for m in members[:15])
    messages = [
        {
            "role": "system",
            "content": "You summarise groups of failed evaluation results for the team that owns the AI system.",
        },
        {
            "role": "user",
            "content": f"# Failed results in one group\n{shown}\n\n# Task\nName what these failures have in common "
            "(a short label), describe it in one sentence, and suggest one fix with a short title. Reply with "
            '{"label": "...", "description": "...", "suggestion_title": "...", "suggestion": "..."}.',
        },
    ]
    model = ctx.models().get(model_name)

    async def ask() -> dict[str, Any] | None:
        try:
            answer, _ = await ask_structured(model, messages, "insight_cluster", NAME_SCHEMA, temperature=0)
            return answer
        except ModelError:
            return None
        finally:
            await model.aclose()

    return run_sync(ask())


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
