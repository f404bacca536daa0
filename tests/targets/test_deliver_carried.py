"""`deliver` claims from the snapshot its message carries (format 2): no read of the
document for a fresh message; a stale one (the document edited since the tick read it)
claims nothing, posts nothing, and the next tick's message posts the edited text once (one
read, after the claim lost: a release for a Retry-After is still waited for or handed
back); a format-1 message (published before a deploy) still delivers; a carried document
that does not decode or names another document is acknowledged, naming the field
`document`. Two instances handed one carried message: test_deliver.py, with the format-1
case.

Reads are counted at the Firestore client's gRPC channel (bench.rpc), by collection."""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import flask
import functions_framework
import pytest
from google.cloud.firestore_v1.types import Document

from bench.rpc import CountedClient, RpcCounter
from core.models import message_delivery_id
from core.pubsub import DueOccurrence
from core.store import MESSAGES, ROTATIONS
from emulator.slack_faults import Fault
from processor.publish import publish
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.pubsub import Pulled, Subscription, push
from tests.fixtures.runtime import ADMIN_TOKEN, MAIN, make_runtime

pytestmark = pytest.mark.usefixtures("fresh_certs_cache")


@pytest.fixture(scope="module")
def tick_app() -> Iterator[flask.Flask]:
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("FUNCTION_TARGET", raising=False)
        yield functions_framework.create_app(target="tick", source=MAIN)


def tick(app: flask.Flask) -> dict[str, Any]:
    response = app.test_client().post(
        "/",
        data=json.dumps({"now": T0.isoformat()}),
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        content_type="application/json",
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    summary: dict[str, Any] = response.get_json()
    return summary


@pytest.fixture
def reads(deliver: Any, db: Any, clock: Any, monkeypatch: pytest.MonkeyPatch) -> RpcCounter:
    """`deliver`'s Firestore reads: each push's runtime on a client whose channel counts."""
    counter = RpcCounter()
    instances = itertools.count(1)
    monkeypatch.setattr(
        "targets.deliver.runtime_for",
        lambda s: make_runtime(
            s, CountedClient(db.project, counter), clock, f"deliver-{next(instances)}"
        ),
    )
    return counter


def body_of(pulled: Pulled) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(base64.b64decode(pulled.push["message"]["data"]))
    return decoded


def outcome_lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]


def test_a_ticks_message_is_delivered_without_reading_its_document(
    tick_app, pubsub: Subscription, deliver, reads, db, slack
):
    seed_message(db, "m1")
    assert tick(tick_app)["published"] == 1
    (pulled,) = pubsub.pull()

    assert push(deliver, pulled) == 200

    assert reads.snapshot()["reads_by_collection"].get(MESSAGES, 0) == 0
    assert slack.delivery_ids() == [message_delivery_id("m1", T0)]
    assert [p.text for p in slack.posts()] == ["Stand-up in 5 minutes"]
    assert message(db, "m1")["status"] == "sent"


def test_a_message_older_than_an_edit_posts_nothing_and_the_next_tick_posts_the_edit_once(
    tick_app, pubsub: Subscription, deliver, reads, api, db, slack, capsys
):
    seed_message(db, "m1")
    assert tick(tick_app)["published"] == 1
    (stale,) = pubsub.pull()
    status, _ = call(api, "PUT", "/messages/m1", {"text": "Stand-up moved to 10:00"})
    assert status == 200
    capsys.readouterr()

    assert push(deliver, stale) == 200  # acknowledged: the claim from the old version lost
    pubsub.ack(stale)

    assert slack.posts() == []
    # One read, after the claim lost: only a release for a Retry-After would be waited for.
    assert reads.snapshot()["reads_by_collection"].get(MESSAGES, 0) == 1
    (line,) = [line for line in outcome_lines(capsys) if line.get("message_id") == "m1"]
    assert (line["message"], line["status"]) == (
        "nothing to deliver: not claimable now",
        "duplicate",
    )
    assert message(db, "m1")["status"] == "pending"  # still due
    assert tick(tick_app)["published"] == 1
    (fresh,) = pubsub.pull()
    assert [push(deliver, fresh), push(deliver, fresh)] == [200, 200]  # and redelivered

    assert [p.text for p in slack.posts()] == ["Stand-up moved to 10:00"]
    assert ledger(db)[message_delivery_id("m1", T0)]["status"] == "sent"


def test_a_format_1_message_published_before_a_deploy_is_still_delivered(
    pubsub: Subscription, deliver, settings, db, clock, slack
):
    from core.settings import Settings

    rt = make_runtime(Settings.from_env(), db, clock, "old-tick")
    seed_message(db, "m1")
    assert publish(rt, [DueOccurrence("message", "m1", T0, "C0123ABCD")])["published"] == 1
    (pulled,) = pubsub.pull()
    assert "document" not in body_of(pulled) and body_of(pulled)["format"] == 1

    assert push(deliver, pulled) == 200

    assert slack.delivery_ids() == [message_delivery_id("m1", T0)]
    assert message(db, "m1")["status"] == "sent"


def carrying(pulled: Pulled, **changes: Any) -> Pulled:
    """The message with its body's fields changed (None: removed)."""
    body = {k: v for k, v in (body_of(pulled) | changes).items() if v is not None}
    raw = base64.b64encode(json.dumps(body).encode()).decode()
    return pulled._replace(push={**pulled.push, "message": {**pulled.push["message"], "data": raw}})


def document_blob(db: Any, path: str) -> str:
    """A Document protobuf naming `path` in this test's database (times set)."""
    at = datetime(2027, 1, 4, tzinfo=UTC)
    name = f"{db._database_string}/documents/{path}"
    raw = Document.serialize(Document(name=name, create_time=at, update_time=at))
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize(
    "document",
    [
        None,  # format 2 without its document
        "%%% not base64",
        base64.b64encode(b"\xff\x00 not a protobuf").decode(),
        f"doc:{MESSAGES}/m2",  # another message's snapshot
        f"doc:{ROTATIONS}/m1",  # a document of another kind's collection
        f"doc:{MESSAGES}",  # a collection, not a document
    ],
)
def test_a_message_whose_document_is_unusable_is_acknowledged_naming_the_field(
    tick_app, pubsub: Subscription, deliver, db, slack, capsys, document
):
    seed_message(db, "m1")
    seed_message(db, "m2")
    assert tick(tick_app)["published"] == 2
    (pulled,) = [p for p in pubsub.pull(2) if body_of(p)["subject_id"] == "m1"]
    if isinstance(document, str) and document.startswith("doc:"):
        document = document_blob(db, document.removeprefix("doc:"))
    capsys.readouterr()

    assert push(deliver, carrying(pulled, document=document)) == 200

    (line,) = [line for line in outcome_lines(capsys) if line.get("status") == "malformed"]
    assert (line["severity"], line["field"]) == ("WARNING", "document")
    assert line["pubsub_message_id"] == pulled.message_id
    assert slack.posts() == []
    assert message(db, "m1")["status"] == "pending"  # still due: the next tick publishes it


def test_a_message_for_a_document_deleted_since_the_tick_is_acknowledged(
    tick_app, pubsub: Subscription, deliver, db, slack, capsys
):
    seed_message(db, "m1")
    assert tick(tick_app)["published"] == 1
    (pulled,) = pubsub.pull()
    db.collection(MESSAGES).document("m1").delete()  # by another service, straight
    capsys.readouterr()

    assert push(deliver, pulled) == 200

    assert slack.posts() == []
    (line,) = [line for line in outcome_lines(capsys) if line.get("message_id") == "m1"]
    assert line["message"].startswith("nothing to deliver")
    assert not db.collection(MESSAGES).document("m1").get().exists
    assert ledger(db) == {}


def test_a_carried_message_redelivered_before_its_retry_after_is_handed_back_not_acknowledged(
    tick_app, pubsub: Subscription, deliver, db, slack, clock
):
    """The redelivery of a message whose first delivery met a long Retry-After carries the
    document as it was before that release: its claim loses, and still the message is handed
    back (429), not acknowledged (which would let the channel's later messages go first),
    until the document may be posted again; then it is sent once."""
    slack.inject(Fault(kind="rate_limit", retry_after=120, times=1))
    seed_message(db, "m1")
    assert tick(tick_app)["published"] == 1
    (first,) = pubsub.pull()
    assert push(deliver, first) == 429
    pubsub.nack(first)

    clock.advance(timedelta(seconds=10))  # Pub/Sub's first backoff
    (again,) = pubsub.pull()
    assert again.message_id == first.message_id
    assert push(deliver, again) == 429  # 110 s to go: handed back, not acknowledged
    pubsub.nack(again)
    assert slack.delivery_ids() == []

    clock.advance(timedelta(seconds=80))
    (third,) = pubsub.pull()
    assert third.message_id == first.message_id
    assert push(deliver, third) == 200  # 30 s to go: waited for, then sent

    assert slack.delivery_ids() == [message_delivery_id("m1", T0)]
    assert ledger(db)[message_delivery_id("m1", T0)]["status"] == "sent"
