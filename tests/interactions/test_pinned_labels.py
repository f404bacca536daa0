"""The catalog a post was sent with is pinned on its ledger entry (`deliveries.actions`): an
edit of the message's `actions` after the send neither relabels the old post's answers nor
lets it take an action it never showed."""

from __future__ import annotations

from typing import Any

from emulator.slack_clicks import click_payload, form_body
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.interactions import click, send, value

ALICE, BOB = "U0ALICE00", "U0BOB0000"
# The `posted` fixture's buttons (tests/interactions/conftest.py).
ACTIONS = [
    {"id": "done", "label": "Done", "style": "primary"},
    {"id": "not-yet", "label": "Not yet"},
]
DAILY = {
    "status": "recurring",
    "send_at": None,
    "rrule": "FREQ=DAILY",
    "dtstart": "2027-01-01T09:00",
}
EDITED = [{"id": "done", "label": "Finished"}, {"id": "later", "label": "Later"}]


def _edit_actions(api: Any, message_id: str) -> None:
    status, answer = call(api, "PUT", f"/messages/{message_id}", {"actions": EDITED})
    assert status == 200, answer


def _context(post: Any) -> str:
    return " ".join(e["text"] for b in post.blocks if b["type"] == "context" for e in b["elements"])


def test_an_edit_after_the_send_does_not_relabel_the_old_posts_answers(
    clicks, posted, db, slack, api, rt
):
    post = posted(**DAILY)
    (entry,) = [s for s in db.collection("deliveries").stream() if s.id == post.delivery_id]
    message_id = entry.get("message_id")
    assert entry.get("actions") == ACTIONS
    _edit_actions(api, message_id)

    assert click(clicks, post, "done", ALICE, T0).status_code == 200
    run_pass(rt)  # shows the answer

    (shown,) = [p for p in slack.posts() if p.ts == post.ts]
    assert _context(shown) == f"<@{ALICE}> answered *Done*"
    assert "Finished" not in str(shown.blocks)
    status, listed = call(api, "GET", f"/messages/{message_id}/responses")
    assert status == 200
    assert [(r["action_id"], r["label"]) for r in listed["responses"]] == [("done", "Done")]


def test_an_action_the_pinned_catalog_lacks_is_refused_though_the_current_has_it(
    clicks, posted, db, slack, api, rt
):
    post = posted(**DAILY)
    message_id = db.collection("deliveries").document(post.delivery_id).get().get("message_id")
    _edit_actions(api, message_id)
    button = {"type": "button", "action_id": "later", "value": value(post.delivery_id, "later")}

    body = form_body(click_payload(button, BOB, post.channel, post.ts))

    assert send(clicks, body, T0).status_code == 200
    assert list(db.collection("responses").stream()) == []
    assert slack.updates() == []
