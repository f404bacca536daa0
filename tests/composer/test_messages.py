"""The `api` target's message routes end to end: functions-framework's app in front of
main.py, the real Firestore emulator, the Slack stand-in, and the test's clock."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import pytest

from core.models import message_delivery_id
from core.store import MESSAGES
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call, fields_of
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import ONE_OFF, SERIES, message, seed_message, stored_ids
from tests.fixtures.runtime import ADMIN_TOKEN

WEDNESDAY = "2027-01-06T08:30:00+00:00"


def create(api: Any, body: dict[str, Any] | str, **kwargs: Any) -> dict[str, Any]:
    status, answer = call(api, "POST", "/messages", body, **kwargs)
    assert status == 201, answer
    assert isinstance(answer, dict)
    return answer


# --- create -------------------------------------------------------------------------------


def test_create_one_off_stores_the_contract_shape_and_answers_it(api, db):
    created = create(api, ONE_OFF)

    assert created["status"] == "pending"
    assert created["next_run_at"] == created["send_at"] == "2027-01-04T12:00:00+00:00"
    assert (created["version"], created["sent_count"], created["attempts"]) == (1, 0, 0)
    assert created["deleted"] is False
    assert created["created_at"] == created["updated_at"] == T0.isoformat()
    doc = message(db, created["id"])
    assert doc["next_run_at"] == T0 + timedelta(hours=3)
    assert doc["timezone"] == "UTC"
    assert doc["allow_broadcast"] is False
    assert "rrule" not in doc
    assert call(api, "GET", f"/messages/{created['id']}") == (200, created)


def test_create_series_starts_at_its_first_occurrence_from_now(api, db):
    created = create(api, SERIES)

    assert created["status"] == "recurring"
    assert created["next_run_at"] == WEDNESDAY
    assert created["misfire_grace_seconds"] == 3600
    assert "send_at" not in created


def test_create_stores_the_optional_fields(api, db):
    created = create(
        api,
        {
            **SERIES,
            "exdates": ["2027-01-06T09:30"],
            "misfire_grace_seconds": 600,
            "allow_broadcast": True,
            "working_days": {"country": "DE", "subdivision": "BY"},
            "on_non_working_day": "next_working_day",
        },
    )

    doc = message(db, created["id"])
    assert doc["exdates"] == ["2027-01-06T09:30"]
    assert doc["working_days"] == {"country": "DE", "subdivision": "BY"}
    assert doc["on_non_working_day"] == "next_working_day"
    assert (doc["misfire_grace_seconds"], doc["allow_broadcast"]) == (600, True)
    # The Wednesday is left out: the following Monday 09:30 Berlin.
    assert created["next_run_at"] == "2027-01-11T08:30:00+00:00"


def test_a_created_one_off_is_sent_by_the_tick_once(api, db, slack, rt, clock):
    created = create(api, ONE_OFF)
    clock.set(T0 + timedelta(hours=3))

    run_kind(rt, MESSAGE_KIND)
    run_kind(rt, MESSAGE_KIND)

    [post] = slack.posts()
    assert (post.channel, post.text) == ("C0123ABCD", "Deploy at noon")
    assert message(db, created["id"])["status"] == "sent"


def test_a_send_at_within_the_tolerance_is_accepted(api):
    created = create(api, {**ONE_OFF, "send_at": (T0 - timedelta(seconds=30)).isoformat()})

    assert created["status"] == "pending"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"channel": "general"}, "channel"),
        ({"channel": 12345}, "channel"),
        ({"text": ""}, "text"),
        ({"text": "   \n"}, "text"),
        ({"text": "x" * 40_001}, "text"),
        ({"timezone": "Mars/Olympus_Mons"}, "timezone"),
        ({"send_at": "2027-01-04T08:58:00+00:00"}, "send_at"),
        ({"send_at": "2027-01-04T12:00:00"}, "send_at"),
        ({"send_at": None}, "send_at"),
        ({"rrule": "FREQ=DAILY", "dtstart": "2027-01-05T09:00"}, "send_at"),
        ({"expires_at": "2027-01-04T11:00:00+00:00"}, "expires_at"),
        ({"exdates": ["2027-01-05T09:00"]}, "exdates"),
        ({"misfire_grace_seconds": -1}, "misfire_grace_seconds"),
        ({"allow_broadcast": "yes"}, "allow_broadcast"),
        ({"sendAt": "2027-01-04T12:00:00+00:00"}, "sendAt"),
    ],
)
def test_an_invalid_one_off_is_422_naming_the_field_and_nothing_is_stored(api, db, change, field):
    status, answer = call(api, "POST", "/messages", {**ONE_OFF, **change})

    assert status == 422
    assert fields_of(answer) == [field]
    assert stored_ids(db) == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"rrule": "FREQ=SOMETIMES"}, "rrule"),
        ({"rrule": "FREQ=DAILY;COUNT=2", "dtstart": "2026-06-01T09:00"}, "rrule"),
        ({"dtstart": None}, "dtstart"),
        ({"dtstart": "next monday"}, "dtstart"),
        ({"exdates": ["soon"]}, "exdates"),
        ({"expires_at": "2027-02-01T00:00:00+00:00"}, "expires_at"),
        ({"working_days": {"country": "de"}}, "working_days.country"),
        ({"working_days": {"country": "QQ"}}, "working_days"),
        ({"on_non_working_day": "sometimes"}, "on_non_working_day"),
        ({"on_non_working_day": "skip"}, "on_non_working_day"),
    ],
)
def test_an_invalid_series_is_422_naming_the_field(api, db, change, field):
    status, answer = call(api, "POST", "/messages", {**SERIES, **change})

    assert status == 422
    assert fields_of(answer) == [field]
    assert stored_ids(db) == []


def test_every_bad_field_is_named_at_once(api, db):
    body = {"channel": "general", "text": "", "send_at": "2026-01-01T00:00:00+00:00"}

    status, answer = call(api, "POST", "/messages", body)

    assert status == 422
    assert sorted(fields_of(answer)) == ["channel", "send_at", "text"]


@pytest.mark.parametrize("data", ['{"channel": ', "[]", '"text"', "", "\xff"])
def test_a_body_that_is_not_a_json_object_is_400(api, db, data):
    status, answer = call(api, "POST", "/messages", data.encode("latin-1"))

    assert (status, answer["error"]) == (400, "bad_request")
    assert stored_ids(db) == []


# --- authentication and routing -----------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/messages"),
        ("GET", "/messages"),
        ("GET", "/messages/any"),
        ("PUT", "/messages/any"),
        ("DELETE", "/messages/any"),
        ("GET", "/messages/any/deliveries"),
        ("POST", "/preview"),
        ("POST", "/rotations"),
        ("GET", "/rotations/any"),
        ("PUT", "/rotations/any"),
        ("POST", "/rotations/any/preview"),
    ],
)
def test_every_route_needs_credentials(api, db, method, path):
    mid = seed_message(db, doc_id="any")

    missing = call(api, method, path, ONE_OFF, auth=False)
    wrong = call(api, method, path, ONE_OFF, auth=False, headers={"Authorization": "Bearer no"})

    assert [missing[0], wrong[0]] == [401, 401]
    assert wrong[1]["error"] == "unauthorized"
    assert stored_ids(db) == [mid]
    assert message(db, mid)["version"] == 1


def test_tokens_appear_neither_in_answers_nor_in_logs(api, db, capsys):
    near_miss = ADMIN_TOKEN + "x"
    _, refused = call(api, "GET", "/messages", auth=False, headers={"Authorization": near_miss})
    created = create(api, ONE_OFF)
    call(api, "PUT", f"/messages/{created['id']}", {"text": "changed"})

    out = capsys.readouterr()
    for text in (json.dumps(refused), out.out, out.err):
        assert ADMIN_TOKEN not in text


def test_unknown_ids_are_404(api, db):
    for method, path in [
        ("GET", "/messages/nope"),
        ("PUT", "/messages/nope"),
        ("DELETE", "/messages/nope"),
        ("GET", "/messages/nope/deliveries"),
        ("GET", "/messages/__reserved__"),
    ]:
        status, answer = call(api, method, path, {"text": "x"} if method == "PUT" else None)
        assert (status, answer["error"]) == (404, "not_found"), (method, path)
    assert stored_ids(db) == []


def test_unknown_routes_are_404_and_wrong_methods_405(api):
    assert call(api, "GET", "/nowhere")[0] == 404
    assert call(api, "POST", "/")[0] == 404  # GET / is the composer page (tests/web/)
    status, answer = call(api, "PATCH", "/messages/abc", {"text": "x"})
    assert (status, answer["error"]) == (405, "method_not_allowed")
    assert call(api, "DELETE", "/messages")[0] == 405


# --- Idempotency-Key ----------------------------------------------------------------------


def test_a_retried_create_returns_the_original_record(api, db):
    key = {"Idempotency-Key": "create-1"}
    first = create(api, ONE_OFF, headers=key)
    # The same body written differently (key order, spacing) is the same body.
    same = json.dumps(dict(reversed(list(ONE_OFF.items()))), indent=2)

    again = create(api, same, headers=key)

    assert again == first
    assert stored_ids(db) == [first["id"]]


def test_a_retry_after_send_at_has_passed_still_returns_the_record(api, db, clock):
    body = {**ONE_OFF, "send_at": (T0 + timedelta(minutes=5)).isoformat()}
    first = create(api, body, headers={"Idempotency-Key": "slow-retry"})
    clock.advance(timedelta(hours=1))

    again = create(api, body, headers={"Idempotency-Key": "slow-retry"})

    assert again["id"] == first["id"]
    assert stored_ids(db) == [first["id"]]


def test_the_same_key_with_another_body_is_422(api, db):
    first = create(api, ONE_OFF, headers={"Idempotency-Key": "k"})

    status, answer = call(
        api, "POST", "/messages", {**ONE_OFF, "text": "other"}, headers={"Idempotency-Key": "k"}
    )

    assert status == 422
    assert fields_of(answer) == ["Idempotency-Key"]
    assert stored_ids(db) == [first["id"]]


def test_a_key_is_kept_24_hours_then_may_be_used_again(api, db, clock):
    first = create(api, ONE_OFF, headers={"Idempotency-Key": "daily"})
    clock.advance(timedelta(hours=23, minutes=59))
    assert create(api, ONE_OFF, headers={"Idempotency-Key": "daily"})["id"] == first["id"]
    clock.advance(timedelta(minutes=2))
    later = {**ONE_OFF, "send_at": (clock.now() + timedelta(hours=1)).isoformat()}

    second = create(api, later, headers={"Idempotency-Key": "daily"})

    assert second["id"] != first["id"]
    assert sorted(stored_ids(db)) == sorted([first["id"], second["id"]])
    [key] = db.collection("idempotency_keys").stream()
    assert key.to_dict()["target_id"] == second["id"]
    assert key.to_dict()["expires_at"] == clock.now() + timedelta(hours=24)


def test_concurrent_retries_with_one_key_create_one_record(api_app, api, db):
    answers: list[tuple[int, Any]] = []

    def post() -> None:
        client = api_app.test_client()
        answers.append(call(client, "POST", "/messages", ONE_OFF, headers={"Idempotency-Key": "x"}))

    threads = [threading.Thread(target=post) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert [status for status, _ in answers] == [201] * 6
    assert len({answer["id"] for _, answer in answers}) == 1
    assert len(stored_ids(db)) == 1


def test_a_malformed_key_is_400(api, db):
    status, answer = call(api, "POST", "/messages", ONE_OFF, headers={"Idempotency-Key": "x" * 300})

    assert (status, answer["error"]) == (400, "bad_request")
    assert stored_ids(db) == []


def test_creates_without_a_key_are_separate_records(api, db):
    create(api, ONE_OFF)
    create(api, ONE_OFF)

    assert len(stored_ids(db)) == 2


# --- edit in place ------------------------------------------------------------------------


def test_put_updates_that_record_and_never_creates_another(api, db):
    created = create(api, ONE_OFF)

    status, edited = call(api, "PUT", f"/messages/{created['id']}", {"text": "Deploy at one"})

    assert status == 200
    assert edited["id"] == created["id"]
    assert (edited["text"], edited["version"]) == ("Deploy at one", 2)
    assert edited["updated_at"] == T0.isoformat()
    assert stored_ids(db) == [created["id"]]
    assert message(db, created["id"])["text"] == "Deploy at one"
    assert call(api, "GET", f"/messages/{created['id']}") == (200, edited)


def test_a_text_edit_keeps_the_pending_occurrence(api, db, clock):
    # A released retry: next_run_at moved by Retry-After, occurrence_at pins the occurrence.
    mid = seed_message(
        db,
        rrule="FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        dtstart="2027-01-01T09:00",
        status="recurring",
        send_at=None,
        next_run_at=T0 + timedelta(seconds=30),
        occurrence_at=T0,
    )
    clock.advance(timedelta(seconds=10))

    status, _ = call(api, "PUT", f"/messages/{mid}", {"text": "Stand-up moved to Zoom"})

    assert status == 200
    doc = message(db, mid)
    assert (doc["next_run_at"], doc["occurrence_at"]) == (T0 + timedelta(seconds=30), T0)
    assert doc["status"] == "recurring"
    assert doc["version"] == 2


def test_a_schedule_edit_recomputes_next_run_at_from_now(api, db, clock):
    created = create(api, SERIES)
    db.collection(MESSAGES).document(created["id"]).update({"occurrence_at": T0})
    clock.set(T0 + timedelta(days=3))  # Thursday 2027-01-07, 10:00 Berlin

    status, edited = call(
        api, "PUT", f"/messages/{created['id']}", {"rrule": "FREQ=DAILY;BYHOUR=11;BYMINUTE=0"}
    )

    assert status == 200
    assert edited["next_run_at"] == "2027-01-07T10:00:00+00:00"  # today 11:00 Berlin
    assert "occurrence_at" not in message(db, created["id"])
    assert edited["status"] == "recurring"


def test_rescheduling_a_rate_limited_retry_settles_the_old_occurrence(api, db, slack, rt, clock):
    created = create(api, {**ONE_OFF, "send_at": T0.isoformat()})
    slack.inject(Fault(kind="rate_limit", retry_after=600, times=1))
    run_kind(rt, MESSAGE_KIND)  # released: waits for its retry of the T0 occurrence
    old_entry = message_delivery_id(created["id"], T0)
    assert ledger(db)[old_entry]["status"] == "released"
    later = T0 + timedelta(hours=2)

    code, edited = call(api, "PUT", f"/messages/{created['id']}", {"send_at": later.isoformat()})

    assert code == 200
    assert edited["next_run_at"] == later.isoformat()
    assert "occurrence_at" not in message(db, created["id"])
    entry = ledger(db)[old_entry]
    assert (entry["status"], entry["reason"]) == ("skipped", "rescheduled")
    clock.set(later)
    run_kind(rt, MESSAGE_KIND)
    [post] = slack.posts()
    assert post.delivery_id == message_delivery_id(created["id"], later)
    _, rows = call(api, "GET", f"/messages/{created['id']}/deliveries")
    assert [(r["status"], r["reason"]) for r in rows["deliveries"]] == [
        ("sent", None),
        ("skipped", "rescheduled"),
    ]


def test_an_edit_can_turn_a_one_off_into_a_series(api, db):
    created = create(api, ONE_OFF)

    status, edited = call(
        api,
        "PUT",
        f"/messages/{created['id']}",
        {"send_at": None, "rrule": SERIES["rrule"], "dtstart": SERIES["dtstart"]},
    )

    assert status == 200
    assert edited["status"] == "recurring"
    assert "send_at" not in message(db, created["id"])
    # In the stored timezone (UTC): Monday 09:30Z is the first occurrence after T0.
    assert edited["next_run_at"] == "2027-01-04T09:30:00+00:00"


def test_an_invalid_edit_is_422_and_changes_nothing(api, db):
    created = create(api, ONE_OFF)
    before = message(db, created["id"])

    for body, fields in [
        ({"text": ""}, ["text"]),
        ({"channel": None}, ["channel"]),
        ({"rrule": "FREQ=DAILY"}, ["send_at", "dtstart"]),
        ({"send_at": "2027-01-01T00:00:00+00:00"}, ["send_at"]),
        ({"colour": "red"}, ["colour"]),
    ]:
        status, answer = call(api, "PUT", f"/messages/{created['id']}", body)
        assert status == 422, body
        assert sorted(fields_of(answer)) == sorted(fields), body
    assert message(db, created["id"]) == before


def test_if_match_guards_against_a_second_tab(api, db):
    created = create(api, ONE_OFF)
    path = f"/messages/{created['id']}"

    first = call(api, "PUT", path, {"text": "tab one"}, headers={"If-Match": "1"})
    second = call(api, "PUT", path, {"text": "tab two"}, headers={"If-Match": '"1"'})

    assert first[0] == 200
    assert (second[0], second[1]["error"]) == (412, "precondition_failed")
    doc = message(db, created["id"])
    assert (doc["text"], doc["version"]) == ("tab one", 2)
    assert call(api, "PUT", path, {"text": "tab two"}, headers={"If-Match": "2"})[0] == 200


def test_a_malformed_if_match_is_400(api, db):
    created = create(api, ONE_OFF)

    status, _ = call(
        api, "PUT", f"/messages/{created['id']}", {"text": "x"}, headers={"If-Match": "v1"}
    )

    assert status == 400
    assert message(db, created["id"])["version"] == 1


@pytest.mark.parametrize("status", ["sending", "sent", "completed", "cancelled", "unconfirmed"])
def test_edits_of_a_message_in_flight_or_settled_are_409(api, db, status):
    mid = seed_message(db, status=status)
    before = message(db, mid)

    code, answer = call(api, "PUT", f"/messages/{mid}", {"text": "too late"})

    assert (code, answer["error"]) == (409, "conflict")
    assert status in answer["message"]
    assert message(db, mid) == before


def test_a_deleted_message_cannot_be_edited(api, db):
    mid = seed_message(db, deleted=True)

    code, _ = call(api, "PUT", f"/messages/{mid}", {"text": "revived?"})

    assert code == 409
    assert message(db, mid)["text"] == "Stand-up in 5 minutes"


def test_a_sending_message_is_409_even_with_a_stale_if_match(api, db):
    mid = seed_message(db, status="sending", version=2)

    code, _ = call(api, "PUT", f"/messages/{mid}", {"text": "x"}, headers={"If-Match": "1"})

    assert code == 409


def test_editing_a_failed_message_re_arms_it(api, db, slack, rt, clock):
    mid = seed_message(
        db,
        channel="C0GONE000",
        status="failed",
        last_error={"code": "channel_not_found", "message": "", "at": T0},
    )

    code, edited = call(api, "PUT", f"/messages/{mid}", {"channel": "C0NEW0000"})

    assert code == 200
    assert edited["status"] == "pending"
    assert "last_error" not in edited
    assert edited["next_run_at"] == T0.isoformat()  # the schedule did not change
    run_kind(rt, MESSAGE_KIND)
    [post] = slack.posts()
    assert post.channel == "C0NEW0000"


def test_a_paused_message_stays_paused_when_rescheduled(api, db):
    mid = seed_message(db, status="paused")

    code, edited = call(
        api, "PUT", f"/messages/{mid}", {"send_at": (T0 + timedelta(days=1)).isoformat()}
    )

    assert code == 200
    assert edited["status"] == "paused"
    assert edited["next_run_at"] == (T0 + timedelta(days=1)).isoformat()


# --- cancel -------------------------------------------------------------------------------


def test_delete_cancels_softly_and_nothing_is_sent(api, db, slack, rt):
    created = create(api, {**ONE_OFF, "send_at": T0.isoformat()})

    code, cancelled = call(api, "DELETE", f"/messages/{created['id']}")

    assert code == 200
    assert (cancelled["status"], cancelled["deleted"], cancelled["version"]) == (
        "cancelled",
        True,
        2,
    )
    run_kind(rt, MESSAGE_KIND)
    assert slack.posts() == []
    assert ledger(db) == {}
    # Cancelling again changes nothing.
    assert call(api, "DELETE", f"/messages/{created['id']}") == (200, cancelled)


def test_cancelling_a_rate_limited_retry_settles_its_occurrence(api, db, slack, rt, clock):
    created = create(api, {**ONE_OFF, "send_at": T0.isoformat()})
    slack.inject(Fault(kind="rate_limit", retry_after=60, times=1))
    run_kind(rt, MESSAGE_KIND)

    code, _ = call(api, "DELETE", f"/messages/{created['id']}")

    assert code == 200
    entry = ledger(db)[message_delivery_id(created["id"], T0)]
    assert (entry["status"], entry["reason"]) == ("skipped", "cancelled")
    clock.advance(timedelta(minutes=5))
    run_kind(rt, MESSAGE_KIND)
    assert slack.posts() == []


@pytest.mark.parametrize("status", ["sending", "sent", "completed", "unconfirmed"])
def test_delete_of_a_message_in_flight_or_settled_is_409(api, db, status):
    mid = seed_message(db, status=status)

    code, answer = call(api, "DELETE", f"/messages/{mid}")

    assert (code, answer["error"]) == (409, "conflict")
    assert message(db, mid)["status"] == status


def test_delete_with_a_stale_if_match_is_412(api, db):
    created = create(api, ONE_OFF)
    call(api, "PUT", f"/messages/{created['id']}", {"text": "v2"})

    code, _ = call(api, "DELETE", f"/messages/{created['id']}", headers={"If-Match": "1"})

    assert code == 412
    assert message(db, created["id"])["status"] == "pending"


def test_a_text_too_long_once_formatted_is_422_on_create_and_preview(api, db):
    # Under 40,000 characters as typed, but escaping makes it 195,000: Slack keeps 40,000.
    body = {"channel": "C0123ABCD", "text": "&" * 39_000, "send_at": "2027-01-05T09:00:00Z"}

    for path in ("/messages", "/preview"):
        status, answer = call(api, "POST", path, body)
        assert status == 422
        assert [d["field"] for d in answer["details"]] == ["text"]
        assert "40,000" in answer["details"][0]["message"]
    assert list(db.collection(MESSAGES).stream()) == []


def test_on_ambiguous_is_stored_and_validated(api, db):
    body = {"channel": "C0123ABCD", "text": "hi", "send_at": "2027-01-05T09:00:00Z"}

    status, created = call(api, "POST", "/messages", {**body, "on_ambiguous": "retry"})
    assert status == 201
    assert message(db, created["id"])["on_ambiguous"] == "retry"
    status, answer = call(api, "POST", "/messages", {**body, "on_ambiguous": "resend"})
    assert status == 422
    assert [d["field"] for d in answer["details"]] == ["on_ambiguous"]
