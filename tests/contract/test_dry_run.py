"""Dry run equals the real pass: what a dry run previews for a due document (where it goes:
its Slack `channel`, or its `teams_conversation` with `channel` null; and its text) is what
the real pass then posts, and the dry run writes nothing."""

from __future__ import annotations

from core.platform import TEAMS
from tests.contract.subjects import CHANNEL, one_pass
from tests.fixtures.documents import update_times


def test_a_dry_run_previews_what_the_real_pass_then_posts(rt, world, subject):
    seeded = subject.seed(world, CHANNEL, {})
    before = update_times(world.db)

    dry = one_pass(rt, subject, dry_run=True)

    assert update_times(world.db) == before  # it wrote nothing
    assert world.chat.posts() == []
    [shown] = [p for p in dry["previews"] if p["id"] == seeded.id]
    one_pass(rt, subject)
    [post] = world.chat.posts()
    assert post.delivery_id == seeded.delivery_id
    if world.chat.platform == TEAMS:
        assert (shown["channel"], shown["teams_conversation"]) == (None, post.conversation)
    else:
        assert shown["channel"] == post.conversation and "teams_conversation" not in shown
    assert post.text == shown["text"]
