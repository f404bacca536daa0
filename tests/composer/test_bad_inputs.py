"""Bad inputs through the public surfaces: every one gets a 4xx JSON answer naming what is
wrong and writes nothing; the same bad values written straight to Firestore end `failed` or
`paused` with a code (one ERROR line each), and never take a dry run or a pass down."""

from __future__ import annotations

import base64
import json
from typing import Any

import flask
import pytest

from targets.kinds import run_pass
from tests.fixtures.api import YEAR_1, YEAR_9999, call, encode_cursor
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.documents import everything
from tests.fixtures.logs import error_lines
from tests.fixtures.messages import ONE_OFF, SERIES, message, seed_message
from tests.fixtures.rotations import ROTATION, rotation, seed_rotation
from tests.fixtures.runtime import ADMIN_TOKEN, ROOT


def refused(api: Any, db: Any, method: str, path: str, body: Any, status: int) -> dict[str, Any]:
    """The request gets `status` with the contract's JSON error, and writes nothing."""
    before = everything(db)
    got, answer = call(api, method, path, body)
    assert got == status, answer
    assert set(answer) == {"error", "message", "details"}
    assert everything(db) == before
    return dict(answer)


def fields_named(answer: dict[str, Any]) -> set[str]:
    return {detail["field"] for detail in answer["details"]}


# --- the body itself ----------------------------------------------------------------------


@pytest.mark.parametrize("depth", [2_000, 100_000])
@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/messages"), ("POST", "/preview"), ("POST", "/rotations"), ("PUT", "/messages/m")],
)
def test_deeply_nested_json_is_400(api, db, depth, method, path):
    seed_message(db, "m")
    for body in ("[" * depth + "]" * depth, '{"text":' * depth + "1" + "}" * depth):
        answer = refused(api, db, method, path, body, 400)
        assert "nests deeper" in answer["message"]


def test_json_just_deep_enough_for_no_body_is_still_a_422_not_a_400(api, db):
    # 30 levels parse, and the model names the field that is not a string.
    answer = refused(api, db, "POST", "/messages", ONE_OFF | {"text": [[[[[[1]]]]]]}, 422)
    assert fields_named(answer) == {"text"}


# --- query parameters ---------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["²", "1" * 5_001, "٣", "+5", " 5", "5\n", "0", "201"])
def test_a_bad_limit_is_422_naming_it(api, db, raw):
    answer = refused(api, db, "GET", f"/messages?limit={_quote(raw)}", None, 422)
    assert fields_named(answer) == {"limit"}
    seed_message(db, "m")
    answer = refused(api, db, "GET", f"/messages/m/deliveries?limit={_quote(raw)}", None, 422)
    assert fields_named(answer) == {"limit"}


@pytest.mark.parametrize("raw", ["²", "9" * 5_001, "51"])
def test_a_bad_preview_count_is_422_naming_it(api, db, raw):
    answer = refused(api, db, "POST", f"/preview?count={_quote(raw)}", ONE_OFF, 422)
    assert fields_named(answer) == {"count"}


def _quote(raw: str) -> str:
    from urllib.parse import quote

    return quote(raw, safe="")


@pytest.mark.parametrize(
    "cursor",
    [
        {"at": None, "id": "a/b"},
        {"at": None, "id": "__x__"},
        {"at": None, "id": ".."},
        {"at": None, "id": "."},
        {"at": None, "id": "x" * 1_501},
        {"at": "0001-01-01T00:00:00+14:00", "id": "a"},
        {"at": "9999-12-31T23:59:59-12:00", "id": "a"},
        {"at": "2027-01-04T09:00:00", "id": "a"},
        {"at": 5, "id": "a"},
        ["a"],
    ],
)
def test_a_tampered_cursor_is_422_naming_it(api, db, cursor):
    seed_message(db, "m")
    for path in ("/messages", "/messages/m/deliveries"):
        answer = refused(api, db, "GET", f"{path}?cursor={encode_cursor(cursor)}", None, 422)
        assert fields_named(answer) == {"cursor"}


def test_a_cursor_nested_past_the_json_decoders_depth_is_422(api, db):
    seed_message(db, "m")
    deep = base64.urlsafe_b64encode(b"[" * 1_100 + b"]" * 1_100).decode().rstrip("=")
    for path in ("/messages", "/messages/m/deliveries"):
        answer = refused(api, db, "GET", f"{path}?cursor={deep}", None, 422)
        assert fields_named(answer) == {"cursor"}


# --- instants -----------------------------------------------------------------------------

FAR_INSTANTS = [
    ("0001-01-01T00:00:00+14:00", "Pacific/Kiritimati"),
    ("0001-01-01T00:00:00+00:00", "Pacific/Kiritimati"),
    ("0001-01-02T00:00:00-12:00", "Etc/GMT+12"),
    ("9999-12-31T23:59:59-12:00", "Etc/GMT+12"),
    ("9999-12-31T23:59:59+00:00", "Etc/GMT+12"),
    ("9999-12-31T23:59:59+14:00", "Pacific/Kiritimati"),
]


@pytest.mark.parametrize(("instant", "zone"), FAR_INSTANTS)
@pytest.mark.parametrize("field", ["send_at", "expires_at"])
def test_instants_near_year_1_or_9999_are_422_naming_the_field(api, db, instant, zone, field):
    body = ONE_OFF | {"timezone": zone, field: instant}
    for path in ("/messages", "/preview"):
        answer = refused(api, db, "POST", path, body, 422)
        assert field in fields_named(answer)
    seed_message(db, "m")
    answer = refused(api, db, "PUT", "/messages/m", {field: instant}, 422)
    assert field in fields_named(answer)


def _tick(tick_app: flask.Flask, body: Any) -> tuple[int, dict[str, Any]]:
    response = tick_app.test_client().post(
        "/",
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        data=body if isinstance(body, str) else json.dumps(body),
        content_type="application/json",
    )
    assert response.mimetype == "application/json"
    return response.status_code, json.loads(response.get_data(as_text=True))


@pytest.mark.parametrize("now", [instant for instant, _ in FAR_INSTANTS])
def test_a_tick_now_near_year_1_or_9999_is_422_and_runs_nothing(tick_app, env, db, slack, now):
    seed_message(db, "m")
    before = everything(db)
    for dry_run in (True, False):
        status, answer = _tick(tick_app, {"now": now, "dry_run": dry_run})
        assert status == 422, answer
        assert fields_named(answer) == {"now"}
    assert everything(db) == before
    assert slack.posts() == []


def test_a_deeply_nested_tick_body_is_400(tick_app, env, db, slack):
    status, answer = _tick(tick_app, "[" * 100_000 + "]" * 100_000)
    assert (status, answer["error"]) == (400, "bad_request")
    assert slack.posts() == []


# --- stored documents with the same values -------------------------------------------------

STORED_BAD: dict[str, tuple[dict[str, Any], str]] = {
    "next_run_at_year_1": (
        {"next_run_at": YEAR_1, "timezone": "Pacific/Kiritimati"},
        "invalid_occurrence_at",
    ),
    "send_at_year_1": ({"send_at": YEAR_1, "timezone": "Etc/GMT+12"}, "invalid_send_at"),
    "expires_at_year_9999": (
        {"expires_at": YEAR_9999, "timezone": "Etc/GMT+12"},
        "invalid_expires_at",
    ),
    "expires_at_year_1": (
        {"expires_at": YEAR_1, "timezone": "Pacific/Kiritimati"},
        "invalid_expires_at",
    ),
    "grace_2_62": (
        {
            "send_at": None,
            "status": "recurring",
            "rrule": "FREQ=DAILY",
            "dtstart": "2027-01-01T09:00",
            "misfire_grace_seconds": 2**62,
        },
        "invalid_misfire_grace_seconds",
    ),
    "channel_newline": ({"channel": "C0PROBE01\n"}, "invalid_channel"),
}


@pytest.mark.parametrize("case", list(STORED_BAD))
def test_stored_bad_values_end_failed_with_a_code_and_never_break_a_pass(
    rt, db, slack, capsys, case
):
    fields, code = STORED_BAD[case]
    seed_message(db, "bad", **fields)
    seed_message(db, "good", channel="C0GOOD001")
    dry = run_pass(rt, dry_run=True)
    by_id = {preview["id"]: preview for preview in dry["previews"]}
    assert by_id["bad"]["error"]["code"] == code
    assert by_id["good"]["text"] == "Stand-up in 5 minutes"
    assert slack.posts() == []
    capsys.readouterr()

    summary = run_pass(rt)

    assert (summary["sent"], summary["failed"], summary["errors"]) == (1, 1, 0)
    assert [post.channel for post in slack.posts()] == ["C0GOOD001"]
    stored = message(db, "bad")
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", code)
    assert len(error_lines(capsys.readouterr().out, message_id="bad", error_code=code)) == 1


# --- numbers, times and ids ---------------------------------------------------------------


@pytest.mark.parametrize("grace", [2**63, 10**30, 366 * 24 * 3600 + 1, -1])
def test_misfire_grace_out_of_range_is_422(api, db, grace):
    answer = refused(api, db, "POST", "/messages", SERIES | {"misfire_grace_seconds": grace}, 422)
    assert fields_named(answer) == {"misfire_grace_seconds"}
    seed_message(db, "m")
    answer = refused(api, db, "PUT", "/messages/m", {"misfire_grace_seconds": grace}, 422)
    assert fields_named(answer) == {"misfire_grace_seconds"}


def test_misfire_grace_of_a_year_is_accepted(api):
    status, answer = call(
        api, "POST", "/messages", SERIES | {"misfire_grace_seconds": 366 * 24 * 3600}
    )
    assert status == 201, answer


@pytest.mark.parametrize("send_time", ["09:30\n", "09:30\r", "\n09:30", "٠٩:٣٠", "09:30 "])
def test_a_send_time_with_anything_around_it_is_422(api, db, send_time):
    answer = refused(api, db, "POST", "/rotations", ROTATION | {"send_time": send_time}, 422)
    assert fields_named(answer) == {"send_time"}
    seed_rotation(db, "r")
    answer = refused(api, db, "PUT", "/rotations/r", {"send_time": send_time}, 422)
    assert fields_named(answer) == {"send_time"}


def test_a_stored_send_time_with_a_newline_pauses_the_rotation(rt, db, slack):
    seed_rotation(db, send_time="09:30\n")
    run_pass(rt)
    stored = rotation(db)
    assert (stored["status"], stored["last_error"]["code"]) == ("paused", "invalid_send_time")
    assert slack.posts() == []


@pytest.mark.parametrize("channel", ["C0PROBE01\n", "C0PROBE01\r\n", "\nC0PROBE01"])
def test_a_channel_with_a_newline_is_422_everywhere(api, db, channel):
    answer = refused(api, db, "POST", "/messages", ONE_OFF | {"channel": channel}, 422)
    assert fields_named(answer) == {"channel"}
    answer = refused(api, db, "POST", "/rotations", ROTATION | {"channel": channel}, 422)
    assert fields_named(answer) == {"channel"}
    answer = refused(api, db, "GET", f"/messages?channel={_quote(channel)}", None, 422)
    assert fields_named(answer) == {"channel"}


def test_a_member_id_with_a_newline_is_422(api, db):
    members = ["U01AAAAAA\n", "U02BBBBBB"]
    answer = refused(api, db, "POST", "/rotations", ROTATION | {"members": members}, 422)
    assert "members" in {field.split(".")[0] for field in fields_named(answer)}


@pytest.mark.parametrize(
    "change",
    [
        {"members": [f"U{i:08d}" for i in range(1_001)]},
        {"skips": {"2027-01-05": [f"U{i:08d}" for i in range(1_001)]}},
        {"skips": {f"2027-{1 + i // 28:02d}-{1 + i % 28:02d}": ["U01AAAAAA"] for i in range(367)}},
    ],
    ids=["1001 members", "1001 skipped on a day", "367 skip dates"],
)
def test_a_rotation_too_large_to_store_is_422_naming_the_field(api, db, change):
    answer = refused(api, db, "POST", "/rotations", ROTATION | change, 422)
    assert {field.split(".")[0] for field in fields_named(answer)} == set(change)


def test_a_stored_rotation_channel_with_a_newline_pauses_it(rt, db, slack):
    seed_rotation(db, channel="C0PROBE01\n")
    run_pass(rt)
    stored = rotation(db)
    assert (stored["status"], stored["last_error"]["code"]) == ("paused", "invalid_channel")
    assert slack.posts() == []


# --- paths --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/messages/a%0Ab", "/messages%0A", "/rotations/a%0A/preview"])
def test_a_path_the_framework_cannot_route_gets_the_json_error(api, path):
    status, answer = call(api, "GET", path)
    assert (status, answer["error"]) == (404, "not_found")
    status, answer = call(api, "GET", path, auth=False)
    assert (status, answer["error"]) == (401, "unauthorized")


# --- leases -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lease", ["x", 5, True, [1], {"owner": "w"}, {"expires_at": "soon"}, "", 0, {}]
)
def test_a_sending_message_with_an_unusable_lease_ends_failed(rt, db, slack, capsys, lease):
    seed_message(db, "stuck", status="sending", lease=lease)
    seed_message(db, "good")
    capsys.readouterr()

    summary = run_pass(rt)

    assert summary["sent"] == 1
    stored = message(db, "stuck")
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "invalid_lease")
    assert "lease" not in stored
    out = capsys.readouterr().out
    assert len(error_lines(out, message_id="stuck", error_code="invalid_lease")) == 1
    assert [post.channel for post in slack.posts()] == ["C0123ABCD"]  # only "good"
    assert set(ledger(db)) == {f"m:good:{T0.strftime('%Y%m%dT%H%M%SZ')}"}


@pytest.mark.parametrize("lease", ["x", 5, {"owner": "w"}, {"expires_at": "soon"}])
def test_a_rotation_with_an_unusable_lease_is_paused_and_can_be_resumed(
    rt, db, slack, api, capsys, lease
):
    seed_rotation(db, lease=lease)
    dry = run_pass(rt, dry_run=True)
    assert [p["error"]["code"] for p in dry["previews"]] == ["invalid_lease"]
    capsys.readouterr()

    run_pass(rt)

    stored = rotation(db)
    assert (stored["status"], stored["last_error"]["code"]) == ("paused", "invalid_lease")
    assert "lease" not in stored
    out = capsys.readouterr().out
    assert len(error_lines(out, rotation_id="standup", error_code="invalid_lease")) == 1
    assert slack.posts() == []
    # A person resumes it through the API, and today's turn goes out.
    status, answer = call(api, "PUT", "/rotations/standup", {"status": "active"})
    assert status == 200, answer
    run_pass(rt)
    assert len(slack.posts()) == 1


def test_the_unusable_lease_query_has_its_composite_index():
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = [
        [(f["fieldPath"], f["order"]) for f in index["fields"]]
        for index in indexes
        if index["collectionGroup"] == "scheduled_messages"
    ]
    assert [("status", "ASCENDING"), ("lease", "ASCENDING")] in fields
