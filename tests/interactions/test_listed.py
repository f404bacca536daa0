"""Answers are visible: `GET /messages/{id}/responses` and `GET /rotations/{id}/responses`
list them, newest first, with the label of the catalog the post was sent with and whether
the Slack message shows them yet."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from targets.kinds import run_pass
from tests.fixtures.api import call, fields_of
from tests.fixtures.clock import T0
from tests.fixtures.interactions import click
from tests.fixtures.rotations import ALICE as R_ALICE
from tests.fixtures.rotations import BOB as R_BOB
from tests.fixtures.rotations import CAROL as R_CAROL
from tests.fixtures.rotations import seed_rotation
from tests.fixtures.runtime import ROOT

ALICE, BOB = "U0ALICE00", "U0BOB0000"


def test_the_answers_of_a_message_are_listed_newest_first(api, clicks, posted, clock, db, rt):
    post = posted()
    click(clicks, post, "done", ALICE, T0)
    clock.advance(timedelta(seconds=30))
    click(clicks, post, "not-yet", BOB, clock.now())
    run_pass(rt)  # shows the answers
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


# --- a rotation's answers -----------------------------------------------------------------

ROTATION_ACTIONS = [
    {"id": "take", "label": "I'll take it", "style": "primary"},
    {"id": "skip_today", "label": "Skip me today"},
]
RELABELLED = [{"id": "take", "label": "Mine"}, {"id": "skip_today", "label": "Not me"}]


def _rotation_posts(rt: Any, db: Any, slack: Any) -> dict[str, Any]:
    """Today's post of the rotations `standup` and `other`, by rotation id."""
    seed_rotation(db, actions=ROTATION_ACTIONS)
    seed_rotation(db, "other", actions=ROTATION_ACTIONS)
    run_pass(rt)
    return {post.delivery_id.split(":")[1]: post for post in slack.posts()}


def test_the_answers_of_a_rotation_are_listed_with_the_labels_it_was_posted_with(
    rt, db, slack, clicks, api, clock
):
    posts = _rotation_posts(rt, db, slack)
    day = posts["standup"].delivery_id
    # Alice, whose turn the post names, skips it; then Bob answers; Carol answers the other.
    assert click(clicks, posts["standup"], "skip_today", R_ALICE, T0).status_code == 200
    clock.advance(timedelta(seconds=30))
    click(clicks, posts["standup"], "take", R_BOB, clock.now())
    click(clicks, posts["other"], "take", R_CAROL, clock.now())
    run_pass(rt)  # shows the answers
    assert call(api, "GET", "/rotations/standup")[1]["last_member"] == R_BOB  # the skip took
    # An edit after the send relabels nothing already answered.
    assert call(api, "PUT", "/rotations/standup", {"actions": RELABELLED})[0] == 200

    status, page = call(api, "GET", "/rotations/standup/responses")

    assert status == 200, page
    assert page["next_cursor"] is None
    assert [(r["user"], r["action_id"], r["label"], r["shown"]) for r in page["responses"]] == [
        (R_BOB, "take", "I'll take it", True),
        (R_ALICE, "skip_today", "Skip me today", True),
    ]
    assert [r["delivery_id"] for r in page["responses"]] == [day, day]
    assert [r["id"] for r in page["responses"]] == [f"{day}:{R_BOB}", f"{day}:{R_ALICE}"]
    other = call(api, "GET", "/rotations/other/responses")[1]["responses"]
    assert [(r["user"], r["label"]) for r in other] == [(R_CAROL, "I'll take it")]


def test_a_rotations_answers_are_paged_newest_first(rt, db, slack, clicks, api, clock):
    post = _rotation_posts(rt, db, slack)["standup"]
    for user in (R_ALICE, R_BOB, R_CAROL):
        click(clicks, post, "take", user, clock.now())
        clock.advance(timedelta(seconds=10))

    first = call(api, "GET", "/rotations/standup/responses?limit=2")[1]
    rest = call(api, "GET", f"/rotations/standup/responses?limit=2&cursor={first['next_cursor']}")

    assert [r["user"] for r in first["responses"]] == [R_CAROL, R_BOB] and first["next_cursor"]
    assert rest[0] == 200
    assert [r["user"] for r in rest[1]["responses"]] == [R_ALICE]
    assert rest[1]["next_cursor"] is None
    bad = call(api, "GET", "/rotations/standup/responses?cursor=nonsense")
    assert bad[0] == 422 and fields_of(bad[1]) == ["cursor"]


def test_a_rotations_answers_need_credentials_and_a_known_rotation(db, api):
    seed_rotation(db, actions=ROTATION_ACTIONS)

    assert call(api, "GET", "/rotations/standup/responses", auth=False)[0] == 401
    assert call(api, "GET", "/rotations/nope/responses")[0] == 404
    assert call(api, "GET", "/rotations/standup/responses") == (
        200,
        {"responses": [], "next_cursor": None},
    )


def test_both_answers_queries_have_their_composite_index():
    indexes = json.loads((ROOT / "firestore.indexes.json").read_text())["indexes"]
    fields = {
        (index["collectionGroup"], tuple((f["fieldPath"], f["order"]) for f in index["fields"]))
        for index in indexes
    }
    for subject in ("message_id", "rotation_id"):
        assert ("responses", ((subject, "ASCENDING"), ("answered_at", "DESCENDING"))) in fields
