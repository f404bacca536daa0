"""The `interactions` target takes only Slack's fresh, first, signed delivery of a click on
one of our buttons: everything else answers 401 or 200 and records nothing, never a 500."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.slack_clicks import click_payload, form_body, signed_headers
from tests.fixtures.clock import T0
from tests.fixtures.interactions import SECRET, buttons, click, send, value

RESPONSES = "responses"


def _responses(db: Any) -> dict[str, dict[str, Any]]:
    return {snap.id: snap.to_dict() for snap in db.collection(RESPONSES).stream()}


def _body(post: Any, action_id: str = "done", user: str = "U0ALICE00", **button: Any) -> bytes:
    element = buttons(post)[action_id] | button
    return form_body(click_payload(element, user, post.channel, post.ts))


def _raw_signed(body: bytes, stamp: int) -> dict[str, str]:
    """Headers signed over bytes slack_sdk cannot sign (it decodes the body as UTF-8)."""
    digest = hmac.new(SECRET.encode(), b"v0:%d:" % stamp + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": str(stamp), "X-Slack-Signature": f"v0={digest}"}


def test_a_signed_click_records_the_answer(clicks, posted, db):
    post = posted()

    answer = click(clicks, post, "done", "U0ALICE00", T0)

    assert answer.status_code == 200 and answer.data == b""
    (recorded,) = _responses(db).values()
    assert recorded["user"] == "U0ALICE00" and recorded["action_id"] == "done"
    assert recorded["delivery_id"] == post.delivery_id


def test_unsigned_forged_and_stale_requests_are_401_and_record_nothing(clicks, posted, db):
    post = posted()
    body = _body(post)
    stamp = int(T0.timestamp())
    forged = signed_headers("not-the-secret", body, stamp)
    stale = signed_headers(SECRET, body, stamp - 301)
    future = signed_headers(SECRET, body, stamp + 301)
    tampered = signed_headers(SECRET, body, stamp)
    cases = {
        "unsigned": clicks.post("/", data=body),
        "no timestamp": clicks.post("/", data=body, headers={"X-Slack-Signature": "v0=00"}),
        "forged": clicks.post("/", data=body, headers=forged),
        "stale": clicks.post("/", data=body, headers=stale),
        "future": clicks.post("/", data=body, headers=future),
        "tampered": clicks.post("/", data=_body(post, user="U0MALLORY"), headers=tampered),
        "bad timestamp": clicks.post(
            "/", data=body, headers=forged | {"X-Slack-Request-Timestamp": "1e9"}
        ),
        "not utf-8": clicks.post("/", data=b"\xff", headers=_raw_signed(b"\xff", stamp)),
    }

    assert {name: r.status_code for name, r in cases.items()} == dict.fromkeys(cases, 401)
    assert all(r.get_json()["error"] == "unauthorized" for r in cases.values())
    assert _responses(db) == {}


def test_without_a_signing_secret_every_request_is_401(clicks, posted, db, monkeypatch):
    post = posted()
    monkeypatch.delenv("SLACK_SIGNING_SECRET")

    assert click(clicks, post, "done", "U0ALICE00", T0).status_code == 401
    assert _responses(db) == {}


def test_a_replayed_request_is_401_even_after_its_first_answer_was_removed(clicks, posted, db):
    post = posted()
    body = _body(post)
    headers = signed_headers(SECRET, body, int(T0.timestamp()))
    assert clicks.post("/", data=body, headers=headers).status_code == 200
    for snap in db.collection(RESPONSES).stream():
        snap.reference.delete()

    replay = clicks.post("/", data=body, headers=headers)

    assert replay.status_code == 401
    assert _responses(db) == {}
    (seen,) = db.collection("interaction_signatures").stream()
    assert seen.get("expires_at") == T0 + timedelta(minutes=5)


def test_malformed_unknown_and_foreign_clicks_are_200_and_record_nothing(clicks, posted, db):
    post = posted()
    other = value("m:someone-else:20270104T090000Z", "done")
    bodies = {
        "not a form": b"{}",
        "no payload": b"text=hello",
        "not json": b"payload=%7Bnope",
        "not block_actions": form_body({"type": "view_submission"}),
        "unknown action": _body(post, action_id="not-yet", value=value(post.delivery_id, "nope")),
        "action id disagrees": _body(
            post, action_id="not-yet", value=value(post.delivery_id, "done")
        ),
        "delivery not ours": _body(post, value=other),
        "value not json": _body(post, value="done"),
        "value with extra keys": _body(
            post,
            value=json.dumps({"delivery": post.delivery_id, "action": "done", "label": "Hacked"}),
        ),
        "not a user": _body(post, user="C0123ABCD"),
        "no actions": form_body(
            click_payload({}, "U0ALICE00", post.channel, post.ts) | {"actions": []}
        ),
        "other channel": form_body(
            click_payload(buttons(post)["done"], "U0ALICE00", "C0OTHER00", post.ts)
        ),
    }

    status = {name: send(clicks, body, T0).status_code for name, body in bodies.items()}

    assert status == dict.fromkeys(bodies, 200)
    assert _responses(db) == {}


# Anything JSON can hold, where a click's parts go.
_junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    user=st.sampled_from(["U0ALICE00", "U0BOB0000", "W0CAROL00"]) | _junk,
    delivery=st.sampled_from(["real", "m:x:20270104T090000Z", "", "a/b", "__x__"]) | _junk,
    action=st.sampled_from(["done", "not-yet", "nope", ""]) | _junk,
    extra=st.dictionaries(st.sampled_from(["label", "text", "type", "d"]), _junk, max_size=2),
    kind=st.sampled_from(["block_actions", "block_actions", "message_action"]) | _junk,
)
def test_fuzzed_signed_payloads_never_fail_and_record_only_catalog_answers(
    clicks, posted_once, db, user, delivery, action, extra, kind
):
    post = posted_once
    delivery_id = post.delivery_id if delivery == "real" else delivery
    button_value = json.dumps({"delivery": delivery_id, "action": action} | extra)
    payload = click_payload(
        {"action_id": action, "value": button_value}, "U0", post.channel, post.ts
    ) | {"user": {"id": user}, "type": kind}
    body = form_body(payload)

    answer = send(clicks, body, T0)

    assert answer.status_code in (200, 401)  # 401: hypothesis repeated a body (a replay)
    for recorded in _responses(db).values():
        assert recorded["delivery_id"] == post.delivery_id
        assert recorded["action_id"] in ("done", "not-yet")
        assert recorded["user"] in ("U0ALICE00", "U0BOB0000", "W0CAROL00")
