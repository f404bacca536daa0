"""Buttons from a catalog: a message's `actions` are validated by the API (422 naming the
field), shown by the preview, and posted as one Block Kit actions block whose buttons carry
compact JSON naming the delivery and the action only."""

from __future__ import annotations

import json
from typing import Any

from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call, fields_of
from tests.fixtures.clock import T0
from tests.fixtures.messages import ONE_OFF

ACTIONS = [
    {"id": "done", "label": "Done", "style": "primary"},
    {"id": "not-yet", "label": "Not yet"},
]
WITH_BUTTONS = ONE_OFF | {"send_at": T0.isoformat(), "actions": ACTIONS}


def _buttons(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    actions = [block for block in blocks if block["type"] == "actions"]
    assert len(actions) == 1 and blocks[-1] is actions[0]
    return list(actions[0]["elements"])


def test_a_message_with_actions_is_posted_with_one_button_per_action(api, rt, db, slack):
    status, created = call(api, "POST", "/messages", WITH_BUTTONS)
    assert status == 201, created
    assert created["actions"] == ACTIONS

    run_kind(rt, MESSAGE_KIND)

    (post,) = slack.posts()
    buttons = _buttons(post.blocks)
    assert [b["action_id"] for b in buttons] == ["done", "not-yet"]
    assert [b["text"]["text"] for b in buttons] == ["Done", "Not yet"]
    assert [b.get("style") for b in buttons] == ["primary", None]
    assert [b["value"] for b in buttons] == [
        json.dumps({"delivery": post.delivery_id, "action": a["id"]}, separators=(",", ":"))
        for a in ACTIONS
    ]
    assert post.blocks[0]["type"] == "section" and "Deploy at noon" in post.text


def test_the_preview_shows_the_buttons(api):
    status, preview = call(api, "POST", "/preview", WITH_BUTTONS)

    assert status == 200, preview
    assert [b["text"]["text"] for b in _buttons(preview["blocks"])] == ["Done", "Not yet"]


def test_bad_actions_are_422_naming_the_field_and_store_nothing(api, db):
    six = [{"id": f"a{i}", "label": f"A{i}"} for i in range(6)]
    cases = {
        "actions": [],
        "actions.5": None,
        "actions.0.label": [{"id": "x", "label": "L" * 76}],
        "actions.0.id": [{"id": "x" * 65, "label": "ok"}],
        "actions.0.style": [{"id": "x", "label": "ok", "style": "loud"}],
    }
    for field, actions in cases.items():
        body = WITH_BUTTONS | {"actions": six if actions is None else actions}
        status, answer = call(api, "POST", "/messages", body)
        assert status == 422, (field, answer)
        assert fields_of(answer) in (["actions"], [field]), (field, answer)
    duplicate = [{"id": "x", "label": "One"}, {"id": "x", "label": "Two"}]
    status, answer = call(api, "POST", "/messages", WITH_BUTTONS | {"actions": duplicate})
    assert status == 422 and fields_of(answer) == ["actions"]
    assert "'x'" in answer["details"][0]["message"]
    assert list(db.collection("scheduled_messages").stream()) == []
