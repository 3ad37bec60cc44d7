"""Alerts as an outbox: stored when found, delivered apart from the firer by a pool that gives no
host more than its share, retried with backoff on 5xx and timeouts, each attempt kept, and of two
servers on one store exactly one delivering each attempt. The clock is injected: a retry's wait
passes when the test moves the clock, never by sleeping."""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections import Counter

from assay.api import alerts
from assay.api.alerts import ATTEMPTS, Outbox, alert_object
from tests.support.fixtures import poll
from tests.support.servers import scripted_receiver


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def queue(store, project: str, run_key: str, url: str, secret: str | None = None) -> None:
    """An alert found and put in the outbox, as ``check_finished`` does."""
    assert store.claim_alert(project, run_key, "schedule", f"sched-{run_key}")
    payload = {"type": "run_failed", "runId": run_key, "project": project}
    target = {"url": url, **({"secret": secret} if secret else {})}
    store.record_alert(
        project, run_key, kind="run_failed", payload=payload, target=target, state="pending", next_attempt_at=0.0
    )


def settle(outboxes, store, clock: Clock, project: str) -> list[dict]:
    """Pump until every alert of ``project`` has left ``pending``, moving the clock past each backoff."""
    for _ in range(ATTEMPTS * 3):
        for outbox in outboxes:
            outbox.pump()
        poll(lambda: all(o.idle() for o in outboxes), bool, seconds=30)
        rows = store.alerts_of(project)
        if all(row["state"] != "pending" for row in rows):
            return rows
        clock.now += alerts.LONGEST_WAIT + 1
    raise AssertionError(f"still pending: {store.alerts_of(project)}")


def test_a_webhook_that_fails_twice_gets_the_alert_once_on_the_third_attempt(store):
    clock, release = Clock(), threading.Event()
    with scripted_receiver(lambda n: 500 if n < 2 else 200, release) as (url, got):
        queue(store, "shop", "run_1", url, secret="s3cret")
        (row,) = settle([Outbox(store, "a", clock=clock)], store, clock, "shop")
    assert row["state"] == "delivered" and row["attempts"] == 3
    assert [a["status"] for a in row["attempt_log"]] == [500, 500, 200]
    assert [a["attempt"] for a in row["attempt_log"]] == [1, 2, 3]
    assert row["attempt_log"][1]["at"] >= row["attempt_log"][0]["at"] + alerts.BACKOFF_SECONDS / 2  # it waited
    assert [h["x-assay-attempt"] for h, _ in got] == ["1", "2", "3"]
    assert {h["x-assay-delivery"] for h, _ in got} == {"shop/run_1"}  # the receiver can tell a repeat
    headers, body = got[-1]
    assert headers["x-assay-signature"] == "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    shown = alert_object(row)
    assert shown["state"] == "delivered" and [a["status"] for a in shown["attempts"]] == [500, 500, 200]


def test_a_webhook_that_never_answers_is_tried_to_the_last_attempt_then_failed(store):
    clock, release = Clock(), threading.Event()
    with scripted_receiver(lambda n: None, release) as (url, got):
        queue(store, "shop", "run_1", url)
        (row,) = settle([Outbox(store, "a", timeout=0.3, clock=clock)], store, clock, "shop")
    assert row["state"] == "failed" and row["attempts"] == ATTEMPTS == len(got)
    assert all(a["status"] is None and "timed out" in a["error"] for a in row["attempt_log"])


def test_a_refusal_for_good_is_not_retried(store):
    clock, release = Clock(), threading.Event()
    with scripted_receiver(lambda n: 404, release) as (url, got):
        queue(store, "shop", "run_1", url)
        (row,) = settle([Outbox(store, "a", clock=clock)], store, clock, "shop")
    assert row["state"] == "failed" and [a["status"] for a in row["attempt_log"]] == [404] and len(got) == 1


def test_a_dead_webhook_holds_no_more_than_its_share_and_delays_no_other(store):
    """More alerts to a webhook that holds every request open than the outbox reads at once, due
    before one to a working webhook, with four delivery threads: the dead host gets two of them,
    and the working one's alert is delivered while the dead one still holds its requests (the old
    firer thread waited on each in turn)."""
    clock, release = Clock(), threading.Event()
    with (
        scripted_receiver(lambda n: None, release) as (dead, held),
        scripted_receiver(lambda n: 204, threading.Event()) as (alive, got),
    ):
        for n in range(alerts.PAGE + 10):
            queue(store, "quiet", f"dead_{n:03}", dead.replace("127.0.0.1", "localhost"))
        queue(store, "zeta", "fine", alive)  # read last: after every dead one
        outbox = Outbox(store, "a", workers=4, per_host=2, timeout=60, clock=clock)
        outbox.pump()
        delivered = poll(lambda: store.alerts_of("zeta")[0]["state"], lambda s: s == "delivered", seconds=30)
        assert delivered == "delivered" and len(got) == 1
        assert len(poll(lambda: list(held), lambda h: len(h) == 2, seconds=30)) == 2  # its share, no more
        assert not outbox.idle()  # the dead webhook's requests are still open
        release.set()


def test_two_servers_on_one_store_deliver_each_alert_once(store):
    clock, release = Clock(), threading.Event()

    def answers(n: int) -> int:
        return 500 if n % 3 == 0 else 200

    with scripted_receiver(answers, release) as (url, got):
        for n in range(12):
            queue(store, f"p{n % 3}", f"run_{n}", url)
        outboxes = [Outbox(store, f"server-{i}", workers=4, per_host=4, clock=clock) for i in range(2)]
        rows = [row for project in ("p0", "p1", "p2") for row in settle(outboxes, store, clock, project)]
    assert all(row["state"] == "delivered" for row in rows)
    assert len(got) == sum(row["attempts"] for row in rows)  # every attempt made once and kept once
    accepted = Counter(headers["x-assay-delivery"] for n, (headers, _) in enumerate(got) if answers(n) < 300)
    assert accepted == Counter({f"p{n % 3}/run_{n}": 1 for n in range(12)})  # each alert taken exactly once
