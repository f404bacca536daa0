"""Bad people and categories (issue 29, point 9): a Slack user id too long or not one, a
category whose `quiet_window_hours` is NaN, Infinity or 1e300, a category no document has
(never written, or deleted since), and an event under a lease no pass can settle. Through
the API each is a 422 naming the field and writes nothing; stored straight into Firestore, a
pass ends each `failed` with a code and one ERROR line, and the operator's `doctor` lists
it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from core.store import CATEGORIES, EVENTS
from targets.kinds import run_pass
from targets.operator import main
from tests.fixtures.api import call, fields_of
from tests.fixtures.clock import T0
from tests.fixtures.documents import update_times
from tests.fixtures.logs import error_lines
from tests.fixtures.messages import ONE_OFF, SERIES, message, seed_message
from tests.fixtures.people import PERSON, seed_category, to_person
from tests.fixtures.rotations import ROTATION

LONG_USER = "U" + "A" * 1_600  # past Firestore's 1,500-byte document id
TO_PERSON = {k: v for k, v in ONE_OFF.items() if k != "channel"} | {"user": PERSON}
EVENT = {"key": "stage-9:done", "user": PERSON, "text": "Stage 9 is done"}
UNREADABLE_HOURS = [float("nan"), float("inf"), 1e300]

pytestmark = pytest.mark.usefixtures("cli_on_the_test_clock")


def refused(api: Any, db: Any, method: str, path: str, body: Any) -> list[str]:
    """The request gets a 422 naming fields, and writes nothing anywhere: the fields."""
    before = update_times(db)
    status, answer = call(api, method, path, body)
    assert status == 422, answer
    assert update_times(db) == before
    return fields_of(answer)


def doctor_codes(capsys: Any) -> dict[tuple[str, str], str]:
    capsys.readouterr()
    main(["doctor", "--json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return {(row["collection"], row["id"]): row["code"] for row in rows}


# --- through the API: 422 naming the field --------------------------------------------------


@pytest.mark.parametrize("user", [LONG_USER, "U" + "A" * 32, "u0person1", "U0PERSON1\n"])
def test_a_user_that_is_no_slack_id_is_422_on_every_route(api, db, user):
    seed_message(db, "m")
    assert refused(api, db, "POST", "/messages", TO_PERSON | {"user": user}) == ["user"]
    assert refused(api, db, "PUT", "/messages/m", {"channel": None, "user": user}) == ["user"]
    assert refused(api, db, "POST", "/preview", TO_PERSON | {"user": user}) == ["user"]
    assert refused(api, db, "POST", "/events", EVENT | {"user": user}) == ["user"]
    members = [*ROTATION["members"], user]
    assert refused(api, db, "POST", "/rotations", ROTATION | {"members": members}) == ["members.3"]


def test_a_user_id_of_32_characters_is_accepted_and_the_formats_are_in_openapi(api):
    status, created = call(api, "POST", "/messages", TO_PERSON | {"user": "W" + "0" * 31})
    assert status == 201, created
    schema = call(api, "GET", "/openapi.json")[1]["components"]["schemas"]
    # A person: a Slack user id, or (beside a Teams personal chat) a Teams one.
    slack, teams = schema["MessageDraft"]["properties"]["user"]["anyOf"][0]["anyOf"]
    assert slack["pattern"] == "^[UW][A-Z0-9]{2,31}$" and teams["pattern"].startswith("^(?:29:")
    channel = schema["EventBody"]["properties"]["channel"]["anyOf"][0]
    assert (channel["pattern"], channel["maxLength"]) == ("^[CGD][A-Z0-9]{2,31}$", 32)


@pytest.mark.parametrize("hours", UNREADABLE_HOURS)
def test_a_category_with_unreadable_quiet_window_hours_is_422_not_500(api, db, hours):
    seed_category(db, "broken", quiet_window_hours=hours)
    with_category = {"category": "broken"}
    assert refused(api, db, "POST", "/events", EVENT | with_category) == ["category"]
    assert refused(api, db, "POST", "/preview", TO_PERSON | with_category) == ["category"]
    assert refused(api, db, "POST", "/messages", TO_PERSON | with_category) == ["category"]
    _, answer = call(api, "POST", "/events", EVENT | with_category)
    assert "quiet_window_hours" in answer["details"][0]["message"]


def test_an_event_with_a_category_no_document_has_is_422_as_a_message_is(api, db, slack):
    seed_category(db, "stages")
    assert refused(api, db, "POST", "/events", EVENT | {"category": "gone"}) == ["category"]
    assert refused(api, db, "POST", "/messages", TO_PERSON | {"category": "gone"}) == ["category"]
    assert refused(api, db, "POST", "/events", EVENT | {"category": "a/b"}) == ["category"]
    assert slack.posts() == []
    # A later caller of an event whose category went since is still told `duplicate`.
    status, first = call(api, "POST", "/events", EVENT | {"category": "stages"})
    db.collection(CATEGORIES).document("stages").delete()
    again = call(api, "POST", "/events", EVENT | {"category": "stages"})
    assert (status, first["status"]) == (201, "sent")
    assert again == (
        200,
        {"delivery_id": first["delivery_id"], "duplicate": True, "status": "sent"},
    )


# --- stored straight into Firestore: failed with a code, one ERROR line, doctor lists it -----


def test_a_stored_user_too_long_ends_failed_with_a_code(rt, db, slack, capsys):
    seed_message(db, "long", channel=None, user=LONG_USER)
    seed_message(db, "good")
    assert doctor_codes(capsys) == {("scheduled_messages", "long"): "invalid_user"}

    summary = run_pass(rt)

    assert (summary["sent"], summary["failed"], summary["errors"]) == (1, 1, 0)
    stored = message(db, "long")
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "invalid_user")
    assert len(stored["last_error"]["message"]) < 200  # the id is not echoed whole
    assert len(error_lines(capsys.readouterr().out, message_id="long")) == 1
    assert doctor_codes(capsys) == {}


@pytest.mark.parametrize("hours", UNREADABLE_HOURS)
def test_a_dm_of_a_category_with_unreadable_hours_ends_failed_and_the_doctor_lists_it(
    rt, db, slack, capsys, hours
):
    seed_category(db, "broken", quiet_window_hours=hours)
    seed_category(db, "fine", quiet_window_hours=2)
    bad = to_person(db, "broken")
    good = to_person(db, "fine", user="U0OTHER01")
    assert doctor_codes(capsys) == {("categories", "broken"): "invalid_category"}
    dry = run_pass(rt, dry_run=True)
    by_id = {preview["id"]: preview for preview in dry["previews"]}
    assert by_id[bad]["error"]["code"] == "invalid_category"
    assert by_id[good]["held_back"] is None
    capsys.readouterr()

    summary = run_pass(rt)

    assert (summary["sent"], summary["failed"], summary["errors"]) == (1, 1, 0)
    assert [post.delivery_id for post in slack.posts()] == [f"m:{good}:20270104T090000Z"]
    stored = message(db, bad)
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "invalid_category")
    assert "quiet_window_hours" in stored["last_error"]["message"]
    assert len(error_lines(capsys.readouterr().out, message_id=bad)) == 1
    assert run_pass(rt)["failed"] == 0  # ended: not failed again on every pass


def _event(**fields: Any) -> dict[str, Any]:
    key = "stage-1:done"
    return {
        "key": key,
        "delivery_id": "e:" + hashlib.sha256(key.encode()).hexdigest(),
        "created_at": T0,
        "callers": 1,
        "channel": "D0PERSON1",
        "user": PERSON,
        "text": "Framing is done",
        "attempts": 1,
    } | fields


def test_a_stored_event_under_a_lease_no_pass_can_settle_ends_failed(rt, db, slack, capsys):
    db.collection(EVENTS).document("stuck").set(_event(status="sending", lease="x"))
    assert doctor_codes(capsys) == {("events", "stuck"): "invalid_lease"}

    summary = run_pass(rt)

    assert summary["failed"] == 1
    stored = db.collection(EVENTS).document("stuck").get().to_dict() or {}
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "invalid_lease")
    assert "lease" not in stored
    assert len(error_lines(capsys.readouterr().out, event_id="stuck")) == 1
    assert run_pass(rt)["failed"] == 0
    assert doctor_codes(capsys) == {}
    assert slack.posts() == []


def test_a_released_event_of_a_category_with_unreadable_hours_ends_failed(rt, db, slack, capsys):
    seed_category(db, "broken", quiet_window_hours=float("nan"))
    released = _event(status="pending", next_run_at=T0, category="broken")
    db.collection(EVENTS).document("released").set(released)
    capsys.readouterr()

    assert run_pass(rt)["failed"] == 1

    stored = db.collection(EVENTS).document("released").get().to_dict() or {}
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "invalid_category")
    assert len(error_lines(capsys.readouterr().out, event_id="released")) == 1
    assert slack.posts() == []


# --- a category no document has: `unknown_category`, never sent with guessed gates ----------


def test_a_stored_dm_of_a_category_no_document_has_ends_failed_unknown_category(
    rt, db, slack, capsys
):
    seed_category(db, "fine", daily_cap=5)
    bad = to_person(db, "gone")
    good = to_person(db, "fine", user="U0OTHER01")
    assert doctor_codes(capsys) == {("scheduled_messages", bad): "unknown_category"}
    dry = run_pass(rt, dry_run=True)
    by_id = {preview["id"]: preview for preview in dry["previews"]}
    assert by_id[bad]["error"]["code"] == "unknown_category"
    assert by_id[bad]["text"] is None
    assert by_id[good]["held_back"] is None
    capsys.readouterr()

    summary = run_pass(rt)

    assert (summary["sent"], summary["failed"], summary["errors"]) == (1, 1, 0)
    assert [post.delivery_id for post in slack.posts()] == [f"m:{good}:20270104T090000Z"]
    assert slack.calls("conversations.open") == 1  # the good one's DM only
    stored = message(db, bad)
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "unknown_category")
    assert "'gone'" in stored["last_error"]["message"]
    assert len(error_lines(capsys.readouterr().out, message_id=bad)) == 1
    assert run_pass(rt)["failed"] == 0
    assert doctor_codes(capsys) == {}


def test_a_series_whose_category_was_deleted_ends_failed_and_a_put_re_arms_it(
    api, rt, db, slack, capsys
):
    seed_category(db, "standup")
    body = {k: v for k, v in SERIES.items() if k != "channel"}
    status, created = call(api, "POST", "/messages", body | {"user": PERSON, "category": "standup"})
    assert status == 201, created
    db.collection(CATEGORIES).document("standup").delete()
    assert doctor_codes(capsys) == {("scheduled_messages", created["id"]): "unknown_category"}
    rt.clock.set(message(db, created["id"])["next_run_at"])
    capsys.readouterr()

    assert run_pass(rt)["failed"] == 1

    stored = message(db, created["id"])
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "unknown_category")
    assert len(error_lines(capsys.readouterr().out, message_id=created["id"])) == 1
    assert slack.posts() == [] and slack.calls("conversations.open") == 0
    # Re-armed by an edit naming a category that exists (as docs/operations.md says).
    seed_category(db, "nudges")
    status, edited = call(api, "PUT", f"/messages/{created['id']}", {"category": "nudges"})
    assert (status, edited["status"]) == (200, "recurring"), edited
    rt.clock.set(message(db, created["id"])["next_run_at"])
    assert run_pass(rt)["sent"] == 1


def test_a_released_event_whose_category_was_deleted_ends_failed_on_retry(rt, db, slack, capsys):
    released = _event(status="pending", next_run_at=T0, category="gone")
    db.collection(EVENTS).document("released").set(released)
    assert doctor_codes(capsys) == {("events", "released"): "unknown_category"}

    assert run_pass(rt)["failed"] == 1

    stored = db.collection(EVENTS).document("released").get().to_dict() or {}
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "unknown_category")
    assert len(error_lines(capsys.readouterr().out, event_id="released")) == 1
    assert slack.posts() == []
    assert doctor_codes(capsys) == {}
