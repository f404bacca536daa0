"""A rotation's `actions`: validated as a message's are, stored on the rotation, posted as
buttons on each day's post and shown by its preview; a click on a day's post is ours and
recorded as a message's is, one answer per person."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from core.store import RESPONSES
from targets.kinds import run_pass
from tests.fixtures.api import call, fields_of
from tests.fixtures.clock import T0
from tests.fixtures.interactions import buttons, click, value
from tests.fixtures.rotations import ALICE, BOB, MONDAY, ROTATION, create, seed_rotation

ACTIONS = [
    {"id": "take", "label": "I'll take it", "style": "primary"},
    {"id": "skip_today", "label": "Skip me today"},
]
DAY = f"r:standup:{MONDAY}"


def _context(post: Any) -> str:
    return " ".join(
        element["text"]
        for block in post.blocks
        if block["type"] == "context"
        for element in block["elements"]
    )


def test_rotation_actions_are_validated_as_a_messages_are(api):
    too_many = [{"id": f"a{i}", "label": f"A{i}"} for i in range(6)]
    twice = [{"id": "take", "label": "Take"}, {"id": "take", "label": "Again"}]
    long_label = [{"id": "take", "label": "x" * 76}]

    for actions in (too_many, twice, long_label, []):
        status, answer = call(api, "POST", "/rotations", {**ROTATION, "actions": actions})
        assert status == 422, actions
        assert any(field.startswith("actions") for field in fields_of(answer)), answer

    created = create(api, {**ROTATION, "actions": ACTIONS})
    assert created["actions"] == ACTIONS
    status, stored = call(api, "GET", f"/rotations/{created['id']}")
    assert (status, stored["actions"]) == (200, ACTIONS)
    status, edited = call(api, "PUT", f"/rotations/{created['id']}", {"actions": twice})
    assert status == 422 and "actions" in fields_of(edited)


def test_the_rotation_preview_shows_the_buttons(api):
    created = create(api, {**ROTATION, "actions": ACTIONS})

    status, answer = call(api, "POST", f"/rotations/{created['id']}/preview")

    assert status == 200, answer
    (block,) = [b for b in answer["blocks"] if b["type"] == "actions"]
    assert [(b["action_id"], b["text"]["text"]) for b in block["elements"]] == [
        ("take", "I'll take it"),
        ("skip_today", "Skip me today"),
    ]
    assert block["elements"][0]["value"] == value("preview", "take")


def test_a_click_on_a_rotation_post_is_recorded_and_shown(rt, db, slack, clicks):
    seed_rotation(db, actions=ACTIONS)
    run_pass(rt)
    (post,) = slack.posts()
    assert post.delivery_id == DAY
    assert buttons(post)["take"]["value"] == value(DAY, "take")

    first = click(clicks, post, "take", BOB, T0)
    again = click(clicks, post, "take", BOB, T0 + timedelta(seconds=1))
    run_pass(rt)  # shows the answer

    assert (first.status_code, again.status_code) == (200, 200)
    answers = {snap.id: snap.to_dict() for snap in db.collection(RESPONSES).stream()}
    assert list(answers) == [f"{DAY}:{BOB}"]
    answer = answers[f"{DAY}:{BOB}"]
    assert (answer["rotation_id"], answer["user"], answer["action_id"]) == ("standup", BOB, "take")
    assert "message_id" not in answer and "pending_update" not in answer
    (shown,) = slack.posts()
    assert shown.text == f"Today's stand-up host: <@{ALICE}>"
    assert _context(shown) == f"<@{BOB}> answered *I'll take it*"
    assert list(buttons(shown)) == ["take", "skip_today"]


def test_a_rotation_day_pins_the_catalog_it_was_posted_with(rt, db, slack):
    seed_rotation(db, actions=ACTIONS)

    run_pass(rt)

    entry = db.collection("deliveries").document(DAY).get().to_dict()
    assert (entry["status"], entry["actions"]) == ("sent", ACTIONS)
