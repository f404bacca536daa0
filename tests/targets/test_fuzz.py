"""Fuzzing the public surfaces with hypothesis, on the real emulator and Slack stand-in.

1. Request bodies and query parameters for every route of the `api` and `tick` targets,
   field by field a mix of valid values, near misses (a trailing newline, `²`, year 1 with
   +14:00, 2^63) and arbitrary JSON: a request never gets a 5xx, and a 4xx writes nothing.
2. Messages and rotations written straight to Firestore in the same mix of shapes, then a
   dry run and a real pass: neither raises nor counts an error, the pass keeps within its
   time budget on the injected clock, no occurrence is posted twice or to an id that is not
   one, and every due document is dealt with (sent, moved on, failed or paused with a
   code), none silently left as it was.

Example counts are modest so the suite stays quick on two cores; a failing example is
replayed first on the next run (hypothesis' example database).
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlencode

import pytest
from google.cloud import firestore
from hypothesis import HealthCheck, given
from hypothesis import settings as examples
from hypothesis import strategies as st

from core.models import Message
from core.rotation import Rotation
from core.store import MESSAGES, ROTATIONS
from targets.kinds import run_pass
from tests.fixtures.api import YEAR_1, YEAR_9999, encode_cursor
from tests.fixtures.clock import T0
from tests.fixtures.documents import everything
from tests.fixtures.messages import ONE_OFF, SERIES
from tests.fixtures.rotations import ROTATION
from tests.fixtures.runtime import ADMIN_TOKEN, make_runtime

pytestmark = pytest.mark.slow
SLACK_CHANNEL = r"[CGD][A-Z0-9]{2,}"  # the whole value, no trailing newline

FUZZ = examples(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# --- values -------------------------------------------------------------------------------

NEAR_MISSES = st.sampled_from(
    [
        "",
        " ",
        "\n",
        "C0PROBE01\n",
        "U01AAAAAA\n",
        "09:30\n",
        "²",
        "٣",
        "9" * 5_001,
        "__x__",
        "a/b",
        "..",
        "\x00",
        "0001-01-01T00:00:00+14:00",
        "9999-12-31T23:59:59-12:00",
        "2027-01-04T09:00",
        "2027-13-01T00:00",
        "Pacific/Kiritimati",
        "Etc/GMT+12",
        "Nowhere/Land",
        "FREQ=DAILY;COUNT=2",
        "RRULE:FREQ=WEEKLY;BYDAY=MO",
        "FREQ=",
        "{member}",
    ]
)
# Request values only (Firestore stores no int beyond int64).
BIG_INTS = st.sampled_from([2**63, -(2**63) - 1, 10**30, 2**62, -1, 0, 366 * 24 * 3600 + 1])
OFFSETS = st.sampled_from([UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))])
INSTANTS = st.one_of(
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(1, 1, 3), timezones=OFFSETS),
    st.datetimes(
        min_value=datetime(9999, 12, 30), max_value=datetime(9999, 12, 31), timezones=OFFSETS
    ),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=OFFSETS),
).map(lambda d: d.isoformat())
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)  # what Firestore can store
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def field(valid: list[Any], near: list[Any] | None = None) -> st.SearchStrategy[Any]:
    """A field's value: a valid one, a near miss of this field's own (weighted up), or a
    generic near miss, a far instant, a big int, any JSON at all."""
    own = st.sampled_from(near or valid)
    return st.one_of(st.sampled_from(valid), own, own, own, NEAR_MISSES, INSTANTS, BIG_INTS, JSON)


FAR = [
    "0001-01-01T00:00:00+14:00",
    "0001-01-01T13:59:59+14:00",
    "9999-12-31T23:59:59-12:00",
    "9999-12-31T12:00:00-12:00",
    "9999-12-31T23:59:59+00:00",
    "2027-01-04T12:00:00",
    "1969-12-31T23:59:59+00:00",
]


# Query parameter values: valid ones, near misses, and cursors this API never returned.
PARAMETERS = st.one_of(
    st.sampled_from(
        ["5", "200", "pending,sent", "C0123ABCD", encode_cursor({"at": None, "id": "a"})]
    ),
    st.sampled_from(["²", "9" * 5_001, "0", "-1", "C0123ABCD\n", "", "sending,nope"]),
    st.sampled_from(
        [
            encode_cursor({"at": None, "id": "a/b"}),
            encode_cursor({"at": None, "id": "__x__"}),
            encode_cursor({"at": None, "id": ".."}),
            encode_cursor({"at": "0001-01-01T00:00:00+14:00", "id": "a"}),
            encode_cursor({"at": "9999-12-31T23:59:59-12:00", "id": "a"}),
        ]
    ),
    st.text(max_size=8),
)


MESSAGE_FIELDS = {
    "channel": field(["C0123ABCD", "G0123ABCD"], ["C0PROBE01\n", "c0123abcd", "U0123ABCD", ""]),
    "text": field(["Hello *world*", "Deploy at noon"], ["", " ", "x" * 40_001, "<!channel>"]),
    "timezone": field(["UTC", "Europe/Berlin", "Pacific/Kiritimati"], ["Nowhere/Land", "UTC\n"]),
    "send_at": field(["2027-01-04T12:00:00+00:00", "2027-02-01T00:00:00-12:00"], FAR),
    "expires_at": field(["2027-01-05T12:00:00+00:00"], FAR),
    "rrule": field(
        ["FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9", "FREQ=HOURLY;COUNT=3"],
        [
            *("FREQ=", "garbage", "FREQ=DAILY\nFREQ=DAILY", "DTSTART:20270101T000000"),
            *("FREQ=DAILY;INTERVAL=0", "FREQ=MONTHLY;BYMONTHDAY=0", "FREQ=SECONDLY;BYEASTER=400"),
            *("FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30", "FREQ=HOURLY;BYYEARDAY=366;BYMONTH=2"),
        ],
    ),
    "dtstart": field(["2027-01-01T09:30", "2027-01-04T10:00:00"], ["2027-13-01T00:00", "x"]),
    "exdates": field([["2027-01-06T09:30"], []], [["x"], ["2027-01-06T09:30\n"], [5]]),
    "misfire_grace_seconds": field([0, 3600, 366 * 24 * 3600], [2**63, 10**30, -1, 31_622_401]),
    "allow_broadcast": field([True, False], ["yes", 1]),
    "on_ambiguous": field(["hold", "retry"], ["x"]),
    "working_days": field(
        [{"country": "DE"}, {"country": "DE", "subdivision": "BY"}],
        [{"country": "XX"}, {"country": "DE\n"}, {"country": "DE", "subdivision": "ZZ"}],
    ),
    "on_non_working_day": field(["skip", "next_working_day"], ["x"]),
}
ROTATION_FIELDS = {
    "name": field(["On-call"], ["", "x" * 10_000]),
    "channel": field(["C0123ABCD"], ["C0PROBE01\n", "U0123ABCD"]),
    "members": field(
        [["U01AAAAAA", "U02BBBBBB"], ["W0123ABCD"]],
        [["U01AAAAAA\n"], ["U01AAAAAA", "U01AAAAAA"], [], ["C0123ABCD"]],
    ),
    "timezone": field(["Europe/Berlin", "Etc/GMT+12"], ["Mars/Base"]),
    "send_time": field(["09:30", "00:00", "23:59"], ["09:30\n", "24:00", "9:30", "٠٩:٣٠"]),
    "weekdays": field([[0, 1, 2, 3, 4], [5, 6]], [[7], [-1], [True], [], [0, 0]]),
    "text": field(["{member} is on call"], ["", "x" * 40_001]),
    "cursor": field([0, 1, 7], [2**63, -1, 10**30]),
    "status": field(["active", "paused"], ["x"]),
    "skips": field(
        [{"2027-01-05": ["U01AAAAAA"]}, {}],
        [{"2027-13-01": []}, {"2027-01-05": ["U09ZZZZZZ"]}, {"x": ["U01AAAAAA"]}],
    ),
    "working_days": field([{"country": "DE"}], [{"country": "XX"}]),
    "on_ambiguous": field(["hold", "retry"], ["x"]),
}
TICK_FIELDS = {
    "dry_run": field([True, False], ["yes", 1]),
    "now": field(["2027-01-04T09:00:00+00:00", "2027-01-04T23:59:59-12:00"], FAR),
}


def bodies(
    fields: dict[str, st.SearchStrategy[Any]], *valid: dict[str, Any]
) -> st.SearchStrategy[dict[str, Any]]:
    """A valid body with a few fields changed (or added, now and then an unknown one), or
    any subset of the fields."""
    fields = fields | {"unknown_field": JSON}
    changes = st.lists(
        st.sampled_from(sorted(fields)), min_size=1, max_size=2, unique=True
    ).flatmap(lambda names: st.fixed_dictionaries({name: fields[name] for name in names}))
    changed = st.tuples(st.sampled_from(valid), changes).map(lambda pair: pair[0] | pair[1])
    return changed | changed | changed | st.fixed_dictionaries({}, optional=fields)


QUERY = st.dictionaries(
    st.sampled_from(["limit", "cursor", "status", "channel", "count", "other"]),
    PARAMETERS,
    max_size=3,
)


# --- 1. requests --------------------------------------------------------------------------


def send(client: Any, method: str, path: str, body: Any) -> tuple[int, str]:
    response = client.open(
        path,
        method=method,
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        data=json.dumps(body),
        content_type="application/json",
    )
    return response.status_code, response.mimetype


def answered_cleanly(client: Any, db: Any, method: str, path: str, body: Any) -> None:
    """No 5xx; a 4xx writes nothing; what a 2xx stores, the processor accepts as it is."""
    before = everything(db)
    status, mimetype = send(client, method, path, body)
    assert mimetype == "application/json"
    assert status < 500, (method, path, body)
    if status >= 400:
        assert everything(db) == before, (method, path, body)
        return
    for snap in db.collection(MESSAGES).stream():
        Message.from_document(snap.id, snap.to_dict() or {})
        assert re.fullmatch(SLACK_CHANNEL, snap.get("channel")), snap.to_dict()
    for snap in db.collection(ROTATIONS).stream():
        Rotation.from_document(snap.id, snap.to_dict() or {})
        assert re.fullmatch(SLACK_CHANNEL, snap.get("channel")), snap.to_dict()


@pytest.fixture
def stored(db: Any) -> None:
    """A message and a rotation to edit and preview."""
    db.collection(MESSAGES).document("m").set(
        {
            "channel": "C0123ABCD",
            "text": "hi",
            "timezone": "UTC",
            "send_at": T0 + timedelta(hours=3),
            "next_run_at": T0 + timedelta(hours=3),
            "status": "pending",
            "version": 1,
        }
    )
    db.collection(ROTATIONS).document("r").set(
        {
            "name": "On-call",
            "channel": "C0123ABCD",
            "members": ["U01AAAAAA", "U02BBBBBB"],
            "timezone": "Europe/Berlin",
            "send_time": "09:30",
            "text": "{member}",
            "status": "active",
            "next_run_at": T0 + timedelta(days=1),
            "version": 1,
        }
    )


@pytest.mark.usefixtures("stored")
@FUZZ
@given(
    route=st.sampled_from(
        [
            ("POST", "/messages"),
            ("POST", "/preview"),
            ("PUT", "/messages/m"),
            ("GET", "/messages"),
            ("GET", "/messages/m/deliveries"),
        ]
    ),
    body=bodies(MESSAGE_FIELDS, ONE_OFF, SERIES),
    query=QUERY,
)
def test_message_requests_never_get_a_5xx(api, db, route, body, query):
    method, path = route
    suffix = f"?{urlencode(query)}" if query else ""
    answered_cleanly(api, db, method, path + suffix, None if method == "GET" else body)


@pytest.mark.usefixtures("stored")
@FUZZ
@given(
    route=st.sampled_from(
        [("POST", "/rotations"), ("PUT", "/rotations/r"), ("POST", "/rotations/r/preview")]
    ),
    body=bodies(ROTATION_FIELDS, ROTATION),
    query=QUERY,
)
def test_rotation_requests_never_get_a_5xx(api, db, route, body, query):
    method, path = route
    suffix = f"?{urlencode(query)}" if query else ""
    answered_cleanly(api, db, method, path + suffix, body)


@FUZZ
@given(body=bodies(TICK_FIELDS, {}, {"dry_run": True}))
def test_tick_requests_never_get_a_5xx(tick_app, env, db, slack, body):
    answered_cleanly(tick_app.test_client(), db, "POST", "/", body)


# A request to `deliver` in any of the shapes a caller could send: a structured or binary
# CloudEvent, a push, or anything else, with or without the CloudEvent headers.
CE_HEADERS = st.dictionaries(
    st.sampled_from(["ce-id", "ce-specversion", "ce-type", "ce-source", "ce-time"]),
    st.one_of(
        st.sampled_from(["1", "1.0", "", "x" * 300]),
        st.text(st.characters(blacklist_categories=["Cc", "Cs"]), max_size=20),
    ),
    max_size=5,
)
DELIVER_BODIES = st.one_of(
    st.binary(max_size=200),
    JSON.map(json.dumps),
    st.just("[" * 5_000 + "]" * 5_000),
    st.fixed_dictionaries(
        {"specversion": st.just("1.0"), "type": st.text(max_size=5)},
        optional={"id": st.text(max_size=5), "source": st.text(max_size=5), "data": JSON},
    ).map(json.dumps),
)
CONTENT_TYPES = st.sampled_from(
    ["application/json", "application/cloudevents+json", "text/plain", None]
)


@FUZZ
@given(
    body=DELIVER_BODIES,
    content_type=CONTENT_TYPES,
    ce=CE_HEADERS,
    method=st.sampled_from(["POST", "GET", "PUT"]),
)
def test_deliver_answers_any_request_in_json_and_quotes_no_credential(
    deliver, slack, body, content_type, ce, method
):
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}", **ce}
    response = deliver.open(
        "/", method=method, data=body, content_type=content_type, headers=headers
    )
    text = response.get_data(as_text=True)
    assert response.status_code < 500, text
    assert response.mimetype == "application/json", text
    assert ADMIN_TOKEN not in text
    assert slack.posts() == []


# --- 2. stored documents ------------------------------------------------------------------

DUE = T0 - timedelta(minutes=5)
GOOD_LEASE = {"owner": "gone", "expires_at": T0 - timedelta(minutes=1), "occurrence_at": DUE}
BAD_LEASES = ["x", 5, True, [1], {"owner": "w"}, {"expires_at": "soon"}, {"a": 1}]


def stored_field(*values: Any) -> st.SearchStrategy[Any]:
    """A stored field: one of `values` (None: the field is left out), or junk."""
    return st.one_of(
        st.sampled_from(values), st.sampled_from(values), st.sampled_from(values), SCALARS
    )


STORED_MESSAGE = st.fixed_dictionaries(
    {
        "channel": stored_field("C0FUZZ001", "C0FUZZ002", "C0PROBE01\n", "U0123ABCD", None),
        "text": stored_field("hello", "*bold* {member}", "", "x" * 40_001, None),
        "timezone": stored_field("UTC", "Pacific/Kiritimati", "Etc/GMT+12", "Nowhere/Land", None),
        "status": stored_field("pending", "recurring", "sending", "paused", "failed"),
        "next_run_at": stored_field(DUE, T0, YEAR_1, YEAR_9999, T0 + timedelta(days=1), None),
        "send_at": stored_field(DUE, YEAR_1, YEAR_9999, None),
        "expires_at": stored_field(None, T0 + timedelta(hours=1), T0 - timedelta(hours=1), YEAR_1),
        "rrule": stored_field(
            *(None, "FREQ=DAILY", "FREQ=MINUTELY;COUNT=3", "garbage", "FREQ=DAILY;INTERVAL=0"),
            *("FREQ=SECONDLY", "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30", "FREQ=YEARLY;BYDAY=+60MO"),
        ),
        "dtstart": stored_field(
            "2027-01-01T09:00", "2027-01-04T08:55", "2020-01-01T00:00", "x", None
        ),
        "exdates": stored_field(None, [], ["2027-01-02T09:00"], "x", [5]),
        "misfire_grace_seconds": stored_field(None, 0, 3600, 2**62, -1, True),
        "allow_broadcast": stored_field(None, True, "yes"),
        "working_days": stored_field(None, {"country": "DE"}, "x", {"country": 5}),
        "on_non_working_day": stored_field(None, "skip", "sometimes"),
        "lease": stored_field(None, GOOD_LEASE, *BAD_LEASES),
        "occurrence_at": stored_field(None, DUE, YEAR_1),
        "deleted": stored_field(None, False, True),
        "attempts": stored_field(None, 0, 4, "x"),
    }
)
STORED_ROTATION = st.fixed_dictionaries(
    {
        "name": stored_field("On-call", None),
        "channel": stored_field("C0FUZZ003", "C0PROBE01\n", None),
        "members": stored_field(["U01AAAAAA", "U02BBBBBB"], [], ["U01AAAAAA\n"], "x", [5]),
        "timezone": stored_field("Europe/Berlin", "Pacific/Kiritimati", "Etc/GMT+12", "Mars"),
        "send_time": stored_field("09:30", "00:00", "09:30\n", "25:00", None),
        "weekdays": stored_field(None, [0, 1, 2, 3, 4], [], [7], [True], "x"),
        "text": stored_field("{member} is on call", "", None),
        "cursor": stored_field(0, 1, -5, 2**62, "x", True),
        "last_processed_date": stored_field(None, "2027-01-01", "2027-13-01", "x"),
        "status": stored_field("active", "paused", "x"),
        "next_run_at": stored_field(DUE, YEAR_1, YEAR_9999, None),
        "lease": stored_field(None, *BAD_LEASES),
        "skips": stored_field(None, {}, {"2027-01-04": ["U01AAAAAA"]}, "x", {"x": 5}),
        "working_days": stored_field(None, {"country": "DE"}, "x"),
    }
)


def _held(data: dict[str, Any]) -> bool:
    """Whether the document holds a lease a worker could hold (settled by reconciliation)."""
    lease = data.get("lease")
    return isinstance(lease, dict) and isinstance(lease.get("expires_at"), datetime)


def _is_due(data: dict[str, Any], waiting: tuple[str, ...]) -> bool:
    due = data.get("next_run_at")
    return data.get("status") in waiting and isinstance(due, datetime) and due <= T0


def _must_settle(path: str, data: dict[str, Any]) -> bool:
    """What the pass must deal with: a due message, a `sending` one whose lease no worker
    can hold, a due active rotation not holding a day."""
    if path.startswith(MESSAGES):
        if data.get("status") == "sending":
            # (One with no lease field at all is left to the operator's `doctor`: no query
            # finds a missing field.)
            return "lease" in data and not _held(data)
        return _is_due(data, ("pending", "recurring"))
    return _is_due(data, ("active",)) and not _held(data)


def _write(db: Any, name: str, doc_id: str, data: dict[str, Any]) -> None:
    db.collection(name).document(doc_id).set({k: v for k, v in data.items() if v is not None})


@FUZZ
@given(
    messages=st.lists(STORED_MESSAGE, min_size=1, max_size=3),
    rotations=st.lists(STORED_ROTATION, max_size=2),
)
def test_stored_documents_of_any_shape_end_settled(settings, clock, slack, messages, rotations):
    db = firestore.Client(project=f"fuzz-{uuid.uuid4().hex[:12]}")
    clock.set(T0)
    slack.reset()
    rt = make_runtime(settings, db, clock, "fuzz-worker")
    for i, data in enumerate(messages):
        _write(db, MESSAGES, f"m{i}", data)
    for i, data in enumerate(rotations):
        _write(db, ROTATIONS, f"r{i}", data)
    _write(
        db,
        MESSAGES,
        "good",
        {
            "channel": "C0GOOD001",
            "text": "hi",
            "status": "pending",
            "send_at": DUE,
            "next_run_at": DUE,
        },
    )
    before = {
        snap.reference.path: snap
        for c in (MESSAGES, ROTATIONS)
        for snap in db.collection(c).stream()
    }

    dry = run_pass(rt, dry_run=True)
    assert dry["dry_run"] is True
    assert everything(db) == {path: snap.update_time for path, snap in before.items()}
    summary = run_pass(rt)

    assert summary["errors"] == 0, summary
    assert clock.now() - T0 <= timedelta(seconds=settings.tick_budget_seconds)
    posts = slack.posts()
    assert all(re.fullmatch(SLACK_CHANNEL, post.channel) for post in posts)
    assert max(Counter(post.delivery_id for post in posts).values()) == 1
    assert "good" in {post.delivery_id.split(":")[1] for post in posts if post.delivery_id}
    for path, snap in before.items():
        data = snap.to_dict() or {}
        if not _must_settle(path, data):
            continue
        after = db.document(path).get()
        assert after.update_time != snap.update_time, (path, data)
        settled = after.to_dict() or {}
        if settled.get("status") in ("failed", "paused") and settled.get("status") != data.get(
            "status"
        ):
            assert settled["last_error"]["code"], (path, settled)
