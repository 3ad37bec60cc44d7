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
            *_target_columns(item),
        )
        for item in outputs
    ]
    result_rows = [
        (run_id, item.datasource_item_id, r.name, r.metric, r.status, r.passed, r.score, *_usage_columns(r))
        for item in outputs
        for r in item.results
    ]
    usage_rows = [row for item in outputs if item.sample is not None for row in _role_usage(run_id, item)]
    if len(outputs) < len(items):
        for encoded in items:
            if isinstance(encoded, ItemRows):
                item_rows.append(encoded.item)
                result_rows.extend(encoded.results)
                usage_rows.extend(encoded.usage)
    return item_rows, result_rows, usage_rows


def _target_columns(item: OutputItem) -> Row:
    """A target's calls (``TARGET_COLUMNS``), from the sample it produced (a target that made several,
    such as a multi-turn attack, says how many in ``calls`` and ``cache_hits``). An agent is counted a
    call even when it reports no usage; Responses' ``input_tokens``/``output_tokens`` count as tokens."""
    sample = item.sample
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


def _role_usage(run_id: str, item: OutputItem) -> list[Row]:
    """The sample's ``usage_by_role`` (``ROLE_USAGE_COLUMNS``): what the roles beside the target cost
    (a simulated user, an attacker)."""
    entries = (item.sample or {}).get("usage_by_role")
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
    return [(run_id, item.datasource_item_id, role, model, *summed) for (role, model), summed in counts.items()]


def _usage_columns(result: Result) -> Row:
    """Judges report their model calls in ``properties.usage``; stored as columns to sum per run."""
    usage = result.properties.get("usage")
    if not isinstance(usage, dict) or not usage.get("model"):
        return NO_USAGE
    return (_JUDGE_MODEL.clipped(str(usage["model"])), *(int(usage.get(key) or 0) for key in USAGE_COLUMNS))
