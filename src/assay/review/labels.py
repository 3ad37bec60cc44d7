"""Labels: what a person said of a result, and how a run's items find theirs.

A label names the criterion it judges (``gen_ai.evaluation.name``), says pass or fail (a label such
as ``pass``/``fail``/``good``/``bad``, or a verdict), and may give a score and an explanation. It
is bound to a run's item directly (a review queue's answers, ``assay`` events carried back), or
through the trace, span or response it was given on (feedback sent with the OpenTelemetry SDK by
the application that showed the answer): a run over those traces or responses finds it.

Each annotator's newest label counts; where several people labelled an item, the majority of their
verdicts is the human verdict, and a tie is none.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.results.stored import Run
    from assay.store import Store

EVENT_NAME = "gen_ai.evaluation.result"
ACTOR_ATTRIBUTE = "microsoft.gen_ai.evaluation.actor.type"
HUMAN = "human"
PASSING = {"pass", "passed", "true", "yes", "good", "correct", "positive", "thumbs_up", "thumbsup", "up", "1"}
FAILING = {"fail", "failed", "false", "no", "bad", "incorrect", "negative", "thumbs_down", "thumbsdown", "down", "0"}


def passed_of(label: Any) -> bool | None:
    """The verdict a label's text (or boolean) says; None when it says neither."""
    if isinstance(label, bool):
        return label
    if not isinstance(label, str):
        return None
    word = label.strip().lower().replace("-", "_").replace(" ", "_")
    return True if word in PASSING else False if word in FAILING else None


def from_event(
    attributes: dict[str, Any], *, trace_id: str | None, span_id: str | None, source: str
) -> dict[str, Any] | None:
    """The label a ``gen_ai.evaluation.result`` event carries; None when it names no evaluation."""
    name = attributes.get("gen_ai.evaluation.name")
    if not isinstance(name, str) or not name.strip():
        return None
    text = attributes.get("gen_ai.evaluation.score.label")
    score = attributes.get("gen_ai.evaluation.score.value")
    if isinstance(score, bool) or not isinstance(score, int | float):
        score = None
    item = attributes.get("assay.datasource_item_id")
    return {
        "criterion": name.strip(),
        "label": None if text is None else str(text),
        "passed": passed_of(text),
        "score": score,
        "explanation": _text(attributes.get("gen_ai.evaluation.explanation")),
        "annotator": str(attributes.get("user.id") or attributes.get("enduser.id") or "otlp"),
        "actor_type": str(attributes.get(ACTOR_ATTRIBUTE) or HUMAN),
        "source": source,
        "trace_id": trace_id or None,
        "span_id": span_id or None,
        "response_id": _text(attributes.get("gen_ai.response.id")),
        "run_id": _text(attributes.get("assay.run.id")),
        "datasource_item_id": item if isinstance(item, int) and not isinstance(item, bool) else None,
    }


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def item_keys(item: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The trace ids and response ids an item (as a run stored it) was made from."""
    traces = [item.get("trace_id"), *(item.get("trace_ids") or [])]
    responses = [item.get("response_id"), item.get("resp_id")]
    return [str(t) for t in traces if t], [str(r) for r in responses if r]


def labels_for_run(store: Store, run: Run) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """(criterion, item) → the human labels on that item of the run, oldest first: those given on
    the run's items and those given on the traces or responses its items came from."""
    by_trace: dict[str, list[int]] = {}
    by_response: dict[str, list[int]] = {}
    spans: dict[tuple[str, str], int] = {}
    for output in store.iter_output_items(run.id):
        item_id, item = output.datasource_item_id, output.datasource_item
        traces, responses = item_keys(item)
        for trace in traces:
            by_trace.setdefault(trace, []).append(item_id)
        for response in responses:
            by_response.setdefault(response, []).append(item_id)
        if item.get("span_id") and item.get("trace_id"):
            spans[(str(item["trace_id"]), str(item["span_id"]))] = item_id
    found: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for label in store.labels_of(run.project, run_id=run.id, trace_ids=list(by_trace), response_ids=list(by_response)):
        if label["actor_type"] != HUMAN:
            continue
        for item_id in _items_of(label, run.id, by_trace, by_response, spans):
            found.setdefault((label["criterion"], item_id), []).append(label)
    return found


def _items_of(
    label: dict[str, Any],
    run_id: str,
    by_trace: dict[str, list[int]],
    by_response: dict[str, list[int]],
    spans: dict[tuple[str, str], int],
) -> list[int]:
    if label["run_id"] == run_id and label["datasource_item_id"] is not None:
        return [label["datasource_item_id"]]
    if label["response_id"] in by_response:
        return by_response[label["response_id"]]
    if (label["trace_id"], label["span_id"]) in spans:
        return [spans[(label["trace_id"], label["span_id"])]]
    return by_trace.get(label["trace_id"] or "", [])


def human_verdicts(store: Store, run: Run) -> dict[str, dict[int, dict[str, Any]]]:
    """criterion → item → ``{passed, score, annotators}``: each annotator's newest label, the
    majority verdict of the annotators (a tie is left out) and their mean score."""
    verdicts: dict[str, dict[int, dict[str, Any]]] = {}
    for (criterion, item_id), labels in labels_for_run(store, run).items():
        newest = {label["annotator"]: label for label in labels}  # oldest first: the newest wins
        votes = Counter(label["passed"] for label in newest.values() if label["passed"] is not None)
        if votes[True] == votes[False]:
            continue
        scores = [float(label["score"]) for label in newest.values() if label["score"] is not None]
        verdicts.setdefault(criterion, {})[item_id] = {
            "passed": votes[True] > votes[False],
            "score": sum(scores) / len(scores) if scores else None,
            "annotators": sorted(newest),
        }
    return verdicts
