"""The update that shows a post's answers shows the words and blocks that were posted, even
when the formatter changed between the post and the click: a message's rendered post is
pinned on its ledger entry (`deliveries.post`); a rotation day's too, with its template and
the `render_version` that rendered it, so a "Skip me today" names the next member in the
posted words. An entry without the pinned post (claimed before posts were pinned) renders
its source with today's formatter."""

from __future__ import annotations

from typing import Any

import pytest
from google.cloud import firestore

from formatting import slack_text
from formatting.blocks import section_blocks
from formatting.markdown import join
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.interactions import click
from tests.fixtures.rotations import ALICE as HOST
from tests.fixtures.rotations import BOB as NEXT_HOST
from tests.fixtures.rotations import MONDAY, seed_rotation

USER = "U0ALICE00"
DAILY = {
    "status": "recurring",
    "send_at": None,
    "rrule": "FREQ=DAILY",
    "dtstart": "2027-01-01T09:00",
    "text": "Deploy *today*?\n\n- build\n- ship",
}
SKIP = [{"id": "take", "label": "I'll take it"}, {"id": "skip_today", "label": "Skip me today"}]
DAY = f"r:standup:{MONDAY}"
LEAD = "v2 · "


@pytest.fixture
def new_formatter(monkeypatch: pytest.MonkeyPatch) -> None:
    """A formatter deployed after the post, with its RENDER_VERSION bumped: it leads every
    message's text and first section with LEAD."""

    def v2_sections(blocks: Any) -> Any:
        rendered = section_blocks(blocks)
        if rendered:
            rendered[0]["text"]["text"] = LEAD + rendered[0]["text"]["text"]
        return rendered

    monkeypatch.setattr("formatting.slack_text.join", lambda blocks: LEAD + join(blocks))
    monkeypatch.setattr("formatting.slack_text.section_blocks", v2_sections)
    for module in ("interactions.show", "rotations.day"):
        monkeypatch.setattr(f"{module}.RENDER_VERSION", slack_text.RENDER_VERSION + 1)


def _sections(post: Any) -> list[Any]:
    return [block for block in post.blocks if block["type"] == "section"]


def _rotation_post(rt: Any, slack: Any, db: Any, **fields: Any) -> Any:
    seed_rotation(db, actions=SKIP, **fields)
    run_pass(rt)
    (post,) = slack.posts()
    return post


def _named(post: Any, member: str) -> tuple[str, list[Any]]:
    """The post's text and sections with the host's mention made `member`'s."""
    swap = lambda text: text.replace(f"<@{HOST}>", f"<@{member}>")  # noqa: E731
    sections = [
        block | {"text": block["text"] | {"text": swap(block["text"]["text"])}}
        for block in _sections(post)
    ]
    return swap(post.text), sections


def test_the_update_shows_the_posted_words_after_the_formatter_changed(
    clicks, posted, slack, rt, request
):
    post = posted(**DAILY)
    request.getfixturevalue("new_formatter")

    assert click(clicks, post, "done", USER, T0).status_code == 200
    run_pass(rt)

    (shown,) = slack.updates()
    assert (shown.text, _sections(shown)) == (post.text, _sections(post))
    assert LEAD not in str(shown.blocks)


def test_an_entry_without_the_pinned_post_renders_its_source_with_todays_formatter(
    clicks, posted, db, slack, rt, request
):
    post = posted(**DAILY)
    # An entry claimed before rendered posts were pinned holds the message's source.
    entry = db.collection("deliveries").document(post.delivery_id)
    entry.update({"post": firestore.DELETE_FIELD, "text": "Deploy soon?"})
    request.getfixturevalue("new_formatter")

    assert click(clicks, post, "done", USER, T0).status_code == 200
    run_pass(rt)

    (shown,) = slack.updates()
    assert shown.text == LEAD + "Deploy soon?"


def test_a_skip_names_the_next_member_in_the_posted_words_after_the_formatter_changed(
    clicks, db, slack, rt, request
):
    post = _rotation_post(rt, slack, db)
    request.getfixturevalue("new_formatter")

    assert click(clicks, post, "skip_today", HOST, T0).status_code == 200
    run_pass(rt)

    (shown,) = slack.updates()
    assert (shown.text, _sections(shown)) == _named(post, NEXT_HOST)
    assert shown.text == f"Today's stand-up host: <@{NEXT_HOST}>"


def test_a_rotation_post_answered_after_the_formatter_changed_keeps_its_words(
    clicks, db, slack, rt, request
):
    post = _rotation_post(rt, slack, db)
    request.getfixturevalue("new_formatter")

    assert click(clicks, post, "take", HOST, T0).status_code == 200
    run_pass(rt)

    (shown,) = slack.updates()
    assert (shown.text, _sections(shown)) == (post.text, _sections(post))


def test_a_skip_on_a_template_naming_the_member_itself_renders_with_todays_formatter(
    clicks, db, slack, rt, request
):
    # The post's mention of the host cannot be told from the template's own: the pinned
    # words cannot be reused, and the day is rendered again, for the next member.
    template = f"Host: {{member}} (rota owner <@{HOST}>)"
    post = _rotation_post(rt, slack, db, text=template)
    assert post.text == f"Host: <@{HOST}> (rota owner <@{HOST}>)"
    request.getfixturevalue("new_formatter")

    assert click(clicks, post, "skip_today", HOST, T0).status_code == 200
    run_pass(rt)

    (shown,) = slack.updates()
    assert shown.text == f"{LEAD}Host: <@{NEXT_HOST}> (rota owner <@{HOST}>)"


def test_a_rotation_day_pins_its_rendered_post_template_and_render_version(rt, db, slack):
    post = _rotation_post(rt, slack, db)

    entry = db.collection("deliveries").document(DAY).get().to_dict()
    assert entry["post"] == {"text": post.text, "blocks": _sections(post), "member": HOST}
    template = "Today's stand-up host: {member}"
    assert (entry["text"], entry["render_version"]) == (template, slack_text.RENDER_VERSION)
