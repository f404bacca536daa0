"""Edits and cancels racing the processor's claim: a cancel either stops the send or answers
409 (and the message is sent once); many edit requests and ticks at once never lose an edit
that answered 200, nor send twice.

The deterministic test drives an HTTP cancel and a claim through every interleaving of the
`# pragma: SYNCPOINT edit` comments (in composer/versions.py and below); the threaded one
runs real requests against real ticks. (An edit racing a claim, for every kind the API
edits: tests/contract/test_edit_races.py.)"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from core.models import message_delivery_id
from core.store import MESSAGES
from formatting.slack_text import to_slack
from messages.kind import MESSAGE_KIND
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.deliver import send
from processor.finalize import finalize
from processor.kind_pass import run_kind
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import Rounds, orchestrate

OLD, NEW = "Release train leaves at 10:00", "Release train delayed to 10:30"


def posted_texts(slack: Any, mid: str) -> list[str | None]:
    """What Slack received for any occurrence of the message."""
    prefix = message_delivery_id(mid, T0).rsplit(":", 1)[0] + ":"
    return [post.text for post in slack.posts() if (post.delivery_id or "").startswith(prefix)]


def test_a_cancel_racing_a_claim_either_stops_the_send_or_is_409(
    api_app, api, settings, db, slack, clock
):
    rounds = Rounds(lambda: seed_message(db, text=OLD))
    cancels: dict[str, int] = {}
    rt = make_runtime(settings, db, clock, "worker-a")

    def cancel() -> None:
        mid = rounds.message_for_this_round()
        status, _ = call(api_app.test_client(), "DELETE", f"/messages/{mid}")
        cancels[mid] = status

    def claim_and_send() -> None:
        snap = db.collection(MESSAGES).document(rounds.message_for_this_round()).get()
        claim = claim_occurrence(rt, MESSAGE_KIND, snap)  # pragma: SYNCPOINT edit
        if isinstance(claim, Claim):
            post = send(rt, claim)  # pragma: SYNCPOINT edit
            finalize(rt, claim, post)

    orchestrate(cancel, claim_and_send, name="edit")

    run_kind(rt, MESSAGE_KIND)
    for mid in rounds.messages:
        if cancels[mid] == 200:
            assert posted_texts(slack, mid) == []
            assert message(db, mid)["status"] == "cancelled"
        else:
            assert cancels[mid] == 409
            assert len(posted_texts(slack, mid)) == 1
            assert message(db, mid)["status"] == "sent"


def test_concurrent_edit_requests_and_ticks_never_lose_an_edit_or_send_twice(
    api_app, api, settings, db, slack, clock
):
    from google.cloud import firestore

    count = 40
    # The tick takes the oldest first and the editor the newest first, so they meet midway:
    # some edits land before their claim, some find the message sending or sent.
    mids = [
        seed_message(db, f"race-{n:02d}", text=f"{OLD} #{n}", next_run_at=T0 - timedelta(seconds=n))
        for n in reversed(range(count))
    ]
    # The ticking thread has its own client, as another instance of the function would.
    ticker = make_runtime(settings, firestore.Client(project=db.project), clock, "ticker")
    edits: dict[str, int] = {}
    start = threading.Barrier(2)

    def edit_all() -> None:
        client = api_app.test_client()
        start.wait()
        for mid in reversed(mids):
            n = int(mid.removeprefix("race-"))
            edits[mid] = call(client, "PUT", f"/messages/{mid}", {"text": f"{NEW} #{n}"})[0]

    def tick_repeatedly() -> None:
        start.wait()
        for _ in range(3):
            run_kind(ticker, MESSAGE_KIND)

    threads = [threading.Thread(target=edit_all), threading.Thread(target=tick_repeatedly)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    run_kind(ticker, MESSAGE_KIND)  # whatever lost a claim to an edit goes out now

    for mid in mids:
        n = int(mid.removeprefix("race-"))
        assert edits[mid] in (200, 409), (mid, edits[mid])
        expected = f"{NEW} #{n}" if edits[mid] == 200 else f"{OLD} #{n}"
        assert posted_texts(slack, mid) == [to_slack(expected).text], (mid, edits[mid])
        assert message(db, mid)["status"] == "sent"
    assert len(slack.posts()) == count
