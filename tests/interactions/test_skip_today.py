"""A rotation's "Skip me today" (`skip_today`): the member the day's post names hands the
turn to the next member by the skip rules (they keep their place, next), in one commit with
their answer, and the day's post is updated once to name the new member, however many
clicks race; anyone else, or a click on a past day's post, changes nothing."""

from __future__ import annotations

import itertools
import threading
from collections import Counter, defaultdict
from datetime import UTC, datetime
from typing import Any

from core.store import RESPONSES
from emulator.slack_clicks import click_payload, form_body
from interactions.click import Click
from interactions.record import Answer, record_click
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.interactions import buttons, click, send, value
from tests.fixtures.rotations import ALICE, BOB, CAROL, MONDAY, rotation, seed_rotation
from tests.support.interleave import orchestrate

SKIP = [{"id": "take", "label": "I'll take it"}, {"id": "skip_today", "label": "Skip me today"}]
DAY = f"r:standup:{MONDAY}"
TUESDAY = datetime(2027, 1, 5, 9, 0, tzinfo=UTC)


def _responses(db: Any) -> dict[str, dict[str, Any]]:
    return {snap.id: snap.to_dict() for snap in db.collection(RESPONSES).stream()}


def _posted(rt: Any, db: Any, slack: Any, **fields: Any) -> Any:
    seed_rotation(db, **({"actions": SKIP} | fields))
    run_pass(rt)
    (post,) = slack.posts()
    assert post.text == f"Today's stand-up host: <@{ALICE}>"
    return post


def test_skip_me_today_hands_the_turn_on_and_the_next_days_follow_the_skip_rules(
    rt, db, slack, clicks, api, clock
):
    # Carol is out on Wednesday; an old skip of last week no longer decides anything.
    post = _posted(rt, db, slack, skips={"2026-12-30": [CAROL], "2027-01-06": [CAROL]})

    assert click(clicks, post, "skip_today", ALICE, T0).status_code == 200
    run_pass(rt)  # shows the answer

    (update,) = slack.updates()
    assert update.ts == post.ts and update.text == f"Today's stand-up host: <@{BOB}>"
    assert f"<@{ALICE}> answered *Skip me today*" in str(update.blocks)
    status, stored = call(api, "GET", "/rotations/standup")
    assert status == 200
    assert stored["skips"] == {MONDAY: [ALICE], "2027-01-06": [CAROL]}
    assert (stored["members"], stored["cursor"]) == ([BOB, ALICE, CAROL], 1)
    assert stored["last_member"] == BOB
    assert db.collection("deliveries").document(DAY).get().get("member") == BOB
    status, preview = call(api, "POST", "/rotations/standup/preview?count=4")
    # Alice keeps her place: she is next; Wednesday Bob stands in for Carol, who is next.
    assert [turn["member"] for turn in preview["turns"]] == [ALICE, BOB, CAROL, ALICE]
    assert preview["turns"][0]["date"] == "2027-01-05"

    clock.set(TUESDAY)
    run_pass(rt)
    assert slack.posts()[-1].text == f"Today's stand-up host: <@{ALICE}>"


def _concurrent(clicks: Any, post: Any, user: str, count: int, url: str) -> list[int]:
    barrier = threading.Barrier(count)
    statuses: list[int] = []

    def one(index: int) -> None:
        payload = click_payload(buttons(post)["skip_today"], user, post.channel, post.ts, url)
        payload["trigger_id"] = f"trigger-{index}"  # each its own request, not a replay
        body = form_body(payload)
        barrier.wait()
        statuses.append(send(clicks, body, T0).status_code)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_ten_concurrent_skips_make_one_change_and_one_update(rt, db, slack, clicks):
    post = _posted(rt, db, slack)
    version = rotation(db)["version"]

    statuses = _concurrent(clicks, post, ALICE, 10, slack.response_url())
    run_pass(rt)  # shows the answer

    assert statuses == [200] * 10
    assert list(_responses(db)) == [f"{DAY}:{ALICE}"]
    stored = rotation(db)
    assert stored["version"] == version + 1
    assert (stored["skips"], stored["members"]) == ({MONDAY: [ALICE]}, [BOB, ALICE, CAROL])
    assert [u.text for u in slack.updates()] == [f"Today's stand-up host: <@{BOB}>"]
    assert len(slack.posts()) == 1
    replies = [reply["text"] for reply in slack.replies()]
    assert replies == ["You already answered: Skip me today"] * 9


def test_racing_skips_change_the_rotation_once_in_every_interleaving(rt, db, slack):
    rotations = [f"rot{i}" for i in range(12)]
    for doc_id in rotations:
        seed_rotation(db, doc_id, actions=SKIP)
    run_pass(rt)
    versions = {doc_id: rotation(db, doc_id)["version"] for doc_id in rotations}
    outcomes: dict[int, list[Answer]] = defaultdict(list)

    def clicker() -> Any:
        rounds = itertools.count()

        def run() -> None:
            round_ = next(rounds)  # each interleaving skips on a rotation of its own
            delivery = f"r:{rotations[round_]}:{MONDAY}"
            result = record_click(rt, Click(ALICE, delivery, "skip_today", "C0123ABCD", None))
            outcomes[round_].append(result.answer)

        return run

    counts = orchestrate(clicker(), clicker(), name="skip today")

    assert min(counts) >= 1 and len(outcomes) >= 2
    for round_, answers in outcomes.items():
        assert Counter(answers) == {Answer.RECORDED: 1, Answer.ALREADY_ANSWERED: 1}, answers
        stored = rotation(db, rotations[round_])
        assert stored["version"] == versions[rotations[round_]] + 1
        assert (stored["skips"], stored["members"]) == ({MONDAY: [ALICE]}, [BOB, ALICE, CAROL])
    assert len(_responses(db)) == len(outcomes)


def test_another_member_cannot_skip_the_turn(rt, db, slack, clicks):
    post = _posted(rt, db, slack)
    before = rotation(db)

    answer = click(clicks, post, "skip_today", BOB, T0, response_url=slack.response_url())

    assert answer.status_code == 200
    assert [r["text"] for r in slack.replies()] == [
        f"Only <@{ALICE}>, whose turn this post names, can skip it."
    ]
    assert _responses(db) == {} and rotation(db) == before and slack.updates() == []
    assert db.collection("deliveries").document(DAY).get().get("member") == ALICE


def test_a_stale_or_forged_skip_records_nothing(rt, db, slack, clicks, clock):
    post = _posted(rt, db, slack)
    clock.set(TUESDAY)
    run_pass(rt)  # Tuesday's turn: Bob
    before = rotation(db)

    # Monday's post, clicked on Tuesday: that day is over.
    late = click(clicks, post, "skip_today", ALICE, TUESDAY, response_url=slack.response_url())
    # Signed with another secret; and replayed at a stale timestamp.
    forged = send(clicks, form_body(_payload(post, "skip_today", ALICE)), TUESDAY, "not-it")
    stale = send(clicks, form_body(_payload(post, "skip_today", ALICE)), T0)

    assert (late.status_code, forged.status_code, stale.status_code) == (200, 401, 401)
    assert [r["text"] for r in slack.replies()] == [
        "This turn's day is over: there is nothing to skip any more."
    ]
    assert _responses(db) == {} and rotation(db) == before and slack.updates() == []


def test_skip_today_is_only_taken_where_the_posts_catalog_has_it(rt, db, slack, clicks):
    post = _posted(rt, db, slack, actions=[{"id": "take", "label": "I'll take it"}])
    forged = {"type": "button", "action_id": "skip_today", "value": value(DAY, "skip_today")}

    refused = send(clicks, form_body(click_payload(forged, ALICE, post.channel, post.ts)), T0)
    taken = click(clicks, post, "take", ALICE, T0)

    assert (refused.status_code, taken.status_code) == (200, 200)
    assert {key: answer["action_id"] for key, answer in _responses(db).items()} == {
        f"{DAY}:{ALICE}": "take"
    }
    assert rotation(db)["members"] == [ALICE, BOB, CAROL] and "skips" not in rotation(db)


def _payload(post: Any, action_id: str, user: str) -> dict[str, Any]:
    return click_payload(buttons(post)[action_id], user, post.channel, post.ts)
