"""`POST /events`, notify once per event: the first caller with a key owns the send, made
during its request; every later caller, whenever it comes, is told `duplicate` and nothing
is sent (the api target through functions-framework, the real slack_sdk against the
stand-in, the Firestore emulator)."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest

from emulator.slack_standin import Fault
from targets.kinds import run_pass
from tests.fixtures.api import call, fields_of
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.people import seed_category
from tests.fixtures.runtime import ADMIN_TOKEN

KEY = "stage-717:completed"
SHA = hashlib.sha256(KEY.encode()).hexdigest()
DELIVERY = f"e:{SHA}"
PERSON = "U0PERSON1"


def event(**fields):
    return {"key": KEY, "channel": "C0123ABCD", "text": "Framing is done", **fields}


def stored(db, sha=SHA):
    return db.collection("events").document(sha).get().to_dict()


def test_the_first_caller_sends_and_every_later_one_is_a_duplicate(api, db, slack, clock):
    seed_category(db, "stages")  # a category names a `categories` document (else 422)
    status, first = call(api, "POST", "/events", event(category="stages"))

    assert (status, first) == (201, {"delivery_id": DELIVERY, "duplicate": False, "status": "sent"})
    [post] = slack.posts()
    assert (post.channel, post.delivery_id) == ("C0123ABCD", DELIVERY)
    entry = ledger(db)[DELIVERY]
    assert (entry["kind"], entry["event_id"], entry["status"]) == ("event", SHA, "sent")
    assert (entry["channel"], entry["slack_ts"]) == ("C0123ABCD", post.ts)
    doc = stored(db)
    assert (doc["key"], doc["delivery_id"], doc["created_at"]) == (KEY, DELIVERY, T0)
    assert (doc["callers"], doc["category"], doc["status"]) == (1, "stages", "sent")

    clock.advance(timedelta(days=7))  # a week later, another tab reports the same stage
    status, again = call(api, "POST", "/events", event(text="a different text"))

    assert (status, again) == (200, {"delivery_id": DELIVERY, "duplicate": True, "status": "sent"})
    assert len(slack.posts()) == 1
    assert stored(db)["callers"] == 2


def test_an_event_for_a_person_goes_to_their_dm(api, db, slack):
    status, answer = call(api, "POST", "/events", event(channel=None, user=PERSON))

    assert (status, answer["status"]) == (201, "sent")
    [post] = slack.posts()
    dm = slack.dm_channel(PERSON)
    assert post.channel == dm
    entry = ledger(db)[DELIVERY]
    assert (entry["channel"], entry["user"]) == (dm, PERSON)
    assert (stored(db)["channel"], stored(db)["user"]) == (dm, PERSON)


def test_a_person_slack_will_not_dm_is_a_failed_event_never_retried(api, db, slack):
    slack.set_user("U0NOBODY1", exists=False)

    status, answer = call(api, "POST", "/events", event(channel=None, user="U0NOBODY1"))
    status2, again = call(api, "POST", "/events", event(channel=None, user="U0NOBODY1"))

    assert (status, answer["status"], answer["duplicate"]) == (201, "failed", False)
    assert (status2, again["status"], again["duplicate"]) == (200, "failed", True)
    assert slack.posts() == []
    entry = ledger(db)[DELIVERY]
    assert (entry["status"], entry["error"]["code"]) == ("failed", "user_not_found")


def test_a_definitive_slack_error_answers_failed(api, db, slack, capsys):
    slack.inject(Fault("error", code="channel_not_found", times=1))
    capsys.readouterr()

    status, answer = call(api, "POST", "/events", event())
    _, again = call(api, "POST", "/events", event())

    assert (status, answer["status"]) == (201, "failed")
    assert (again["duplicate"], again["status"]) == (True, "failed")
    assert slack.posts() == []
    assert ledger(db)[DELIVERY]["error"]["code"] == "channel_not_found"
    assert stored(db)["status"] == "failed"
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    [escalated] = [line for line in lines if line["severity"] == "ERROR"]
    assert (escalated["event_id"], escalated["error_code"]) == (SHA, "channel_not_found")
    assert "message_id" not in escalated


@pytest.mark.parametrize(
    "fault",
    [Fault("slow", delay=2.5, times=1), Fault("drop_after_receipt", times=1)],
    ids=["timeout", "dropped"],
)
def test_an_ambiguous_send_answers_sending_and_stays_claimed(api, db, slack, fault):
    slack.inject(fault)

    status, answer = call(api, "POST", "/events", event())
    _, again = call(api, "POST", "/events", event())

    assert (status, answer["status"], answer["duplicate"]) == (201, "sending", False)
    assert (again["duplicate"], again["status"]) == (True, "sending")
    assert ledger(db)[DELIVERY]["status"] == "claimed"  # reconciliation settles it
    assert stored(db)["status"] == "sending"


def test_a_rate_limited_send_answers_sending_and_is_released(api, db, slack):
    slack.inject(Fault("rate_limit", retry_after=30, times=1))

    status, answer = call(api, "POST", "/events", event())

    assert (status, answer["status"]) == (201, "sending")
    assert slack.posts() == []
    assert ledger(db)[DELIVERY]["status"] == "released"
    doc = stored(db)
    assert (doc["status"], doc["next_run_at"]) == ("pending", T0 + timedelta(seconds=30))


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"channel": "C0123ABCD", "text": "x"}, ["key"]),
        (event(key=""), ["key"]),
        (event(key="k" * 501), ["key"]),
        (event(key="   "), ["key"]),
        (event(key=7), ["key"]),
        (event(channel=None), ["channel"]),
        (event(user=PERSON), ["channel", "user"]),
        (event(channel="general"), ["channel"]),
        (event(channel=None, user="bob"), ["user"]),
        ({"key": KEY, "channel": "C0123ABCD"}, ["text"]),
        (event(text="   "), ["text"]),
        (event(text="x" * 40_001), ["text"]),
        (event(category=""), ["category"]),
        (event(category=3), ["category"]),
        (event(send_at="2030-01-01T00:00:00Z"), ["send_at"]),
    ],
)
def test_bad_bodies_are_422_naming_the_field_and_send_nothing(api, db, slack, body, fields):
    status, answer = call(api, "POST", "/events", body)

    assert status == 422, answer
    assert sorted(set(fields_of(answer))) == sorted(fields)
    assert slack.posts() == [] and ledger(db) == {}
    assert list(db.collection("events").stream()) == []


def test_a_key_of_500_characters_is_accepted(api, db, slack):
    status, answer = call(api, "POST", "/events", event(key="k" * 500))

    assert (status, answer["status"]) == (201, "sent")
    assert answer["delivery_id"] == "e:" + hashlib.sha256(b"k" * 500).hexdigest()


def test_a_rate_limited_send_is_sent_once_by_a_later_pass(api, rt, db, slack, clock):
    slack.inject(Fault("rate_limit", retry_after=30, times=1))
    call(api, "POST", "/events", event())

    run_pass(rt)  # not due yet: Slack asked for 30 seconds
    assert slack.posts() == []
    clock.advance(timedelta(seconds=30))
    summary = run_pass(rt)

    assert summary["sent"] == 1
    [post] = slack.posts()
    assert post.delivery_id == DELIVERY
    entry = ledger(db)[DELIVERY]
    assert (entry["status"], entry["attempts"], entry["slack_ts"]) == ("sent", 2, post.ts)
    assert call(api, "POST", "/events", event())[1]["status"] == "sent"
    run_pass(rt)
    assert len(slack.posts()) == 1


def test_a_dm_slack_rate_limits_answers_503_with_its_retry_after_and_records_nothing(
    api, db, slack
):
    slack.inject(Fault("rate_limit", method="conversations.open", times=1, retry_after=30))

    response = api.post(
        "/events",
        json=event(channel=None, user=PERSON),
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    )

    assert (response.status_code, response.json["error"]) == (503, "unavailable")
    assert response.headers["Retry-After"] == "30"
    assert stored(db) is None and slack.posts() == []
