"""Which item a reviewer sees next, and how a label's text reads as a verdict."""

from __future__ import annotations

import pytest

from assay.review.labels import from_event, passed_of
from assay.review.queues import a_on_the_left, next_position


def entries(*answered_by: tuple[str | None, list[str]]) -> list[dict]:
    return [
        {"position": n, "assignee": assignee, "answers": {who: [{}] for who in done}}
        for n, (assignee, done) in enumerate(answered_by)
    ]


def test_the_next_item_is_the_reviewers_own_first_unanswered_after_this_one():
    queue = entries(("alice", ["alice"]), ("bob", []), ("alice", []), (None, []), ("alice", []))
    assert next_position(queue, "alice") == 2
    assert next_position(queue, "alice", after=2) == 3  # unassigned items are anyone's
    assert next_position(queue, "alice", after=4) == 2  # past the end: back to the first left
    assert next_position(queue, "bob", after=1) == 3


def test_the_last_item_left_is_not_its_own_next():
    queue = entries(("alice", ["alice"]), ("alice", []))
    assert next_position(queue, "alice", after=1) is None
    assert next_position(queue, "carol") is None  # nothing is carol's


def test_the_order_of_a_pair_is_drawn_per_item_and_fixed():
    drawn = [a_on_the_left("queue_1", item) for item in range(200)]
    assert drawn == [a_on_the_left("queue_1", item) for item in range(200)]
    assert 70 < sum(drawn) < 130  # about half each way


@pytest.mark.parametrize(
    ("text", "passed"),
    [
        ("pass", True),
        ("Thumbs-Up", True),
        ("good", True),
        ("fail", False),
        ("incorrect", False),
        ("meh", None),
        (3, None),
    ],
)
def test_a_labels_text_reads_as_a_verdict(text, passed):
    assert passed_of(text) is passed


def test_an_event_without_an_evaluation_name_is_no_label():
    assert from_event({"gen_ai.evaluation.score.label": "pass"}, trace_id=None, span_id=None, source="otlp") is None
    found = from_event(
        {"gen_ai.evaluation.name": " relevance ", "gen_ai.evaluation.score.value": 4, "assay.datasource_item_id": True},
        trace_id="ab" * 16,
        span_id=None,
        source="otlp",
    )
    assert found is not None and found["criterion"] == "relevance" and found["score"] == 4
    assert found["datasource_item_id"] is None and found["actor_type"] == "human" and found["annotator"] == "otlp"
