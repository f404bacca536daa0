"""What the API stores is what the processor takes turns with: a rotation created and
edited through the `api` target is posted by the real pass exactly as its preview said."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from processor.kind_pass import run_kind
from rotations.kind import ROTATION_DAY_KIND
from tests.fixtures.api import call
from tests.fixtures.rotations import ROTATION, create

A, B, C = ROTATION["members"]


def test_each_day_posts_what_the_preview_showed(api, rt, clock, slack):
    created = create(api, {**ROTATION, "skips": {"2027-01-05": [B]}, "on_ambiguous": "retry"})
    path = f"/rotations/{created['id']}"
    previewed: list[dict[str, Any]] = []
    for _ in range(3):  # Monday (due at once), Tuesday (B is out), Wednesday
        status, answer = call(api, "POST", f"{path}/preview?count=1")
        assert status == 200, answer
        previewed.append(answer)
        clock.set(max(clock.now(), due_of(answer)))
        counts = run_kind(rt, ROTATION_DAY_KIND)
        assert counts["sent"] == 1, counts
        clock.advance(timedelta(hours=1))

    posts = slack.posts()
    assert [post.text for post in posts] == [answer["text"] for answer in previewed]
    assert [post.blocks for post in posts] == [answer["blocks"] for answer in previewed]
    assert [answer["turns"][0]["member"] for answer in previewed] == [A, C, B]
    # The stored order after the week so far is what the next edit continues from.
    _, after = call(api, "GET", path)
    assert (after["last_processed_date"], after["sent_count"]) == ("2027-01-06", 3)
    assert after["next_run_at"] == "2027-01-07T08:30:00+00:00"


def test_after_a_members_edit_the_next_post_is_who_the_preview_named(api, rt, clock, slack):
    created = create(api, ROTATION)
    path = f"/rotations/{created['id']}"
    assert run_kind(rt, ROTATION_DAY_KIND)["sent"] == 1  # Monday: A; B is next

    status, _ = call(api, "PUT", path, {"members": [A, C, "U04DDDDDD"]})  # B leaves
    answer = call(api, "POST", f"{path}/preview?count=1")[1]
    clock.set(due_of(answer))
    run_kind(rt, ROTATION_DAY_KIND)

    assert status == 200
    assert answer["turns"][0]["member"] == C
    assert [post.text for post in slack.posts()] == [f"<@{A}> is on call today", answer["text"]]


def due_of(answer: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(answer["turns"][0]["utc"])
