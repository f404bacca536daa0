"""A message to a person stored with `channel: null` beside its `user` is in that person's
lane like their other messages (processor.due_page.channel_of): paced with them inline, and
published under their ordering key with DISPATCH=pubsub."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from core.settings import Settings
from core.store import MESSAGES
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.people import PERSON, to_person
from tests.fixtures.pubsub import Subscription
from tests.fixtures.runtime import make_runtime


def with_null_channel(db: Any, **fields: Any) -> str:
    """A one-off to PERSON as another service may write it: `channel` present, and null."""
    message_id = to_person(db, None, **fields)
    db.collection(MESSAGES).document(message_id).update({"channel": None})
    return message_id


def test_a_null_channel_is_paced_in_the_persons_lane(rt, db, slack):
    to_person(db, None, next_run_at=T0 - timedelta(minutes=1), text="first")
    with_null_channel(db, text="second")

    summary = run_kind(rt, MESSAGE_KIND)

    assert summary["sent"] == 2
    first, second = sorted(slack.posts(), key=lambda post: Decimal(post.ts))
    assert (first.text, second.text) == ("first", "second")  # one lane, in due order
    assert Decimal(second.ts) - Decimal(first.ts) >= 1  # paced a second apart


def test_a_null_channel_is_published_under_the_persons_ordering_key(
    db, clock, pubsub: Subscription
):
    rt = make_runtime(Settings.from_env(), db, clock, "tick")
    with_null_channel(db)

    assert run_pass(rt)["published"] == 1

    (pulled,) = pubsub.pull()
    assert pulled.ordering_key == PERSON
