"""The `deliver` target under Pub/Sub's at-least-once delivery: each way a message can come
twice, late, early or not at all is injected with the Pub/Sub emulator's own messages and
redeliveries, and the Slack stand-in shows one post per occurrence, the ledger `sent`."""

from __future__ import annotations

import base64
import json
import threading
from datetime import timedelta
from math import comb
from typing import Any

import pytest

from core.models import message_delivery_id
from core.pubsub import DueOccurrence
from core.store import MESSAGES
from emulator.slack_faults import Fault
from processor.publish import publish
from targets.deliver import deliver_occurrence
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.oidc import AUDIENCE, TRIGGER, mint
from tests.fixtures.pubsub import Pulled, Subscription, push
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import orchestrate

pytestmark = pytest.mark.usefixtures("fresh_certs_cache")


def published(rt: Any, *ids: str, channel: str = "C0123ABCD") -> None:
    """What a tick publishes for these due messages (due at T0)."""
    counts = publish(rt, [DueOccurrence("message", i, T0, channel) for i in ids])
    assert counts["published"] == len(ids)


def sent_once(db: Any, slack: Any, doc_id: str) -> None:
    delivery_id = message_delivery_id(doc_id, T0)
    assert slack.delivery_ids() == [delivery_id]  # one post, this occurrence's
    assert ledger(db)[delivery_id]["status"] == "sent"
    assert message(db, doc_id)["status"] == "sent"


@pytest.fixture
def rt(settings: Any, db: Any, clock: Any, pubsub: Subscription) -> Any:
    """The tick's runtime (settings read after the fixture set DISPATCH=pubsub)."""
    from core.settings import Settings

    return make_runtime(Settings.from_env(), db, clock, "tick")


def test_a_pushed_message_is_claimed_sent_and_recorded(rt, pubsub, deliver, db, slack):
    seed_message(db, "m1")
    published(rt, "m1")
    (pulled,) = pubsub.pull()

    assert push(deliver, pulled) == 200

    sent_once(db, slack, "m1")


def test_a_redelivered_message_posts_nothing_again(rt, pubsub, deliver, db, slack):
    seed_message(db, "m1")
    published(rt, "m1")
    (first,) = pubsub.pull()
    assert push(deliver, first) == 200
    pubsub.nack(first)  # the ack was lost: Pub/Sub delivers the same message again

    (again,) = pubsub.pull()
    assert again.message_id == first.message_id
    assert push(deliver, again) == 200

    sent_once(db, slack, "m1")


def test_a_nacked_message_is_delivered_once_when_it_comes_back(rt, pubsub, deliver, db, slack):
    seed_message(db, "m1")
    published(rt, "m1")
    (first,) = pubsub.pull()
    pubsub.nack(first)  # a subscriber that gave it back unhandled

    (again,) = pubsub.pull()
    assert push(deliver, again) == 200
    pubsub.ack(again)

    sent_once(db, slack, "m1")
    assert pubsub.is_empty()


def test_a_push_that_failed_is_redelivered_and_then_sent_once(
    rt, pubsub, deliver, db, slack, monkeypatch
):
    seed_message(db, "m1")
    published(rt, "m1")
    (first,) = pubsub.pull()
    monkeypatch.setenv("LEASE_SECONDS", "1")  # a broken deployment: settings refused

    assert push(deliver, first) == 500  # a nack: Pub/Sub pushes it again
    pubsub.nack(first)
    assert slack.posts() == []
    monkeypatch.setenv("LEASE_SECONDS", "300")  # fixed
    (again,) = pubsub.pull()
    assert push(deliver, again) == 200

    sent_once(db, slack, "m1")


def test_duplicate_publishes_of_one_occurrence_post_once(rt, pubsub, deliver, db, slack):
    seed_message(db, "m1")
    published(rt, "m1")
    published(rt, "m1")  # the publisher retried a publish that had landed

    both = pubsub.pull(2)

    assert len({p.message_id for p in both}) == 2
    assert [push(deliver, p) for p in both] == [200, 200]
    sent_once(db, slack, "m1")


def test_messages_delivered_out_of_order_each_post_once(rt, pubsub, deliver, db, slack):
    seed_message(db, "early", next_run_at=T0 - timedelta(minutes=1))
    seed_message(db, "late")
    publish(
        rt,
        [
            DueOccurrence("message", "early", T0 - timedelta(minutes=1), "C0123ABCD"),
            DueOccurrence("message", "late", T0, "C0123ABCD"),
        ],
    )
    early, late = pubsub.pull(2)

    assert [push(deliver, late), push(deliver, early)] == [200, 200]

    assert slack.delivery_ids() == [
        message_delivery_id("late", T0),
        message_delivery_id("early", T0 - timedelta(minutes=1)),
    ]
    assert message(db, "early")["status"] == message(db, "late")["status"] == "sent"


def test_a_redelivery_while_the_first_delivery_is_still_sending_posts_nothing(
    rt, pubsub, deliver, db, slack, monkeypatch
):
    # The post is made at once and answered after 3 s; Slack is given 5 s to answer.
    monkeypatch.setenv("SLACK_TIMEOUT_SECONDS", "5")
    slack.inject(Fault("slow", delay=3.0, times=1))
    seed_message(db, "m1")
    published(rt, "m1")
    (first,) = pubsub.pull()
    statuses: list[int] = []
    sending = threading.Thread(target=lambda: statuses.append(push(deliver, first)))
    sending.start()
    for _ in range(200):  # bounded: until the stand-in has the post
        if slack.posts():
            break
        sending.join(0.02)
    assert len(slack.posts()) == 1
    # The ack deadline runs out mid-send: Pub/Sub hands the message to another instance.
    pubsub.nack(first)
    (again,) = pubsub.pull()

    assert push(deliver, again) == 200
    assert sending.is_alive()  # the first delivery was still waiting for Slack's answer

    sending.join(30)
    assert statuses == [200]
    sent_once(db, slack, "m1")


def test_a_message_for_a_deleted_document_is_acknowledged(rt, pubsub, deliver, db, slack):
    published(rt, "gone")
    (pulled,) = pubsub.pull()

    assert push(deliver, pulled) == 200
    assert slack.posts() == []


def malformed(pulled: Pulled, data: Any) -> Pulled:
    raw = data if isinstance(data, str) else base64.b64encode(json.dumps(data).encode()).decode()
    body = {**pulled.push, "message": {**pulled.push["message"], "data": raw}}
    return pulled._replace(push=body)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ("%%% not base64", "message.data"),
        (base64.b64encode(b"[1, 2]").decode(), "message.data"),
        ({"format": 3, "kind": "message", "subject_id": "m1", "due_at": T0.isoformat()}, "format"),
        (
            {"format": 2, "kind": "message", "subject_id": "m1", "due_at": T0.isoformat()},
            "document",
        ),
        ({"format": 1, "kind": "memo", "subject_id": "m1", "due_at": T0.isoformat()}, "kind"),
        ({"format": 1, "kind": "message", "due_at": T0.isoformat()}, "subject_id"),
        ({"format": 1, "kind": "message", "subject_id": "a/b", "due_at": "x"}, "due_at"),
        (
            {"format": 1, "kind": "message", "subject_id": "a/b", "due_at": T0.isoformat()},
            "subject_id",
        ),
    ],
)
def test_a_malformed_message_is_logged_naming_the_field_and_acknowledged(
    rt, pubsub, deliver, db, slack, capsys, data, field
):
    seed_message(db, "m1")
    published(rt, "m1")
    (pulled,) = pubsub.pull()
    capsys.readouterr()

    assert push(deliver, malformed(pulled, data)) == 200

    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    (line,) = [line for line in lines if line.get("status") == "malformed"]
    assert (line["severity"], line["field"]) == ("WARNING", field)
    assert line["pubsub_message_id"] == pulled.message_id
    assert slack.posts() == []
    assert message(db, "m1")["status"] == "pending"  # still due: the next tick publishes it


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer wrong-token"}, {"Authorization": "Basic x"}]
)
def test_an_unauthenticated_push_is_refused_and_posts_nothing(
    rt, pubsub, deliver, db, slack, headers
):
    seed_message(db, "m1")
    published(rt, "m1")
    (pulled,) = pubsub.pull()

    assert push(deliver, pulled, headers) == 401

    assert slack.posts() == []
    assert message(db, "m1")["status"] == "pending"


def test_a_push_signed_by_the_subscriptions_service_account_is_delivered(
    rt, pubsub, deliver, db, slack, signing_key, certs_server, monkeypatch
):
    # A push subscription's OIDC token: Google-signed, for TICK_AUDIENCE, as TRIGGER.
    monkeypatch.setenv("TICK_AUDIENCE", AUDIENCE)
    monkeypatch.setenv("TRIGGER_SERVICE_ACCOUNTS", TRIGGER)
    monkeypatch.setenv("OIDC_CERTS_URL", certs_server.url)
    seed_message(db, "m1")
    published(rt, "m1")
    (pulled,) = pubsub.pull()

    assert push(deliver, pulled, {"Authorization": f"Bearer {mint(signing_key)}"}) == 200

    sent_once(db, slack, "m1")


def _bare(db: Any) -> DueOccurrence:
    """A format-1 message: `deliver` reads the document."""
    return DueOccurrence("message", seed_message(db), T0, "C0123ABCD")


def _carried(db: Any) -> DueOccurrence:
    """A format-2 message, carrying the document as the tick read it: both instances claim
    under the same update time."""
    ref = db.collection(MESSAGES).document(seed_message(db))
    occurrence = DueOccurrence.for_snapshot("message", ref.get(), "C0123ABCD")
    assert occurrence is not None
    return occurrence


@pytest.mark.parametrize("occurrence_of", [_bare, _carried], ids=["format-1", "carried"])
def test_two_instances_delivering_one_message_post_once_in_every_interleaving(
    settings, db, slack, clock, occurrence_of
):
    # Redelivery, duplicate publishes and an expired ack deadline all come down to this: two
    # `deliver` instances handed the same occurrence at once. orchestrate runs them through
    # every interleaving of the pipeline's SYNCPOINTs (the claim's commit, the send).
    rounds: list[DueOccurrence] = []
    arrivals = iter(range(10_000))

    def instance(name: str) -> Any:
        rt = make_runtime(settings, db, clock, name)

        def run() -> None:
            if next(arrivals) % 2 == 0:  # the first of a round seeds its message
                rounds.append(occurrence_of(db))
            deliver_occurrence(rt, rounds[-1], "pubsub-1")  # pragma: SYNCPOINT deliver

        return run

    counts = orchestrate(instance("deliver-1"), instance("deliver-2"), name="deliver")

    assert min(counts) >= 2  # each instance paused at least once on its own
    assert len(rounds) == comb(sum(counts), counts[0])  # one round per interleaving
    ids = [o.subject_id for o in rounds]
    assert sorted(slack.delivery_ids()) == sorted(message_delivery_id(m, T0) for m in ids)
    assert all(ledger(db)[message_delivery_id(m, T0)]["status"] == "sent" for m in ids)


def test_deliver_holds_its_channel_a_second_and_hands_a_long_retry_after_back(
    rt, pubsub, deliver, db, slack, clock
):
    """The acknowledgement releases the channel's next message (ordering), so `deliver`
    returns only a second after Slack answered; a Retry-After longer than it may wait is
    answered 429, and Pub/Sub redelivers the message later, the channel's others behind it."""
    slack.set_rate_limit("chat.postMessage", 1, per_seconds=60)
    seed_message(db, "m1")
    seed_message(db, "m2")
    published(rt, "m1", "m2")
    (first,) = pubsub.pull()
    before = clock.now()

    assert push(deliver, first) == 200
    assert clock.now() - before == timedelta(seconds=1)  # waited out the channel's second
    pubsub.ack(first)
    (second,) = pubsub.pull()
    assert second.message_id != first.message_id

    assert push(deliver, second) == 429  # Slack said wait ~59 s: not acknowledged
    assert slack.delivery_ids() == [message_delivery_id("m1", T0)]
    assert message(db, "m2")["status"] == "pending"  # released, still due later


def test_a_run_of_429s_is_waited_out_in_one_delivery_and_nothing_overtakes_it(
    rt, pubsub, deliver, db, slack, clock
):
    """Six 429s in a row: the delivery waits out each Retry-After itself, so the message is
    never nacked (Pub/Sub counts no attempt toward the dead-letter topic), it is sent once,
    and the channel's next message is handed out only after it."""
    slack.inject(Fault(kind="rate_limit", retry_after=2, times=6))
    seed_message(db, "m1")
    seed_message(db, "m2")
    published(rt, "m1", "m2")
    (first,) = pubsub.pull()

    assert push(deliver, first) == 200  # one push, answered once the post went out
    assert pubsub.is_empty()  # unacknowledged, it keeps its channel's next message back
    pubsub.ack(first)
    assert slack.calls("chat.postMessage") == 7
    sent_once(db, slack, "m1")
    (second,) = pubsub.pull()
    assert push(deliver, second) == 200

    assert slack.delivery_ids() == [message_delivery_id("m1", T0), message_delivery_id("m2", T0)]
    assert ledger(db)[message_delivery_id("m1", T0)]["attempts"] == 1


def test_a_dm_rate_limited_at_conversations_open_is_waited_for_in_one_delivery(
    rt, pubsub, deliver, db, slack
):
    """Six 429s in a row from conversations.open: the delivery waits each out and opens the
    DM, the message is never nacked nor dropped, and the person's next message waits."""
    slack.inject(Fault(kind="rate_limit", method="conversations.open", retry_after=2, times=6))
    seed_message(db, "m1", channel=None, user="U0PERSON1")
    seed_message(db, "m2", channel=None, user="U0PERSON1")
    published(rt, "m1", "m2", channel="U0PERSON1")
    (first,) = pubsub.pull()

    assert push(deliver, first) == 200
    assert pubsub.is_empty()  # unacknowledged, it keeps the person's next message back
    pubsub.ack(first)
    assert slack.calls("conversations.open") == 7
    sent_once(db, slack, "m1")
    (second,) = pubsub.pull()
    assert push(deliver, second) == 200

    assert slack.delivery_ids() == [message_delivery_id("m1", T0), message_delivery_id("m2", T0)]


def test_a_rate_limited_message_redelivered_early_is_handed_back_not_acknowledged(
    rt, pubsub, deliver, db, slack, clock
):
    """A Retry-After longer than a delivery may wait is handed back to Pub/Sub (429); a
    redelivery before it has passed is handed back again rather than acknowledged (which
    would drop the message and let the channel's later ones go first); one that comes
    within reach of it waits for it, and the occurrence is sent once."""
    slack.inject(Fault(kind="rate_limit", retry_after=120, times=1))
    seed_message(db, "m1")
    published(rt, "m1")
    (first,) = pubsub.pull()
    assert push(deliver, first) == 429
    pubsub.nack(first)

    clock.advance(timedelta(seconds=10))  # Pub/Sub's first backoff
    (again,) = pubsub.pull()
    assert again.message_id == first.message_id
    assert push(deliver, again) == 429  # 110 s to go: handed back, not acknowledged
    pubsub.nack(again)
    assert slack.delivery_ids() == []

    clock.advance(timedelta(seconds=80))
    (third,) = pubsub.pull()
    assert third.message_id == first.message_id
    assert push(deliver, third) == 200  # 30 s to go: waited for, then sent

    sent_once(db, slack, "m1")


def test_a_failed_delivery_is_logged_once(rt, pubsub, deliver, db, slack, capsys):
    """A document the claim itself ends failed (here: Slack will not DM the person) is one
    ERROR line, not also a `nothing to deliver` line."""
    slack.set_user("U0GONE001", exists=False)
    seed_message(db, "m1", channel=None, user="U0GONE001")
    published(rt, "m1", channel="U0GONE001")
    (pulled,) = pubsub.pull()
    capsys.readouterr()

    assert push(deliver, pulled) == 200

    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    about = [line for line in lines if line.get("message_id") == "m1"]
    assert [(line["severity"], line.get("error_code")) for line in about] == [
        ("ERROR", "user_not_found")
    ]
    assert message(db, "m1")["status"] == "failed"
