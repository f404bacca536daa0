"""The first answer wins: a create() of `responses/{delivery_id}:{user}` (or of
`responses/{delivery_id}` with `one_answer`); later clicks change nothing and are told so in
an ephemeral reply (the payload's response_url), however many race."""

from __future__ import annotations

import itertools
import threading
from collections import Counter, defaultdict
from typing import Any

from emulator.slack_clicks import click_payload, form_body
from interactions.click import Click
from interactions.record import Answer, record_click
from tests.fixtures.clock import T0
from tests.fixtures.interactions import buttons, click, send
from tests.support.interleave import orchestrate

ALICE, BOB = "U0ALICE00", "U0BOB0000"


def _responses(db: Any) -> dict[str, dict[str, Any]]:
    return {snap.id: snap.to_dict() for snap in db.collection("responses").stream()}


def test_a_second_click_changes_nothing_and_gets_an_ephemeral_reply(clicks, posted, db, slack):
    post = posted()
    url = slack.response_url()

    first = click(clicks, post, "done", ALICE, T0, response_url=url)
    second = click(clicks, post, "not-yet", ALICE, T0, response_url=url)

    assert (first.status_code, second.status_code) == (200, 200)
    answers = _responses(db)
    assert list(answers) == [f"{post.delivery_id}:{ALICE}"]
    assert answers[f"{post.delivery_id}:{ALICE}"]["action_id"] == "done"
    (reply,) = slack.replies()
    assert reply["response_type"] == "ephemeral" and reply["replace_original"] is False
    assert reply["text"] == "You already answered: Done"


def test_each_person_answers_once_unless_one_answer(clicks, posted, db, slack):
    post = posted()

    click(clicks, post, "done", ALICE, T0)
    click(clicks, post, "not-yet", BOB, T0)

    assert {r["user"]: r["action_id"] for r in _responses(db).values()} == {
        ALICE: "done",
        BOB: "not-yet",
    }


def test_with_one_answer_the_first_answer_of_anyone_wins(clicks, posted, db, slack):
    post = posted(one_answer=True)
    url = slack.response_url()

    click(clicks, post, "done", ALICE, T0, response_url=url)
    click(clicks, post, "not-yet", BOB, T0, response_url=url)

    assert _responses(db) == {post.delivery_id: _responses(db)[post.delivery_id]}
    assert _responses(db)[post.delivery_id]["user"] == ALICE
    assert [r["text"] for r in slack.replies()] == [f"<@{ALICE}> already answered: Done"]


def _concurrent_clicks(clicks: Any, post: Any, users: list[str], url: str) -> list[int]:
    barrier = threading.Barrier(len(users))
    statuses: list[int] = []

    def one(index: int, user: str) -> None:
        button = buttons(post)["done" if index % 2 == 0 else "not-yet"]
        payload = click_payload(button, user, post.channel, post.ts, url)
        payload["trigger_id"] = f"trigger-{index}"  # each its own request, not a replay
        body = form_body(payload)
        barrier.wait()
        statuses.append(send(clicks, body, T0).status_code)

    threads = [threading.Thread(target=one, args=(i, u)) for i, u in enumerate(users)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_ten_concurrent_clicks_of_one_person_record_one_answer(clicks, posted, db, slack):
    post = posted()

    statuses = _concurrent_clicks(clicks, post, [ALICE] * 10, slack.response_url())

    assert statuses == [200] * 10
    (answer,) = _responses(db).values()
    assert len(slack.replies()) == 9
    label = {"done": "Done", "not-yet": "Not yet"}[answer["action_id"]]
    assert {r["text"] for r in slack.replies()} == {f"You already answered: {label}"}


def test_ten_concurrent_clicks_of_ten_people_with_one_answer_record_one(clicks, posted, db, slack):
    post = posted(one_answer=True)
    people = [f"U0PERSON{i}" for i in range(10)]

    statuses = _concurrent_clicks(clicks, post, people, slack.response_url())

    assert statuses == [200] * 10
    (answer,) = _responses(db).values()
    assert answer["user"] in people
    assert len(slack.replies()) == 9


def test_racing_clicks_record_one_answer_in_every_interleaving(rt, posted, db):
    post = posted()
    outcomes: dict[int, list[tuple[Answer, str | None]]] = defaultdict(list)

    def clicker(action_id: str) -> Any:
        rounds = itertools.count()

        def run() -> None:
            # Each function runs once per interleaving: the round's own person races.
            round_ = next(rounds)
            user = f"U0ROUND{round_:03d}"
            result = record_click(rt, Click(user, post.delivery_id, action_id, post.channel, None))
            outcomes[round_].append((result.answer, result.action.id if result.action else None))

        return run

    counts = orchestrate(clicker("done"), clicker("not-yet"), clicker("done"), name="answer")

    assert min(counts) >= 1 and len(outcomes) >= 6  # every order of three paused clicks
    stored = {r["user"]: r["action_id"] for r in _responses(db).values()}
    for round_, results in outcomes.items():
        answers = Counter(answer for answer, _ in results)
        assert answers == {Answer.RECORDED: 1, Answer.ALREADY_ANSWERED: 2}, results
        # Every click is told the one stored answer.
        assert {action for _, action in results} == {stored[f"U0ROUND{round_:03d}"]}
