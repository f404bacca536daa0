"""What a post was is pinned on its ledger entry at the claim (`deliveries.post`, the
rendered text and blocks; `one_answer`; a rotation day's template and `render_version`;
beside the catalog `actions`): an edit of the message or the rotation after the send, or a
formatter deployed since, neither changes who may still answer nor rewrites the post in
Slack when it shows its answers."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.interactions import buttons, click
from tests.fixtures.messages import seed_message
from tests.fixtures.rotations import ALICE as HOST
from tests.fixtures.rotations import BOB as NEXT_HOST
from tests.fixtures.rotations import MONDAY, seed_rotation

ALICE, BOB = "U0ALICE00", "U0BOB0000"
DAILY = {
    "status": "recurring",
    "send_at": None,
    "rrule": "FREQ=DAILY",
    "dtstart": "2027-01-01T09:00",
    "text": "Deploy *today*?",
}


def _put(api: Any, message_id: str, edit: dict[str, Any]) -> None:
    status, answer = call(api, "PUT", f"/messages/{message_id}", edit)
    assert status == 200, answer


def _message_id(db: Any, delivery_id: str) -> str:
    return str(db.collection("deliveries").document(delivery_id).get().get("message_id"))


def _responses(db: Any) -> dict[str, dict[str, Any]]:
    return {snap.id: snap.to_dict() for snap in db.collection("responses").stream()}


def _sections(post: Any) -> list[Any]:
    return [block for block in post.blocks if block["type"] == "section"]


def test_one_answer_turned_off_after_the_send_still_refuses_a_second_answer(
    clicks, posted, db, slack, api
):
    post = posted(one_answer=True, **DAILY)
    url = slack.response_url()
    assert click(clicks, post, "done", ALICE, T0, response_url=url).status_code == 200

    _put(api, _message_id(db, post.delivery_id), {"one_answer": False})
    later = T0 + timedelta(seconds=5)
    assert click(clicks, post, "not-yet", BOB, later, response_url=url).status_code == 200

    assert list(_responses(db)) == [post.delivery_id]
    assert _responses(db)[post.delivery_id]["user"] == ALICE
    assert [r["text"] for r in slack.replies()] == [f"<@{ALICE}> already answered: Done"]


def test_one_answer_turned_on_after_the_send_leaves_the_post_open_to_everyone(
    clicks, posted, db, slack, api, rt
):
    post = posted(**DAILY)
    assert click(clicks, post, "done", ALICE, T0).status_code == 200

    _put(api, _message_id(db, post.delivery_id), {"one_answer": True})
    assert click(clicks, post, "not-yet", BOB, T0 + timedelta(seconds=5)).status_code == 200

    run_pass(rt)  # shows the answers
    answers = _responses(db)
    assert sorted(answers) == [f"{post.delivery_id}:{ALICE}", f"{post.delivery_id}:{BOB}"]
    # Each person still answers once, and the buttons stay for the others.
    assert list(buttons(slack.updates()[-1])) == ["done", "not-yet"]


def test_the_update_shows_the_text_that_was_posted_not_an_edit_made_since(
    clicks, posted, db, slack, api, rt
):
    post = posted(**DAILY)
    _put(api, _message_id(db, post.delivery_id), {"text": "Rewritten <!channel>"})

    assert click(clicks, post, "done", ALICE, T0).status_code == 200
    run_pass(rt)

    (shown,) = slack.updates()
    assert (shown.ts, shown.text) == (post.ts, post.text)
    assert _sections(shown) == _sections(post)
    assert "Rewritten" not in str(shown.blocks)


def test_a_send_retried_after_an_edit_pins_what_the_retry_posted(rt, clicks, db, slack, api, clock):
    seeded: dict[str, Any] = {**DAILY, "actions": [{"id": "done", "label": "Done"}]}
    slack.inject(Fault(kind="rate_limit", retry_after=60, times=1))
    message_id = seed_message(db, **seeded)
    run_kind(rt, MESSAGE_KIND)  # released: the same occurrence is claimed again later
    assert slack.posts() == []
    _put(api, message_id, {"text": "Deploy *now*?", "one_answer": True})

    clock.set(T0 + timedelta(minutes=2))
    run_kind(rt, MESSAGE_KIND)
    (post,) = slack.posts()
    entry = db.collection("deliveries").document(post.delivery_id).get().to_dict()
    assert (entry["post"]["text"], entry["one_answer"]) == (post.text, True)
    assert "now" in post.text

    click(clicks, post, "done", ALICE, T0 + timedelta(minutes=2))
    run_pass(rt)
    assert slack.updates()[-1].text == post.text


def test_a_rotation_post_keeps_its_template_when_the_rotation_is_edited(rt, db, slack, clicks, api):
    actions = [{"id": "take", "label": "I'll take it"}, {"id": "skip_today", "label": "Skip"}]
    seed_rotation(db, actions=actions)
    run_pass(rt)
    (post,) = slack.posts()
    assert post.text == f"Today's stand-up host: <@{HOST}>"
    status, answer = call(api, "PUT", "/rotations/standup", {"text": "{member} brings cake"})
    assert status == 200, answer

    # The member hands the turn on: the post names the next member, in the posted template.
    assert click(clicks, post, "skip_today", HOST, T0).status_code == 200
    run_pass(rt)

    (shown,) = slack.updates()
    assert shown.text == f"Today's stand-up host: <@{NEXT_HOST}>"
    assert "cake" not in str(shown.blocks)
    entry = db.collection("deliveries").document(f"r:standup:{MONDAY}").get()
    template = "Today's stand-up host: {member}"
    assert (entry.get("member"), entry.get("text")) == (NEXT_HOST, template)


def test_the_update_keeps_a_broadcast_the_post_was_allowed_though_it_is_disallowed_since(
    clicks, posted, db, slack, api, rt
):
    post = posted(**(DAILY | {"text": "Deploy <!here>?", "allow_broadcast": True}))
    assert "<!here>" in post.text
    _put(api, _message_id(db, post.delivery_id), {"allow_broadcast": False})

    assert click(clicks, post, "done", ALICE, T0).status_code == 200
    run_pass(rt)

    (shown,) = slack.updates()
    assert (shown.text, _sections(shown)) == (post.text, _sections(post))


def test_a_post_that_reconciliation_found_in_history_keeps_what_it_was(
    rt, clicks, db, slack, api, clock
):
    seeded: dict[str, Any] = DAILY | {"actions": [{"id": "done", "label": "Done"}]}
    message_id = seed_message(db, one_answer=True, **seeded)
    slack.inject(Fault(kind="drop_after_receipt", times=1))
    assert run_kind(rt, MESSAGE_KIND)["ambiguous"] == 1
    clock.advance(timedelta(seconds=301))  # past the lease: reconciliation reads history
    assert run_kind(rt, MESSAGE_KIND)["reconciled"] == 1
    (post,) = slack.posts()
    _put(api, message_id, {"text": "Rewritten", "one_answer": False})

    click(clicks, post, "done", ALICE, clock.now())
    click(clicks, post, "done", BOB, clock.now() + timedelta(seconds=1))
    run_pass(rt)

    assert list(_responses(db)) == [post.delivery_id]
    assert [update.text for update in slack.updates()] == [post.text]
