"""The whole loop without Slack, as `make run` wires it: the seeded example with two buttons
is posted, the stand-in's control endpoint replays a click signed as Slack signs it to the
`interactions` target over HTTP, and the answer is recorded and shown by the next tick."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server

from emulator.run_local import examples, replay_hint, seed
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.interactions import SECRET

CHANNEL = "C0DEMO0001"


@pytest.fixture
def live_interactions(interactions_app: Any, clicks: Any) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, interactions_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.port}/"
    finally:
        server.shutdown()
        thread.join()


def _control(slack: Any, path: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    url = slack.control_url + path  # the stand-in's own http URL
    with urllib.request.urlopen(url, data=data, timeout=30) as answer:  # noqa: S310
        return json.loads(answer.read())


def test_make_runs_example_buttons_answer_a_replayed_click(live_interactions, rt, db, slack):
    actions = examples(T0, CHANNEL)["example-buttons"].to_document()["actions"]
    assert [a["id"] for a in actions] == ["done", "not-yet"]
    seed(db, CHANNEL, T0)
    run_kind(rt, MESSAGE_KIND)
    _control(slack, "interactivity", {"url": live_interactions, "signing_secret": SECRET})

    first = _control(slack, "click", {"action_id": "done", "user": "U0DEMOANA"})
    again = _control(slack, "click", {"action_id": "not-yet", "user": "U0DEMOANA"})

    assert (first, again) == ({"ok": True, "status": 200}, {"ok": True, "status": 200})
    run_pass(rt)  # the next tick shows the answer
    (answer,) = [snap.to_dict() for snap in db.collection("responses").stream()]
    assert (answer["user"], answer["action_id"]) == ("U0DEMOANA", "done")
    (post,) = [p for p in slack.posts() if p.delivery_id == answer["delivery_id"]]
    assert post.blocks[-1]["elements"][0]["text"] == "<@U0DEMOANA> answered *Done*"
    assert [r["text"] for r in _control(slack, "replies")] == ["You already answered: Done"]


def test_a_click_signed_with_another_secret_is_refused(live_interactions, rt, db, slack):
    seed(db, CHANNEL, T0)
    run_kind(rt, MESSAGE_KIND)
    slack.set_interactivity(live_interactions, "not-the-apps-secret")

    assert slack.click("done", "U0DEMOANA") == 401
    assert list(db.collection("responses").stream()) == []


def test_the_run_says_how_to_replay_a_click():
    hint = replay_hint("http://127.0.0.1:8765/_control/", "http://127.0.0.1:8084/")
    assert "curl -X POST http://127.0.0.1:8765/_control/click" in hint
    assert '"action_id": "done"' in hint
