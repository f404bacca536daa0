"""The directory cache: refreshed from the Slack stand-in's `conversations.list` and
`users.list` through slack_sdk, in pages within a budget, resumed by cursor, paused by a 429's
Retry-After, one refresh in flight; `display_names` from the cache alone."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from core.directory import display_names, ids_in_text
from core.directory_refresh import Step, refresh_step, slack_reader
from core.documents.directory import DirectoryList
from core.store import DIRECTORY_REFRESH
from tests.support.interleave import orchestrate

CHANNELS, USERS = DirectoryList.CHANNELS, DirectoryList.USERS


@pytest.fixture
def workspace(slack: Any) -> Any:
    slack.seed_workspace()
    return slack


def step(db, settings, clock, which, *, owner="worker-a", page_size=200, **kw) -> Step:
    reader = slack_reader(settings, page_size)
    return refresh_step(db, reader, clock, settings, owner, which, **kw)


def test_a_refresh_names_channels_and_people(db, settings, clock, workspace):
    assert step(db, settings, clock, CHANNELS).reason == "done"
    assert step(db, settings, clock, USERS).reason == "done"

    names = display_names(db, ["C0ENGSTAND1", "C0LEADS0001", "U0ANAGARCIA", "C0NOTKNOWN1", "x"])

    assert names == {
        "C0ENGSTAND1": "#eng-standup",
        "C0LEADS0001": "#team-leads",
        "U0ANAGARCIA": "@Ana García",
    }


def test_pages_resume_from_the_stored_cursor_within_the_minute_budget(db, settings, clock, slack):
    for n in range(5):
        slack.add_channel(f"C0PAGE000{n}", f"page-{n}")
    tight = replace(settings, directory_pages_per_minute=2)

    first = step(db, tight, clock, CHANNELS, page_size=2)
    again = step(db, tight, clock, CHANNELS, page_size=2)
    clock.advance(timedelta(minutes=1))
    last = step(db, tight, clock, CHANNELS, page_size=2)

    assert (first.reason, first.pages) == ("paused", 2)
    assert again.reason == "budget"  # two pages this minute already
    assert (last.reason, last.pages) == ("done", 1)
    assert slack.calls("conversations.list") == 3
    assert len(display_names(db, [f"C0PAGE000{n}" for n in range(5)])) == 5


def test_a_429_stops_the_refresh_until_its_retry_after(db, settings, clock, slack):
    for n in range(3):
        slack.add_channel(f"C0PAGE000{n}", f"page-{n}")
    slack.set_rate_limit("conversations.list", 1, per_seconds=30)

    first = step(db, settings, clock, CHANNELS, page_size=2)
    waiting = step(db, settings, clock, CHANNELS, page_size=2)
    calls_while_waiting = slack.calls("conversations.list")
    clock.advance(timedelta(seconds=31))
    resumed = step(db, settings, clock, CHANNELS, page_size=2)

    assert (first.reason, first.pages, first.code) == ("waiting", 1, "ratelimited")
    assert waiting.reason == "waiting"
    assert calls_while_waiting == 2  # a page, then the 429; none while waiting
    assert (resumed.reason, resumed.pages) == ("done", 1)
    assert len(display_names(db, [f"C0PAGE000{n}" for n in range(3)])) == 3


def test_archived_channels_and_deactivated_people_drop_out_when_stale(
    db, settings, clock, workspace
):
    step(db, settings, clock, CHANNELS)
    step(db, settings, clock, USERS)
    workspace.set_channel("C0RELEASES1", archived=True)
    workspace.set_channel("C0HIRING001", exists=False)
    workspace.set_user("U0BENCARTER", deactivated=True)
    workspace.set_user("U0CHLOEWONG", bot=True)

    assert step(db, settings, clock, CHANNELS).reason == "fresh"  # not stale yet: no call
    clock.advance(timedelta(seconds=settings.directory_max_age_seconds))
    step(db, settings, clock, CHANNELS)
    step(db, settings, clock, USERS)

    ids = ["C0RELEASES1", "C0HIRING001", "U0BENCARTER", "U0CHLOEWONG", "C0GENERAL01", "U0OLIVIALEE"]
    assert display_names(db, ids) == {"C0GENERAL01": "#general", "U0OLIVIALEE": "@Olivia Lee"}


def test_never_two_refreshes_of_a_list_in_flight(db, settings, clock, workspace):
    """Two workers step the same list in every interleaving of their lease's read and
    write: each round, the list is read once, whoever wins."""
    arrivals = itertools.count()
    reads: list[int] = []
    reader = slack_reader(settings)

    def counting(which: DirectoryList, cursor: str | None) -> Any:
        reads[-1] += 1
        return reader(which, cursor)

    def worker(owner: str) -> Any:
        def run() -> None:
            if next(arrivals) % 2 == 0:  # the first of a round starts it afresh
                db.collection(DIRECTORY_REFRESH).document(USERS.value).delete()
                reads.append(0)
            refresh_step(db, counting, clock, settings, owner, USERS)

        return run

    orchestrate(worker("worker-a"), worker("worker-b"), name="directory_refresh")

    assert len(reads) > 2  # several interleavings ran
    assert set(reads) == {1}


def test_mentions_in_text_are_ids_to_name():
    text = "Stand-up <@U0ANAGARCIA> in <#C0ENGSTAND1|eng-standup>, cc <@U0BENCARTER|ben>"
    assert ids_in_text(text) == {"U0ANAGARCIA", "C0ENGSTAND1", "U0BENCARTER"}
