"""Answers are visible: `GET /messages/{id}/responses` lists them, newest first, with the
label of the stored catalog and whether the Slack message shows them yet."""

from __future__ import annotations

from datetime import timedelta

from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.interactions import click

ALICE, BOB = "U0ALICE00", "U0BOB0000"


def test_the_answers_of_a_message_are_listed_newest_first(api, clicks, posted, clock, db):
    post = posted()
    click(clicks, post, "done", ALICE, T0)
    clock.advance(timedelta(seconds=30))
    click(clicks, post, "not-yet", BOB, clock.now())
    message_id = post.delivery_id.split(":")[1]

    status, page = call(api, "GET", f"/messages/{message_id}/responses")

    assert status == 200, page
    assert page["next_cursor"] is None
    assert [(r["user"], r["action_id"], r["label"], r["shown"]) for r in page["responses"]] == [
        (BOB, "not-yet", "Not yet", True),
        (ALICE, "done", "Done", True),
    ]
    assert {r["delivery_id"] for r in page["responses"]} == {post.delivery_id}
    first = call(api, "GET", f"/messages/{message_id}/responses?limit=1")[1]
    assert [r["user"] for r in first["responses"]] == [BOB] and first["next_cursor"]
    rest = call(api, "GET", f"/messages/{message_id}/responses?cursor={first['next_cursor']}")
    assert [r["user"] for r in rest[1]["responses"]] == [ALICE]


def test_responses_of_an_unknown_message_are_404(api):
    assert call(api, "GET", "/messages/nope/responses")[0] == 404
