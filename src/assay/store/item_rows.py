"""An output item as the rows it is stored as: one ``output_items`` row (``ITEM_COLUMNS``), a
``results`` row per criterion (``RESULT_COLUMNS``) and an ``item_usage`` row per role beside the
target (``ROLE_USAGE_COLUMNS``).

The writer encodes the items it is given; a process that only computes (a Ray actor) may encode its
own (``encode_item``) and hand over ``ItemRows``, which the writer inserts as they are: the JSON and
the tuples are built where the item was evaluated, and the process that writes only inserts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import orjson

from assay.results import OutputItem, Result
from assay.store import tables as t
from assay.store import values
from assay.store.tally import ROLE_COUNTS, USAGE_COLUMNS

Row = tuple[Any, ...]

NO_TARGET = (None, 0, 0, 0, 0)
NO_USAGE = (None, *(0 for _ in USAGE_COLUMNS))
_USAGE_MODEL = cast(values.StoreText, t.item_usage.c.model.type)
_TARGET_MODEL = cast(values.StoreText, t.output_items.c.target_model.type)
_JUDGE_MODEL = cast(values.StoreText, t.results.c.model.type)


class ItemRows(NamedTuple):
    """One output item, encoded."""

    item: Row
    results: list[Row]
    usage: list[Row]


class ResultForm:
    """How a criterion's plain results are stored: completed, a finite float score, a bool verdict
    and nothing else of their own (no reason, no properties), so that every field but the score and
    the verdict is the criterion's. A run that only computes encodes such results from the score and
    the verdict alone (``encode_verdicts``), without a ``Result`` to build and read back: the text is
    the criterion's, spliced once per criterion, with the score's JSON between."""

    __slots__ = ("type", "name", "metric", "threshold", "columns", "_head", "_tails")

    def __init__(self, type: str, name: str, metric: str, threshold: float) -> None:
        self.type, self.name, self.metric, self.threshold = type, name, metric, threshold
        self.columns = (name, metric, "completed")
        """A result row's columns after the item's id and before the verdict (``RESULT_COLUMNS``)."""
        # A result's JSON is its fields in their order (``results_json``): the score is the fourth.
        known = orjson.dumps({"type": type, "name": name, "metric": metric}).decode()
        self._head = known[:-1] + ',"score":'
        self._tails = tuple(
            f',"label":"{label}","passed":{verdict},"threshold":{orjson.dumps(threshold).decode()},'
            '"reason":null,"status":"completed","properties":{}}'
            for label, verdict in (("fail", "false"), ("pass", "true"))
        )

    @classmethod
    def of(cls, type: str, name: str, metric: str, threshold: float) -> ResultForm | None:
        """The form, or None where the criterion's fields are not written as orjson writes them (a
        name holding NUL or a lone surrogate): its results are then encoded as any others are."""
        try:
            form = cls(type, name, metric, threshold)
        except (TypeError, orjson.JSONEncodeError):
            return None
        for passed in (False, True):  # the form must write what the general encoding writes
            if f"[{form.json(0.25, passed)}]" != results_json([form.result(0.25, passed)]):
                return None
        return form

    def json(self, score: float, passed: bool) -> str:
        """The result's JSON, as ``results_json`` writes it (a finite ``score``)."""
        return self._head + orjson.dumps(score).decode() + self._tails[passed]

    def result(self, score: float, passed: bool) -> Result:
        """The result itself, for an item whose other results are not plain."""
        return Result.checked(self.type, self.name, self.metric, score, passed, self.threshold, None, {})


Verdict = tuple[ResultForm, float, bool]
"""A plain result, as its form, its finite float score and its verdict (a tuple: one is made per item
and criterion of a run that only computes)."""


def encode_verdicts(
    run_id: str,
    index: int,
    item: dict[str, Any],
    sample: dict[str, Any] | None,
    verdicts: list[Verdict],
    created: int,
    *,
    finite: bool = False,
) -> ItemRows:
    """The rows of an output item whose every result is plain: what ``encode_items`` makes of it
    (every result completed with a verdict, the item passes when each passed: ``status_of``).
    ``finite``: the item and sample hold no NaN or infinite float (``Row.finite``)."""
    if len(verdicts) == 1:  # most runs judge an item by one criterion
        ((form, score, passed),) = verdicts
        results = f"[{form.json(score, passed)}]"
    else:
        passed = all(verdict[2] for verdict in verdicts)
        results = f"[{','.join([form.json(score, verdict) for form, score, verdict in verdicts])}]"
    if sample is None:  # a run with no target, on items without their samples
        sample_json, target, usage = "null", NO_TARGET, []
    else:
        sample_json, target = values.dumps(sample, finite=finite), _target_columns(sample)
        usage = _role_usage(run_id, index, sample)
    status = "pass" if passed else "fail"
    item_row = (run_id, index, status, values.dumps(item, finite=finite), sample_json, results, created, *target)
    rows = [(run_id, index, *form.columns, verdict, score, *NO_USAGE) for form, score, verdict in verdicts]
    return ItemRows(item_row, rows, usage)


def encode_item(run_id: str, item: OutputItem, created: int) -> ItemRows:
    """``item`` as the rows ``add_output_items`` inserts for it, ``created`` its ``created_at``."""
    item_rows, result_rows, usage_rows = encode_items(run_id, [item], created)
    return ItemRows(item_rows[0], result_rows, usage_rows)


def encode_items(
    run_id: str, items: Sequence[OutputItem | ItemRows], created: int
) -> tuple[list[Row], list[Row], list[Row]]:
    """A batch's item, result and usage rows; ``ItemRows`` are taken as they are."""
    outputs = [item for item in items if not isinstance(item, ItemRows)]
    item_rows = [
        (
            run_id,
            item.datasource_item_id,
            item.status,
            values.dumps(item.datasource_item),
            values.dumps(item.sample),
            results_json(item.results),
            created,
            *_target_columns(item.sample),
        )
        for item in outputs
    ]
    result_rows = [
        (run_id, item.datasource_item_id, r.name, r.metric, r.status, r.passed, r.score, *_usage_columns(r))
        for item in outputs
        for r in item.results
    ]
    usage_rows = [
        row
        for item in outputs
        if item.sample is not None
        for row in _role_usage(run_id, item.datasource_item_id, item.sample)
    ]
    if len(outputs) < len(items):
        for encoded in items:
            if isinstance(encoded, ItemRows):
                item_rows.append(encoded.item)
                result_rows.extend(encoded.results)
                usage_rows.extend(encoded.usage)
    return item_rows, result_rows, usage_rows


def _target_columns(sample: dict[str, Any] | None) -> Row:
    """A target's calls (``TARGET_COLUMNS``), from the sample it produced (a target that made several,
    such as a multi-turn attack, says how many in ``calls`` and ``cache_hits``). An agent is counted a
    call even when it reports no usage; Responses' ``input_tokens``/``output_tokens`` count as tokens."""
    if not sample:
        return NO_TARGET
    usage: dict[str, Any] = sample["usage"] if isinstance(sample.get("usage"), dict) else {}
    name = sample.get("model") or sample.get("agent")
    if not name or not (usage or sample.get("agent")):
        return NO_TARGET
    cached = bool(sample.get("cached"))
    calls, hits = sample.get("calls"), sample.get("cache_hits")
    if not (isinstance(calls, int) and isinstance(hits, int)):
        calls, hits = (0, 1) if cached else (1, 0)
    return (
        _TARGET_MODEL.clipped(str(name)),  # a sample's model may come from the data, of any length
        calls,
        hits,
        int(usage.get("prompt_tokens") or usage.get("input_tokens") or 0),
        int(usage.get("completion_tokens") or usage.get("output_tokens") or 0),
    )


def results_json(results: list[Result]) -> str:
    """An item's results as its JSON column holds them (``values.dumps`` of their dumps), encoded
    straight from the models' fields. Every result has nulls (no reason, no label), so the nulls are
    counted rather than the text read back to tell them from a NaN (a hot path: once per item)."""
    fields = [result.__dict__ for result in results]  # a model's fields, in their order
    text = values.dumps_counted(fields, sum(list(known.values()).count(None) for known in fields))
    return text if text is not None else values.dumps([result.model_dump() for result in results])


def _role_usage(run_id: str, item_id: int, sample: dict[str, Any]) -> list[Row]:
    """The sample's ``usage_by_role`` (``ROLE_USAGE_COLUMNS``): what the roles beside the target cost
    (a simulated user, an attacker)."""
    entries = sample.get("usage_by_role")
    if not isinstance(entries, list):
        return []
    counts: dict[tuple[str, str], list[int]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("model") or not entry.get("role"):
            continue
        # The name as the column keeps it (cleaned, clipped), so the tally counts what is stored.
        model = _USAGE_MODEL.clipped(str(entry["model"]))
        summed = counts.setdefault((str(entry["role"]), model), [0] * len(ROLE_COUNTS))
        for index, name in enumerate(ROLE_COUNTS):
            summed[index] += int(entry.get(name) or 0)
    return [(run_id, item_id, role, model, *summed) for (role, model), summed in counts.items()]


def _usage_columns(result: Result) -> Row:
    """Judges report their model calls in ``properties.usage``; stored as columns to sum per run."""
    usage = result.properties.get("usage")
    if not isinstance(usage, dict) or not usage.get("model"):
        return NO_USAGE
    return (_JUDGE_MODEL.clipped(str(usage["model"])), *(int(usage.get(key) or 0) for key in USAGE_COLUMNS))
