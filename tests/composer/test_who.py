"""Who did what: every message and rotation records who made it (`created_by`) and who last
changed it (`updated_by`) — `admin` for the admin token, the page's sign-in email for a
person, the service account's email for OIDC, a Slack user id when the Slack side acts —
and `GET /messages?created_by=` lists one actor's messages. Through the `api` target with
real tokens (tests.fixtures.oidc) against the Firestore emulator."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest

from composer.messages import create_message
from composer.models import MessageDraft
from core.directory_refresh import refresh_lists
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call, fields_of
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import ONE_OFF, SERIES, message, seed_message
from tests.fixtures.oidc import AUDIENCE, CLIENT_ID, TRIGGER, CertsServer, mint, mint_person
from tests.fixtures.rotations import ROTATION

ANA, ZOE = "ana.garcia@example.com", "zoe@example.com"
ANA_SLACK = "U0ANAGARCIA"  # Ana's Slack account in the stand-in's seeded workspace

pytestmark = pytest.mark.usefixtures("fresh_certs_cache", "sign_in")


@pytest.fixture
def sign_in(
    env: dict[str, str], certs_server: CertsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ana and Zoe may sign in to the page; the scheduler's service account may call too."""
    monkeypatch.setenv("OIDC_CERTS_URL", certs_server.url)
    monkeypatch.setenv("COMPOSER_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("COMPOSER_USERS", f"{ANA},{ZOE}")
    monkeypatch.setenv("TICK_AUDIENCE", AUDIENCE)
    monkeypatch.setenv("TRIGGER_SERVICE_ACCOUNTS", TRIGGER)


def as_person(signing_key: Any, email: str) -> dict[str, Any]:
    token = mint_person(signing_key, email=email)
    return {"auth": False, "headers": {"Authorization": f"Bearer {token}"}}


def ok(answer: tuple[int, Any], status: int = 200) -> dict[str, Any]:
    assert answer[0] == status, answer
    body: dict[str, Any] = answer[1]
    return body


def by(record: dict[str, Any]) -> tuple[Any, Any]:
    return record.get("created_by"), record.get("updated_by")


def test_the_admin_token_creates_edits_and_cancels_as_admin(api, db):
    created = ok(call(api, "POST", "/messages", ONE_OFF), 201)
    edited = ok(call(api, "PUT", f"/messages/{created['id']}", {"text": "Deploy at one"}))
    cancelled = ok(call(api, "DELETE", f"/messages/{created['id']}"))

    assert by(created) == by(edited) == by(cancelled) == ("admin", "admin")
    stored = message(db, created["id"])
    assert (stored["created_by"], stored["updated_by"]) == ("admin", "admin")


def test_a_signed_in_person_is_recorded_by_their_email(api, db, signing_key):
    ana, zoe = as_person(signing_key, ANA), as_person(signing_key, ZOE)

    created = ok(call(api, "POST", "/messages", ONE_OFF, **ana), 201)
    mid = created["id"]
    edited = ok(call(api, "PUT", f"/messages/{mid}", {"text": "Deploy at one"}, **zoe))
    cancelled = ok(call(api, "DELETE", f"/messages/{mid}", **ana))

    assert by(created) == (ANA, ANA)
    assert by(edited) == (ANA, ZOE)
    assert by(cancelled) == (ANA, ANA)
    assert by(ok(call(api, "GET", f"/messages/{mid}"))) == (ANA, ANA)
    assert message(db, mid)["created_by"] == ANA


def test_pause_resume_skip_and_one_occurrence_record_who_changed_the_series(api, db, signing_key):
    ana, zoe = as_person(signing_key, ANA), as_person(signing_key, ZOE)
    mid = ok(call(api, "POST", "/messages", SERIES, **ana), 201)["id"]

    paused = ok(call(api, "POST", f"/messages/{mid}/pause", **zoe))
    resumed = ok(call(api, "POST", f"/messages/{mid}/resume", **ana))
    skipped = ok(call(api, "POST", f"/messages/{mid}/skip-next", **zoe))
    split = ok(
        call(
            api,
            "POST",
            f"/messages/{mid}/occurrence",
            {"occurrence_at": "2027-01-11T08:30:00+00:00", "text": "Stand-up, moved"},
            **ana,
        ),
        201,
    )

    assert [by(r)[1] for r in (paused, resumed, skipped)] == [ZOE, ANA, ZOE]
    assert by(split["series"]) == (ANA, ANA)
    assert by(split["message"]) == (ANA, ANA)  # the one-off is Ana's: she made it


def test_the_service_account_is_recorded_by_its_email(api, signing_key):
    oidc: dict[str, Any] = {
        "auth": False,
        "headers": {"Authorization": f"Bearer {mint(signing_key)}"},
    }

    created = ok(call(api, "POST", "/messages", ONE_OFF, **oidc), 201)

    assert by(created) == (TRIGGER, TRIGGER)


def test_rotations_record_who_created_edited_and_swapped(api, signing_key):
    ana, zoe = as_person(signing_key, ANA), as_person(signing_key, ZOE)

    created = ok(call(api, "POST", "/rotations", ROTATION, **ana), 201)
    rid = created["id"]
    edited = ok(call(api, "PUT", f"/rotations/{rid}", {"send_time": "10:00"}, **zoe))
    swapped = ok(
        call(api, "POST", f"/rotations/{rid}/swap", {"members": ["U01AAAAAA", "U02BBBBBB"]})
    )

    assert by(created) == (ANA, ANA)
    assert by(edited) == (ANA, ZOE)
    assert by(swapped) == (ANA, "admin")


def test_a_message_written_straight_to_firestore_reads_and_edits_without_them(api, db):
    mid = seed_message(db)

    read = ok(call(api, "GET", f"/messages/{mid}"))
    edited = ok(call(api, "PUT", f"/messages/{mid}", {"text": "Edited"}))

    assert by(read) == (None, None)
    assert "created_by" not in read
    assert by(edited) == (None, "admin")


def test_the_slack_side_records_the_slack_user_and_answers_name_them(api, db, rt, slack, clock):
    slack.seed_workspace()
    refresh_lists(db, clock, rt.settings, "tick-worker")
    draft = MessageDraft.model_validate_json(json.dumps(ONE_OFF))
    mid = create_message(rt, draft, None, by=ANA_SLACK)["id"]

    read = ok(call(api, "GET", f"/messages/{mid}"))
    listed = ok(call(api, "GET", f"/messages?created_by={ANA_SLACK}"))["messages"]

    assert by(read) == (ANA_SLACK, ANA_SLACK)
    assert read["names"][ANA_SLACK] == "@Ana García"
    assert [m["names"][ANA_SLACK] for m in listed] == ["@Ana García"]


def test_messages_are_listed_by_who_made_them(api, signing_key):
    ana, zoe = as_person(signing_key, ANA), as_person(signing_key, ZOE)
    anas = {
        ok(call(api, "POST", "/messages", body, **ana), 201)["id"] for body in (ONE_OFF, SERIES)
    }
    zoes = ok(call(api, "POST", "/messages", ONE_OFF, **zoe), 201)["id"]
    admins = ok(call(api, "POST", "/messages", SERIES), 201)["id"]

    def listed(query: str) -> set[str]:
        return {m["id"] for m in ok(call(api, "GET", f"/messages?{query}"))["messages"]}

    assert listed(f"created_by={ANA}") == anas
    assert listed(f"created_by={ZOE}") == {zoes}
    assert listed("created_by=admin") == {admins}
    assert len(listed(f"created_by={ANA}&status=pending")) == 1
    assert listed("created_by=nobody@example.com") == set()


@pytest.mark.parametrize("value", ["", "ana", "not an email@", "a@b@c", "x" * 500 + "@e.com"])
def test_a_bad_created_by_is_422_naming_it(api, value):
    status, answer = call(api, "GET", f"/messages?created_by={quote(value)}")

    assert status == 422
    assert fields_of(answer) == ["created_by"]


def test_send_now_records_who_sent_it(api, signing_key):
    ana, zoe = as_person(signing_key, ANA), as_person(signing_key, ZOE)
    mid = ok(call(api, "POST", "/messages", ONE_OFF, **ana), 201)["id"]

    sent = ok(call(api, "POST", f"/messages/{mid}/send-now", **zoe))

    assert sent["status"] == "sent"
    assert by(sent["message"]) == (ANA, ZOE)


def test_a_retry_records_who_released_the_failed_occurrence(api, db, slack, rt, signing_key):
    slack.set_channel("C0123ABCD", member=False)
    mid = seed_message(db)
    run_kind(rt, MESSAGE_KIND)
    slack.set_channel("C0123ABCD", member=True)

    retried = call(api, "POST", f"/messages/{mid}/retry", **as_person(signing_key, ZOE))

    assert ok(retried)["status"] == "sent"
    [entry] = ledger(db).values()
    assert (entry["operator"]["action"], entry["operator"]["by"]) == ("release", ZOE)
