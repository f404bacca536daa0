"""The `tick` target end to end over HTTP: functions-framework's own app and test client in
front of main.py, the real Firestore emulator, the Slack stand-in, and real RS256 ID tokens
checked against a certs endpoint on 127.0.0.1."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import flask
import pytest
from google.cloud import firestore
from werkzeug.test import TestResponse

from core.store import DELIVERIES, MESSAGES
from formatting.slack_text import to_slack
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.documents import update_times
from tests.fixtures.messages import message, seed_message
from tests.fixtures.oidc import AUDIENCE, TRIGGER, CertsServer, mint
from tests.fixtures.rotations import seed_rotation
from tests.fixtures.runtime import ADMIN_TOKEN
from tests.fixtures.tick import answer, at, bearer, tick

SUMMARY_KEYS = {
    "sent",
    "failed",
    "dry_run",
    "claimed",
    "advanced",
    "completed",
    "skipped",
    "duplicates",
    "reconciled",
}
CRON = {"X-CloudScheduler": "true"}

pytestmark = pytest.mark.usefixtures("fresh_certs_cache")


@pytest.fixture
def client(tick_app: flask.Flask, env: dict[str, str]) -> Any:
    return tick_app.test_client()


@pytest.fixture
def oidc(env: dict[str, str], certs_server: CertsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """ID tokens minted by tests.fixtures.oidc.mint are what this deployment accepts."""
    monkeypatch.setenv("TICK_AUDIENCE", AUDIENCE)
    monkeypatch.setenv("TRIGGER_SERVICE_ACCOUNTS", f"other@example.test, {TRIGGER}")
    monkeypatch.setenv("OIDC_CERTS_URL", certs_server.url)


# --- helpers ------------------------------------------------------------------------------


def error(response: TestResponse, status: int, code: str) -> dict[str, Any]:
    body = answer(response, status)
    assert body["error"] == code
    assert isinstance(body["message"], str)
    assert body["message"]
    assert isinstance(body["details"], list)
    return body


def update_time(db: firestore.Client, doc_id: str) -> Any:
    return db.collection(MESSAGES).document(doc_id).get().update_time


def past_due() -> datetime:
    """Due by the wall clock, for requests that carry no `now` (or must not use it)."""
    return datetime.now(UTC) - timedelta(minutes=1)


def assert_untouched(db: firestore.Client, slack: Any, doc_id: str) -> None:
    assert slack.posts() == []
    assert ledger(db) == {}
    doc = message(db, doc_id)
    assert doc["status"] == "pending"
    assert doc["version"] == 1


# --- authentication -----------------------------------------------------------------------


def test_no_authorization_is_401_and_nothing_happens(client, db, slack):
    mid = seed_message(db)

    body = error(tick(client, body=at(T0)), 401, "unauthorized")

    assert "missing" in body["message"]
    assert_untouched(db, slack, mid)


@pytest.mark.parametrize(
    "authorization",
    [
        f"Bearer {ADMIN_TOKEN}x",
        "Bearer wrong-token",
        f"Basic {ADMIN_TOKEN}",
        ADMIN_TOKEN,
        "Bearer ",
    ],
    ids=["admin-plus-one", "wrong-token", "basic-scheme", "no-scheme", "empty-bearer"],
)
def test_bad_credentials_are_401_and_nothing_happens(client, db, slack, authorization):
    mid = seed_message(db)

    response = tick(client, headers={"Authorization": authorization}, body=at(T0))

    body = error(response, 401, "unauthorized")
    assert ADMIN_TOKEN not in response.get_data(as_text=True)
    assert "skipped" not in body
    assert_untouched(db, slack, mid)


def test_admin_token_runs_the_pass(client, db, slack):
    mid = seed_message(db)

    body = answer(tick(client, headers=bearer(), body=at(T0)), 200)

    assert body.keys() >= SUMMARY_KEYS
    assert (body["sent"], body["failed"], body["claimed"]) == (1, 0, 1)
    assert body["dry_run"] is False
    assert all(isinstance(body[key], int) for key in SUMMARY_KEYS - {"dry_run"})
    [post] = slack.posts()
    assert post.channel == "C0123ABCD"
    assert post.text == "Stand-up in 5 minutes"
    doc = message(db, mid)
    assert doc["status"] == "sent"
    assert doc["last_slack_ts"] == post.ts
    assert [entry["status"] for entry in ledger(db).values()] == ["sent"]


def test_admin_token_a_second_time_sends_nothing_more(client, db, slack):
    seed_message(db)
    answer(tick(client, headers=bearer(), body=at(T0)), 200)

    body = answer(tick(client, headers=bearer(), body=at(T0 + timedelta(minutes=1))), 200)

    assert body["sent"] == 0
    assert len(slack.posts()) == 1


def test_valid_id_token_runs_the_pass(client, db, slack, oidc, signing_key, certs_server):
    mid = seed_message(db)
    token = mint(signing_key)

    response = tick(client, headers=bearer(token), body=at(T0))

    body = answer(response, 200)
    assert (body["sent"], body["failed"]) == (1, 0)
    assert len(slack.posts()) == 1
    assert message(db, mid)["status"] == "sent"
    assert certs_server.hits == 1
    assert_token_absent(token, response)


def test_id_token_without_admin_token_configured_runs_the_pass(
    client, db, slack, oidc, signing_key, monkeypatch
):
    monkeypatch.delenv("ADMIN_TOKEN")
    seed_message(db)

    body = answer(tick(client, headers=bearer(mint(signing_key)), body=at(T0)), 200)

    assert body["sent"] == 1


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"aud": "https://elsewhere.example.test/tick"}, "audience"),
        ({"email": "intruder@other-project.iam.gserviceaccount.com"}, "TRIGGER_SERVICE_ACCOUNTS"),
        ({"email_verified": False}, "verified"),
        ({"iss": "https://evil.example.test"}, "Google"),
    ],
    ids=["wrong-audience", "email-not-allowed", "email-unverified", "wrong-issuer"],
)
def test_rejected_id_token_is_401_and_nothing_happens(
    client, db, slack, oidc, signing_key, claims, reason
):
    mid = seed_message(db)
    token = mint(signing_key, **claims)

    response = tick(client, headers=bearer(token), body=at(T0))

    body = error(response, 401, "unauthorized")
    assert reason in body["message"]
    assert_token_absent(token, response)
    assert_untouched(db, slack, mid)


def test_id_token_signed_by_another_key_is_401(client, db, slack, oidc, other_key):
    mid = seed_message(db)
    token = mint(other_key)

    response = tick(client, headers=bearer(token), body=at(T0))

    error(response, 401, "unauthorized")
    assert_token_absent(token, response)
    assert_untouched(db, slack, mid)


def test_id_token_is_401_when_tick_audience_is_unset(
    client, db, slack, oidc, signing_key, certs_server, monkeypatch
):
    monkeypatch.delenv("TICK_AUDIENCE")
    mid = seed_message(db)

    error(tick(client, headers=bearer(mint(signing_key)), body=at(T0)), 401, "unauthorized")

    assert certs_server.hits == 0
    assert_untouched(db, slack, mid)


def assert_token_absent(token: str, response: TestResponse) -> None:
    text = response.get_data(as_text=True)
    for piece in [token, *(part for part in token.split(".") if len(part) > 3)]:
        assert piece not in text


# --- the cron gate ------------------------------------------------------------------------


@pytest.mark.parametrize("app_env", ["development", "staging"])
def test_cron_outside_production_is_skipped_and_touches_nothing(
    client, db, slack, monkeypatch, app_env
):
    monkeypatch.setenv("APP_ENV", app_env)
    mid = seed_message(db)
    before = update_time(db, mid)

    response = tick(client, headers={**bearer(), **CRON}, body=at(T0))

    assert answer(response, 200) == {"skipped": "non-production cron"}
    assert update_time(db, mid) == before
    assert_untouched(db, slack, mid)


def test_cron_header_value_is_case_insensitive(client, db, slack):
    mid = seed_message(db)

    response = tick(client, headers={**bearer(), "X-CloudScheduler": "TRUE"}, body=at(T0))

    assert answer(response, 200) == {"skipped": "non-production cron"}
    assert_untouched(db, slack, mid)


def test_cron_in_production_runs_the_pass(client, db, slack, monkeypatch):
    monkeypatch.setenv("APP_ENV", "production")
    mid = seed_message(db, send_at=past_due(), next_run_at=past_due())

    body = answer(tick(client, headers={**bearer(), **CRON}), 200)

    assert body["skipped"] == 0  # the count, not the cron gate's answer
    assert (body["sent"], body["failed"], body["dry_run"]) == (1, 0, False)
    assert len(slack.posts()) == 1
    assert message(db, mid)["status"] == "sent"


@pytest.mark.parametrize("app_env", ["development", "production"])
def test_unauthenticated_cron_is_401_even_outside_production(
    client, db, slack, monkeypatch, app_env
):
    monkeypatch.setenv("APP_ENV", app_env)
    mid = seed_message(db, send_at=past_due(), next_run_at=past_due())

    body = error(tick(client, headers=CRON), 401, "unauthorized")

    assert "skipped" not in body
    assert_untouched(db, slack, mid)


def test_request_without_cron_header_runs_outside_production(client, db, slack, monkeypatch):
    monkeypatch.setenv("APP_ENV", "staging")
    seed_message(db)

    body = answer(tick(client, headers=bearer(), body=at(T0)), 200)

    assert body["sent"] == 1


# --- dry run ------------------------------------------------------------------------------


def test_dry_run_previews_and_writes_nothing(client, db, slack):
    text = "Deploy at noon <!here> & <@U024BE7LH>, see <https://example.test|notes>"
    due = seed_message(db, text=text, channel="C0DRYRUN1")
    later = seed_message(db, next_run_at=T0 + timedelta(hours=1))
    deleted = seed_message(db, deleted=True)
    before = update_times(db)
    assert len(before) == 3

    body = answer(tick(client, headers=bearer(), body={"dry_run": True, **at(T0)}), 200)

    assert body["dry_run"] is True
    assert (body["sent"], body["failed"]) == (0, 0)
    assert body["previews"] == [
        {
            "kind": "message",
            "id": due,
            "channel": "C0DRYRUN1",
            "text": to_slack(text).text,
            "occurrence_at": T0.isoformat(),
        }
    ]
    assert later not in json.dumps(body)
    assert deleted not in json.dumps(body)
    assert update_times(db) == before
    assert list(db.collection(DELIVERIES).stream()) == []
    assert slack.posts() == []

    # What the preview showed is exactly what a real pass then posts.
    answer(tick(client, headers=bearer(), body=at(T0)), 200)
    [post] = slack.posts()
    assert (post.channel, post.text) == ("C0DRYRUN1", body["previews"][0]["text"])
    assert "<!here>" not in post.text


def test_dry_run_with_nothing_due_previews_nothing(client, db, slack):
    seed_message(db, next_run_at=T0 + timedelta(hours=1))
    before = update_times(db)

    body = answer(tick(client, headers=bearer(), body={"dry_run": True, **at(T0)}), 200)

    assert (body["dry_run"], body["previews"], body["sent"]) == (True, [], 0)
    assert update_times(db) == before
    assert slack.posts() == []


# --- the `now` override -------------------------------------------------------------------


def test_now_override_runs_the_pass_as_of_that_instant(client, db, slack):
    mid = seed_message(db, send_at=T0 + timedelta(hours=1), next_run_at=T0 + timedelta(hours=1))

    early = answer(tick(client, headers=bearer(), body=at(T0)), 200)

    assert early["sent"] == 0
    assert slack.posts() == []
    assert message(db, mid)["status"] == "pending"

    # The same instant, T0 + 1 h, written with another offset.
    on_time = answer(tick(client, headers=bearer(), body={"now": "2027-01-04T12:00:00+02:00"}), 200)

    assert on_time["sent"] == 1
    assert len(slack.posts()) == 1
    doc = message(db, mid)
    assert doc["status"] == "sent"
    assert doc["last_sent_at"] == T0 + timedelta(hours=1)


def test_now_in_production_is_400_and_nothing_is_sent(client, db, slack, monkeypatch):
    monkeypatch.setenv("APP_ENV", "production")
    mid = seed_message(db, send_at=past_due(), next_run_at=past_due())

    body = error(tick(client, headers=bearer(), body=at(T0)), 400, "bad_request")

    assert "now" in body["message"]
    assert_untouched(db, slack, mid)


@pytest.mark.parametrize("now", ["2027-01-04T09:00:00", "2027-01-04", "tomorrow"])
def test_now_without_an_offset_is_422_naming_it(client, db, slack, now):
    mid = seed_message(db)

    body = error(tick(client, headers=bearer(), body={"now": now}), 422, "validation_failed")

    assert [detail["field"] for detail in body["details"]] == ["now"]
    assert "now" in body["message"]
    assert_untouched(db, slack, mid)


# --- the request body ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    ['{"dry_run": tru', "{'now': 1}", "[]", '[{"dry_run": true}]', '"dry_run"', "null", "\xff"],
    ids=["truncated", "single-quotes", "empty-array", "array", "string", "null", "not-utf8"],
)
def test_body_that_is_not_a_json_object_is_400(client, db, slack, data):
    mid = seed_message(db, send_at=past_due(), next_run_at=past_due())

    error(tick(client, headers=bearer(), data=data.encode("latin-1")), 400, "bad_request")

    assert_untouched(db, slack, mid)


def test_unknown_field_is_422_naming_it(client, db, slack):
    mid = seed_message(db, send_at=past_due(), next_run_at=past_due())

    body = error(tick(client, headers=bearer(), body={"dryrun": True}), 422, "validation_failed")

    assert [detail["field"] for detail in body["details"]] == ["dryrun"]
    assert_untouched(db, slack, mid)


@pytest.mark.parametrize("data", ["", "  \n", "{}"], ids=["empty", "whitespace", "empty-object"])
def test_empty_body_runs_normally(client, db, slack, data):
    mid = seed_message(db, send_at=past_due(), next_run_at=past_due())

    body = answer(tick(client, headers=bearer(), data=data), 200)

    assert (body["sent"], body["failed"], body["dry_run"]) == (1, 0, False)
    assert len(slack.posts()) == 1
    assert message(db, mid)["status"] == "sent"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"dry_run": "yes"}, "dry_run"),
        ({"dry_run": 0}, "dry_run"),
        ({"now": 1798966800}, "now"),
    ],
)
def test_loosely_typed_fields_are_422_naming_them(client, db, slack, body, field):
    mid = seed_message(db, send_at=past_due(), next_run_at=past_due())

    answer_body = error(tick(client, headers=bearer(), body=body), 422, "validation_failed")

    assert [detail["field"] for detail in answer_body["details"]] == [field]
    assert_untouched(db, slack, mid)


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_other_methods_are_405_and_nothing_happens(client, db, slack, method):
    mid = seed_message(db, send_at=past_due(), next_run_at=past_due())

    response = client.open("/", method=method, headers=bearer())

    error(response, 405, "method_not_allowed")
    assert_untouched(db, slack, mid)


def test_dry_run_reports_a_document_it_would_reject_and_goes_on(client, db, slack):
    bad = seed_message(db, occurrence_at="yesterday")
    good = seed_message(db, next_run_at=T0 - timedelta(minutes=1))

    body = answer(tick(client, headers=bearer(), body={"dry_run": True, **at(T0)}), 200)

    by_id = {preview["id"]: preview for preview in body["previews"]}
    assert by_id[bad]["error"]["code"] == "invalid_occurrence_at"
    assert by_id[good]["text"] == "Stand-up in 5 minutes"
    assert slack.posts() == []


# --- rotations ------------------------------------------------------------------------------


def test_the_pass_posts_due_rotations_and_counts_them_apart(client, db, slack):
    seed_message(db)
    seed_rotation(db)

    dry = answer(tick(client, headers=bearer(), body={**at(T0), "dry_run": True}), 200)
    assert {p["kind"] for p in dry["previews"]} == {"message", "rotation"}
    assert slack.posts() == []
    body = answer(tick(client, headers=bearer(), body=at(T0)), 200)

    assert (body["sent"], body["rotations"]["sent"]) == (2, 1)
    assert sorted(post.delivery_id or "" for post in slack.posts())[-1] == "r:standup:2027-01-04"


@pytest.mark.parametrize("failing", ["rotations", "messages"])
def test_one_part_of_the_pass_failing_does_not_keep_the_other_from_going_out(
    client, db, slack, monkeypatch, capsys, failing
):
    """The due rotations' read or the due messages' read fails once (ServiceUnavailable):
    the other part posts all the same, the answer is a summary counting the error, and the
    next pass posts what the failed part left."""
    from google.api_core.exceptions import ServiceUnavailable

    from processor.occurrence_kind import OccurrenceKind
    from rotations.kind import ROTATION_DAY_KIND

    # (The messages are the first of the kinds a record describes to read what is due.)
    owner, name = {
        "rotations": (ROTATION_DAY_KIND, "due"),
        "messages": (OccurrenceKind, "due"),
    }[failing]
    real = getattr(owner, name)
    calls: list[int] = []

    def fails_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise ServiceUnavailable("injected: the service is unavailable")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, fails_once)
    mid = seed_message(db, channel="C0MSGS001")  # the rotation posts to a channel of its own
    seed_rotation(db)

    body = answer(tick(client, headers=bearer(), body=at(T0)), 200)

    assert body["errors"] == 1
    assert body["rotations"]["errors"] == (failing == "rotations")
    delivered = {"rotations": "m:", "messages": "r:"}[failing]
    assert [p.delivery_id[:2] for p in slack.posts() if p.delivery_id] == [delivered]
    errors = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    [line] = [e for e in errors if e["severity"] == "ERROR"]
    assert line["error_code"] == "ServiceUnavailable"
    assert line["collection"] == {"rotations": "rotations", "messages": MESSAGES}[failing]

    again = answer(tick(client, headers=bearer(), body=at(T0)), 200)

    assert (again["sent"], again["errors"]) == (1, 0)
    assert sorted(p.delivery_id[:2] for p in slack.posts() if p.delivery_id) == ["m:", "r:"]
    assert message(db, mid)["status"] == "sent"
