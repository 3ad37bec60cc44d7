"""Review queues: a run's items put before people, one at a time.

A queue reviews one run's items (a run over traces reviews those traces' turns): ``single``, each
item judged pass or fail on each of the queue's criteria; or ``pairwise``, the item's outputs of two
runs side by side, in an order fixed per item at random (so neither run always sits on the left),
the reviewer preferring one or calling a tie. Items are dealt to the reviewers named in turn; with
none named any reviewer takes any item. The evaluator's verdict stays hidden until the reviewer has
answered. Answers are labels (``assay.review.labels``): appended, never changed.
"""

from __future__ import annotations

import random
import zlib
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.results import OutputItem
    from assay.store import Store

PREFERENCE = "preference"
"""The criterion a pairwise queue's answers are stored under; the label is the preferred run's id or ``tie``."""
WHICH = ("all", "failed", "passed")


def create_queue(
    store: Store,
    project: str,
    run_id: str,
    *,
    name: str | None = None,
    against: str | None = None,
    criteria: list[str] | None = None,
    reviewers: list[str] | None = None,
    which: str = "all",
    limit: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """A queue over ``run_id``'s items (those ``which`` selects, ``limit`` of them drawn at random)."""
    if which not in WHICH:
        raise ConfigError(f"items: {which!r} is not one of {', '.join(WHICH)}")
    outputs = {o.datasource_item_id: o for o in store.iter_output_items(run_id)}
    judged = sorted({r.name for o in outputs.values() for r in o.results if r.passed is not None})
    chosen = criteria or judged
    unknown = sorted(set(chosen) - {r.name for o in outputs.values() for r in o.results})
    if unknown:
        raise ConfigError(
            f"criterion: {', '.join(unknown)} is not a criterion of {run_id}",
            hint=f"one of {', '.join(judged) or '(none judged)'}",
        )
    ids = [i for i, o in outputs.items() if _selected(o, which)]
    if against is not None:
        theirs = {o.datasource_item_id for o in store.iter_output_items(against)}
        ids = [i for i in ids if i in theirs]
    if not ids:
        raise ConfigError(f"{run_id} has no {'' if which == 'all' else which + ' '}items to review")
    random.Random(seed).shuffle(ids)
    ids = ids[:limit] if limit else ids
    people = [r.strip() for r in reviewers or [] if r.strip()]
    body = {
        "name": name or f"review of {store.get_run(run_id).name or run_id}",
        "run_id": run_id,
        "against_run_id": against,
        "mode": "pairwise" if against else "single",
        "criteria": [PREFERENCE] if against else chosen,
        "reviewers": people,
        "items": which,
    }
    dealt = [(item, people[n % len(people)] if people else None) for n, item in enumerate(ids)]
    return store.create_queue(project, body, dealt)


def _selected(output: OutputItem, which: str) -> bool:
    verdicts = [r.passed for r in output.results if r.passed is not None]
    if which == "failed":
        return False in verdicts
    if which == "passed":
        return bool(verdicts) and all(verdicts)
    return True


def a_on_the_left(queue_id: str, item_id: int) -> bool:
    """Whether the queue's own run is shown first for this item: fixed per item, even across items."""
    return zlib.crc32(f"{queue_id}\0{item_id}".encode()) % 2 == 0


def progress(store: Store, queue: dict[str, Any]) -> list[dict[str, Any]]:
    """The queue's items in order, each with who answered it (reviewer → their newest labels)."""
    answered: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for label in store.labels_of(queue["project"], queue_id=queue["id"]):
        answered.setdefault(label["datasource_item_id"], {}).setdefault(label["annotator"], []).append(label)
    return [
        {**entry, "answers": answered.get(entry["datasource_item_id"], {})}
        for entry in store.queue_items(queue["project"], queue["id"])
    ]


def answered(entries: list[dict[str, Any]]) -> int:
    """How many of a queue's items (``progress``) someone has answered."""
    return sum(1 for entry in entries if entry["answers"])


def next_position(entries: list[dict[str, Any]], reviewer: str, after: int = -1) -> int | None:
    """The first item after ``after`` this reviewer may answer and has not; else the first before it
    (never ``after`` itself: the item on screen is not its own next)."""
    open_to_them: list[int] = [
        e["position"]
        for e in entries
        if e["assignee"] in (None, reviewer) and reviewer not in e["answers"] and e["position"] != after
    ]
    later = [p for p in open_to_them if p > after]
    return (later or open_to_them or [None])[0]  # type: ignore[list-item]


def answer(
    store: Store,
    queue: dict[str, Any],
    item_id: int,
    reviewer: str,
    verdicts: dict[str, str],
    *,
    scores: dict[str, float] | None = None,
    comment: str | None = None,
) -> list[dict[str, Any]]:
    """Append the reviewer's labels on one item: ``verdicts`` is criterion → ``pass``/``fail`` (single)
    or ``preference`` → the preferred run's id or ``tie`` (pairwise)."""
    body = queue["body"]
    if not reviewer.strip():
        raise ConfigError("reviewer: say who you are before answering")
    wanted = set(body["criteria"])
    unknown = sorted(set(verdicts) - wanted)
    if unknown or not verdicts:
        raise ConfigError(f"answer: expected a verdict on {', '.join(sorted(wanted))}")
    allowed = {body["run_id"], body["against_run_id"], "tie"} if body["mode"] == "pairwise" else {"pass", "fail"}
    for criterion, verdict in verdicts.items():
        if verdict not in allowed:
            raise ConfigError(f"{criterion}: {verdict!r} is not one of {', '.join(sorted(map(str, allowed)))}")
    labels = [
        {
            "criterion": criterion,
            "label": verdict,
            "passed": {"pass": True, "fail": False}.get(verdict),
            "score": (scores or {}).get(criterion),
            "explanation": comment or None,
            "annotator": reviewer.strip(),
            "actor_type": "human",
            "source": "review",
            "run_id": body["run_id"],
            "datasource_item_id": item_id,
            "queue_id": queue["id"],
        }
        for criterion, verdict in verdicts.items()
    ]
    return store.add_labels(queue["project"], labels)
