"""Which Graph message proves a delivery: only our bot's post whose card is wrapped in the
delivery id's Container. Pure: the same through Graph's pages at the stand-in is in
test_transport.py."""

from __future__ import annotations

import json
from typing import Any

from core.teams_graph import proves

APP_ID = "00000000-0000-0000-0000-0000000a11ce"
CARD = "application/vnd.microsoft.card.adaptive"


def card(delivery_id: str) -> dict[str, Any]:
    return {
        "type": "AdaptiveCard",
        "version": "1.5",
        "body": [
            {"type": "Container", "id": delivery_id, "items": [{"type": "TextBlock", "text": "x"}]}
        ],
    }


def graph_message(
    sender: dict[str, Any], content: Any, body: str = "<attachment></attachment>"
) -> dict[str, Any]:
    return {
        "id": "1764752400000",
        "messageType": "message",
        "createdDateTime": "2026-12-03T09:00:00.000Z",
        "from": sender,
        "body": {"contentType": "html", "content": body},
        "attachments": [{"id": "a1", "contentType": CARD, "content": content}],
    }


BOT = {"application": {"id": APP_ID, "displayName": "scheduler-bot"}, "user": None}


def test_our_bots_card_wrapped_in_the_delivery_id_proves_it():
    message = graph_message(BOT, json.dumps(card("d1")))
    assert proves(APP_ID, message, "d1") == "1764752400000"


def test_another_delivery_id_proves_nothing():
    assert proves(APP_ID, graph_message(BOT, json.dumps(card("d2"))), "d1") is None


def test_another_apps_card_carrying_the_id_is_not_proof():
    other = {"application": {"id": "11111111-2222-3333-4444-555555555555"}, "user": None}
    assert proves(APP_ID, graph_message(other, json.dumps(card("d1"))), "d1") is None


def test_a_person_quoting_the_delivery_id_is_not_proof():
    person = {"application": None, "user": {"id": "8ea0e38b", "displayName": "Robin"}}
    message = graph_message(person, json.dumps(card("d1")), body="the card said d1")
    assert proves(APP_ID, message, "d1") is None


def test_a_card_given_as_an_object_counts_too():
    assert proves(APP_ID, graph_message(BOT, card("d1")), "d1") == "1764752400000"


def test_an_attachment_that_is_not_json_proves_nothing():
    assert proves(APP_ID, graph_message(BOT, "{not json"), "d1") is None
