"""The reserved mute button (`mute_category`): a message to a person whose category lets
them opt out carries it; clicked by that person it opts them out of the category as the send
named it (the same write as `PUT /preferences`), the post says so with an Undo, and the gates
hold back their next message of it; anyone else's click changes nothing; a double click is
one change."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import timedelta
from typing import Any

from core.models import message_delivery_id
from core.store import CATEGORIES, MESSAGES, PREFERENCES, RESPONSES
from interactions.click import Click
from interactions.record import Answer, record_click
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.interactions import buttons, click
from tests.fixtures.messages import seed_message
from tests.fixtures.people import PERSON, person_doc, seed_category, series_to_person, to_person
from tests.support.interleave import orchestrate

OTHER = "U0OTHER99"
TOMORROW = T0 + timedelta(days=1)
MUTED = "You won't get Nudges messages."


def _preferences(api: Any) -> list[str]:
    status, answer = call(api, "GET", f"/preferences/{PERSON}")
    assert status == 200
    return list(answer["opted_out"])


def _labels(post: Any) -> dict[str, str]:
    return {i: b["text"]["text"] for i, b in buttons(post).items()}


def _series(rt: Any, db: Any, slack: Any) -> tuple[str, Any]:
    seed_category(db, "nudges")
    mid = series_to_person(db, "nudges", actions=[{"id": "done", "label": "Done"}])
    run_pass(rt)
    (post,) = slack.posts()
    return mid, post


def test_a_message_to_a_person_of_an_opt_out_able_category_carries_the_mute_button(rt, db, slack):
    seed_category(db, "nudges")
    to_person(db, "nudges")

    run_pass(rt)

    (post,) = slack.posts()
    assert _labels(post) == {"mute_category": "Mute Nudges"}


def test_the_preview_shows_the_mute_button_the_send_would_add(api, db):
    seed_category(db, "nudges")
    draft = {"user": PERSON, "text": "Water", "send_at": T0.isoformat(), "category": "nudges"}

    status, preview = call(api, "POST", "/preview", {**draft, "timezone": "UTC"})
    _, plain = call(api, "POST", "/preview", {**draft, "timezone": "UTC", "category": None})

    assert status == 200
    (block,) = [b for b in preview["blocks"] if b["type"] == "actions"]
    assert [(b["action_id"], b["text"]["text"]) for b in block["elements"]] == [
        ("mute_category", "Mute Nudges")
    ]
    assert not any(b["type"] == "actions" for b in plain["blocks"])


def test_no_mute_button_for_a_must_read_category_a_channel_no_category_or_a_long_post(
    rt, db, slack
):
    seed_category(db, "policy", opt_out_allowed=False)
    seed_category(db, "nudges")
    to_person(db, "policy")
    to_person(db, None)
    seed_message(db, category="nudges")  # to a channel: nobody's own to mute
    to_person(db, "nudges", text="word " * 3000)  # too long for blocks: sent, as text alone

    summary = run_pass(rt)

    assert summary["sent"] == 4 and len(slack.posts()) == 4
    assert all(not any(b["type"] == "actions" for b in p.blocks or []) for p in slack.posts())


def test_a_message_may_not_use_the_reserved_ids(api, db):
    for reserved in ("mute_category", "unmute_category"):
        body = {
            "channel": "C0123ABCD",
            "text": "Lunch?",
            "send_at": T0.isoformat(),
            "timezone": "UTC",
            "actions": [{"id": reserved, "label": "Mute"}],
        }
        status, answer = call(api, "POST", "/messages", body)

        assert status == 422
        assert [d["field"] for d in answer["details"]] == ["actions"]
        assert reserved in answer["details"][0]["message"]
    assert list(db.collection(MESSAGES).stream()) == []


def test_mute_opts_the_person_out_the_post_says_so_and_the_next_one_is_skipped(
    rt, db, slack, clicks, api, clock
):
    mid, post = _series(rt, db, slack)
    assert _labels(post) == {"done": "Done", "mute_category": "Mute Nudges"}
    # Edited after the send: the click still mutes what the post named, as it named it.
    db.collection(CATEGORIES).document("nudges").update({"label": "Reminders"})
    seed_category(db, "other")
    db.collection(MESSAGES).document(mid).update({"category": "other"})

    assert click(clicks, post, "mute_category", PERSON, T0).status_code == 200
    assert _preferences(api) == ["nudges"] and person_doc(db)["opted_out"] == ["nudges"]
    run_pass(rt)  # shows it

    (update,) = slack.updates()
    assert update.ts == post.ts and MUTED in str(update.blocks)
    assert _labels(update) == {"done": "Done", "unmute_category": "Undo"}
    db.collection(MESSAGES).document(mid).update({"category": "nudges"})
    clock.set(TOMORROW)
    run_pass(rt)
    entry = ledger(db)[message_delivery_id(mid, TOMORROW)]
    assert (entry["status"], entry["reason"]) == ("skipped", "opted_out")
    assert len(slack.posts()) == 1


def test_undo_opts_them_back_in_and_the_next_one_is_sent(rt, db, slack, clicks, api, clock):
    mid, post = _series(rt, db, slack)
    click(clicks, post, "mute_category", PERSON, T0)
    run_pass(rt)
    muted = slack.updates()[-1]

    assert click(clicks, muted, "unmute_category", PERSON, T0).status_code == 200
    run_pass(rt)

    assert _preferences(api) == [] and person_doc(db)["opted_out"] == []
    again = slack.updates()[-1]
    assert "You'll get Nudges messages again." in str(again.blocks)
    assert _labels(again) == {"done": "Done", "mute_category": "Mute Nudges"}
    clock.set(TOMORROW)
    run_pass(rt)
    assert ledger(db)[message_delivery_id(mid, TOMORROW)]["status"] == "sent"
    assert len(slack.posts()) == 2


def test_someone_elses_click_changes_nothing(rt, db, slack, clicks, api):
    _, post = _series(rt, db, slack)
    before = person_doc(db)

    answer = click(clicks, post, "mute_category", OTHER, T0, response_url=slack.response_url())
    run_pass(rt)

    assert answer.status_code == 200
    assert [r["text"] for r in slack.replies()] == [f"This button is for <@{PERSON}>."]
    assert _preferences(api) == [] and person_doc(db) == before
    assert list(db.collection(RESPONSES).stream()) == [] and slack.updates() == []


def test_a_double_click_is_one_change(rt, db, slack, clicks):
    _, post = _series(rt, db, slack)

    first = click(clicks, post, "mute_category", PERSON, T0)
    second = click(clicks, post, "mute_category", PERSON, T0, response_url=slack.response_url())
    run_pass(rt)

    assert (first.status_code, second.status_code) == (200, 200)
    assert [r["text"] for r in slack.replies()] == ["You already answered: Mute Nudges"]
    assert db.collection(PREFERENCES).document(PERSON).get().get("opted_out") == ["nudges"]
    assert len(slack.updates()) == 1


def test_racing_mutes_change_the_preferences_once_in_every_interleaving(rt, db, slack):
    categories = [f"cat{i}" for i in range(12)]
    delivery = {}
    for category in categories:
        seed_category(db, category)
        delivery[category] = message_delivery_id(to_person(db, category), T0)
    run_pass(rt)
    outcomes: dict[int, list[Answer]] = {}

    def clicker() -> Any:
        rounds = itertools.count()

        def run() -> None:
            round_ = next(rounds)  # each interleaving mutes a category of its own
            dm = ledger(db)[delivery[categories[round_]]]["channel"]
            mute = Click(PERSON, delivery[categories[round_]], "mute_category", dm, None)
            outcomes.setdefault(round_, []).append(record_click(rt, mute).answer)

        return run

    counts = orchestrate(clicker(), clicker(), name="mute")

    assert min(counts) >= 1 and len(outcomes) >= 2
    for answers in outcomes.values():
        assert Counter(answers) == {Answer.RECORDED: 1, Answer.ALREADY_ANSWERED: 1}, answers
    stored = db.collection(PREFERENCES).document(PERSON).get().get("opted_out")
    assert sorted(stored) == sorted(categories[: len(outcomes)])
