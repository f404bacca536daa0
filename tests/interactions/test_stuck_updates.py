"""Answers the post cannot show: a chat.update error no retry can cure ends the answer
`not_shown` with Slack's code (kept, logged once, never retried); the rest are retried
oldest first, at most UPDATES_PER_PASS chat.update calls a pass (Slack's Tier 3 is "50+ per
minute"), so stuck answers never hold newer ones back and a pass stays under the tier."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from emulator.slack_standin import Fault
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.interactions import click
from tests.fixtures.tick import answer, at, bearer, tick

ALICE = "U0ALICE00"
# What one pass may spend on chat.update (interactions.show.UPDATES_PER_PASS, docs).
PER_PASS = 40
GONE_TS = "1000000000.000001"  # no such message in the channel: Slack's message_not_found


def _next_tick(tick_app: Any) -> dict[str, Any]:
    return answer(tick(tick_app.test_client(), headers=bearer(), body=at(T0)), 200)


def _answers(db: Any) -> dict[str, dict[str, Any]]:
    return {snap.id: snap.to_dict() for snap in db.collection("responses").stream()}


def _answered_posts(
    db: Any, post: Any, count: int, ts: str, first_id: str, channel: str | None = None
) -> list[str]:
    """`count` more posts of the message (ledger entries like `post`'s, at `ts`, in `channel`
    if given), each with an answer pending, answered a day before T0, oldest first; ids sort
    before `post`'s."""
    entry = db.collection("deliveries").document(post.delivery_id).get().to_dict()
    if channel is not None:
        entry["channel"] = channel
    message_id = entry["message_id"]
    batch = db.batch()
    ids = []
    for index in range(count):
        delivery = f"m:{message_id}:{first_id}{index:04d}"
        batch.set(db.collection("deliveries").document(delivery), entry | {"slack_ts": ts})
        answered = {
            "delivery_id": delivery,
            "message_id": message_id,
            "user": ALICE,
            "action_id": "done",
            "answered_at": T0 - timedelta(days=1) + timedelta(seconds=index),
            "pending_update": True,
        }
        batch.set(db.collection("responses").document(f"{delivery}:{ALICE}"), answered)
        ids.append(delivery)
    batch.commit()
    return ids


@pytest.mark.parametrize(
    "code",
    [
        "message_not_found",
        "cant_update_message",
        "edit_window_closed",
        "msg_too_long",
        "is_inactive",
    ],
)
def test_an_update_slack_refuses_for_good_ends_the_answer_not_shown(
    code, clicks, posted, slack, db, tick_app, capsys, api
):
    post = posted()
    click(clicks, post, "done", ALICE, T0)
    slack.inject(Fault(kind="error", code=code, method="chat.update", times=1))
    capsys.readouterr()

    counts = _next_tick(tick_app)

    assert counts["answers_not_shown"] == 1 and "answers_shown" not in counts
    (stored,) = _answers(db).values()
    assert (stored["action_id"], stored["not_shown"]) == ("done", code)
    assert "pending_update" not in stored and "update_error" not in stored
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (ended,) = [line for line in lines if line.get("delivery_id") == post.delivery_id]
    assert (ended["severity"], ended["status"], ended["error_code"]) == (
        "WARNING",
        "not_shown",
        code,
    )
    again = _next_tick(tick_app)
    assert slack.updates() == [] and "answers_not_shown" not in again  # never retried
    listed = call(api, "GET", f"/messages/{stored['message_id']}/responses")[1]["responses"]
    assert [(r["action_id"], r["shown"], r["not_shown"]) for r in listed] == [("done", False, code)]


def test_a_hundred_stuck_answers_end_and_do_not_hold_a_newer_one_back(
    clicks, posted, slack, db, tick_app
):
    post = posted()
    stuck = _answered_posts(db, post, 101, GONE_TS, first_id="1999")
    click(clicks, post, "done", ALICE, T0)

    passes = [_next_tick(tick_app) for _ in range(3)]

    assert [p.get("answers_not_shown") for p in passes] == [PER_PASS, PER_PASS, 21]
    assert [p.get("answers_shown") for p in passes] == [None, None, 1]
    answers = _answers(db)
    assert {answers[f"{d}:{ALICE}"].get("not_shown") for d in stuck} == {"message_not_found"}
    assert "pending_update" not in answers[f"{post.delivery_id}:{ALICE}"]
    assert [u.ts for u in slack.updates()] == [post.ts]


@pytest.mark.parametrize(
    ("channel_state", "code"),
    [
        ({"exists": False}, "channel_not_found"),
        ({"archived": True}, "is_archived"),
        ({"member": False}, "not_in_channel"),
    ],
)
def test_answers_in_a_channel_slack_refuses_end_and_do_not_hold_a_newer_one_back(
    channel_state, code, clicks, posted, slack, db, tick_app
):
    """Any error Slack classes as definitive (core.slack: refused, and refused again) ends
    the answer `not_shown`: otherwise the oldest stuck answers take every pass's budget."""
    post = posted()
    slack.set_channel("C0GONE000", **channel_state)
    stuck = _answered_posts(db, post, PER_PASS + 1, post.ts, first_id="1999", channel="C0GONE000")
    click(clicks, post, "done", ALICE, T0)

    passes = [_next_tick(tick_app) for _ in range(2)]

    assert [p.get("answers_not_shown") for p in passes] == [PER_PASS, 1]
    assert [p.get("answers_shown") for p in passes] == [None, 1]
    answers = _answers(db)
    assert {answers[f"{d}:{ALICE}"].get("not_shown") for d in stuck} == {code}
    assert "pending_update" not in answers[f"{post.delivery_id}:{ALICE}"]
    assert [u.ts for u in slack.updates()] == [post.ts]


def test_one_post_slack_keeps_failing_on_does_not_hold_newer_answers_back(
    clicks, posted, slack, db, tick_app
):
    """Slack answers every update of one old post with a server error: a pass tries it, goes
    on to the newer answers, and shows them; the old one stays pending for later passes."""
    post = posted()
    (troubled,) = _answered_posts(db, post, 1, post.ts, first_id="1999", channel="C0SICK000")
    click(clicks, post, "done", ALICE, T0)
    slack.inject(
        Fault(kind="error", code="internal_error", method="chat.update", channel="C0SICK000")
    )

    counts = _next_tick(tick_app)

    assert counts.get("answers_shown") == 1
    answers = _answers(db)
    assert "pending_update" not in answers[f"{post.delivery_id}:{ALICE}"]
    stuck = answers[f"{troubled}:{ALICE}"]
    assert (stuck["pending_update"], stuck["update_error"]) == (True, "internal_error")
    assert [u.ts for u in slack.updates()] == [post.ts]


def test_a_pass_updates_at_most_its_budget_oldest_first(clicks, posted, slack, db, tick_app):
    post = posted()
    older = _answered_posts(db, post, PER_PASS + 5, post.ts, first_id="2999")

    first = _next_tick(tick_app)

    assert first["answers_shown"] == PER_PASS and len(slack.updates()) == PER_PASS
    pending = [id for id, a in _answers(db).items() if a.get("pending_update")]
    assert sorted(pending) == [f"{d}:{ALICE}" for d in older[PER_PASS:]]  # the newest wait
    second = _next_tick(tick_app)
    assert second["answers_shown"] == 5 and len(slack.updates()) == PER_PASS + 5


@pytest.mark.parametrize(
    ("fault", "code", "tried"),
    [
        (
            Fault(kind="rate_limit", retry_after=30, method="chat.update", times=1),
            "ratelimited",
            1,
        ),
        (
            Fault(kind="error", code="internal_error", method="chat.update", times=2),
            "internal_error",
            2,
        ),
    ],
)
def test_a_pass_stops_updating_when_slack_rate_limits_it_or_fails_twice(
    fault, code, tried, clicks, posted, slack, db, tick_app
):
    """At Slack's rate limit the pass makes no more calls; at a server error it goes on to
    the next post, and stops at the second in a row."""
    post = posted()
    ids = _answered_posts(db, post, 3, post.ts, first_id="2999")
    slack.inject(fault)

    counts = _next_tick(tick_app)

    assert slack.updates() == [] and "answers_shown" not in counts
    answers = _answers(db)
    assert [answers[f"{d}:{ALICE}"].get("update_error") for d in ids] == [code] * tried + [None] * (
        3 - tried
    )  # the rest not tried
    after = at(T0 + timedelta(minutes=1))  # past Slack's Retry-After
    assert (
        answer(tick(tick_app.test_client(), headers=bearer(), body=after), 200)["answers_shown"]
        == 3
    )
