"""The message shows its answers: the original post is updated (chat.update) by the next
tick with who answered what, labels from the stored catalog; a failed update is retried by
the tick after and the recorded answer is never lost."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from emulator.slack_clicks import click_payload, form_body
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.interactions import buttons, click, send
from tests.fixtures.messages import seed_message
from tests.fixtures.tick import answer, at, bearer, tick
from tests.interactions.conftest import ACTIONS

ALICE, BOB = "U0ALICE00", "U0BOB0000"


def _now(slack: Any, ts: str) -> Any:
    (post,) = [p for p in slack.posts() if p.ts == ts]
    return post


def _context(post: Any) -> str:
    return " ".join(
        element["text"]
        for block in post.blocks
        if block["type"] == "context"
        for element in block["elements"]
    )


def _next_tick(tick_app: Any) -> dict[str, Any]:
    return answer(tick(tick_app.test_client(), headers=bearer(), body=at(T0)), 200)


def test_the_post_shows_who_answered_what_with_catalog_labels(clicks, posted, slack, tick_app):
    post = posted()
    forged_label = buttons(post)["done"] | {"text": {"type": "plain_text", "text": "Hacked"}}

    send(clicks, form_body(click_payload(forged_label, ALICE, post.channel, post.ts)), T0)
    click(clicks, post, "not-yet", BOB, T0)
    _next_tick(tick_app)

    shown = _now(slack, post.ts)
    assert _context(shown) == f"<@{ALICE}> answered *Done*\n<@{BOB}> answered *Not yet*"
    assert "Hacked" not in json.dumps(shown.blocks)
    assert list(buttons(shown)) == ["done", "not-yet"]  # others may still answer
    assert shown.delivery_id == post.delivery_id and shown.text == post.text


def test_with_one_answer_the_buttons_go_once_answered(clicks, posted, slack, tick_app):
    post = posted(one_answer=True)

    click(clicks, post, "done", ALICE, T0)
    _next_tick(tick_app)

    shown = _now(slack, post.ts)
    assert _context(shown) == f"<@{ALICE}> answered *Done*"
    assert [b["type"] for b in shown.blocks] == ["section", "context"]


def test_a_failed_update_is_retried_by_the_next_tick_and_the_answer_kept(
    clicks, posted, slack, db, tick_app
):
    post = posted()
    slack.inject(Fault(kind="error", code="internal_error", method="chat.update", times=1))

    assert click(clicks, post, "done", ALICE, T0).status_code == 200
    assert "answers_shown" not in _next_tick(tick_app)

    (stored,) = [snap.to_dict() for snap in db.collection("responses").stream()]
    assert stored["action_id"] == "done" and stored["pending_update"] is True
    assert stored["update_error"] == "internal_error"
    assert _context(_now(slack, post.ts)) == ""

    counts = _next_tick(tick_app)

    assert counts["answers_shown"] == 1
    assert _context(_now(slack, post.ts)) == f"<@{ALICE}> answered *Done*"
    (stored,) = [snap.to_dict() for snap in db.collection("responses").stream()]
    assert stored["action_id"] == "done" and "pending_update" not in stored
    again = _next_tick(tick_app)
    assert "answers_shown" not in again and len(slack.posts()) == 1


def test_a_429_from_chat_update_holds_every_update_until_its_retry_after(clicks, slack, db, rt):
    """Slack's Retry-After for chat.update holds the rest of the pass and every pass before
    it ends; then every answer is shown."""
    for channel in ("C0123ABCD", "C0OTHER01"):
        seed_message(db, channel=channel, actions=ACTIONS)
    run_kind(rt, MESSAGE_KIND)
    posts = slack.posts()
    slack.inject(Fault(kind="error", code="internal_error", method="chat.update"))
    for post in posts:  # both answers recorded, neither shown
        assert click(clicks, post, "done", ALICE, rt.clock.now()).status_code == 200
    slack.clear_faults()
    slack.inject(Fault(kind="rate_limit", method="chat.update", retry_after=60, times=1))
    before = slack.calls("chat.update")

    run_pass(rt)

    assert slack.calls("chat.update") == before + 1  # the other post was not updated
    rt.clock.advance(timedelta(seconds=59))
    run_pass(rt)
    assert slack.calls("chat.update") == before + 1
    assert _shown(slack) == ["", ""]

    rt.clock.advance(timedelta(seconds=2))
    run_pass(rt)

    assert slack.calls("chat.update") == before + 3
    assert _shown(slack) == [f"<@{ALICE}> answered *Done*"] * 2


def _shown(slack: Any) -> list[str]:
    """What each post shows now, in the order posted."""
    return [_context(post) for post in slack.posts()]
