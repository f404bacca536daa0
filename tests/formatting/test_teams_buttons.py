"""A message's actions as Action.Execute buttons, and the card after people answer."""

from __future__ import annotations

import pytest

from core.actions import Action, parse_button_value
from core.errors import DocumentError
from formatting.teams_buttons import MAX_ANSWER_LINES, teams_answered, with_teams_actions
from formatting.teams_card import to_teams

WJ = "\u2060"
ACTIONS = (
    Action("yes", "Yes", "primary"),
    Action("no", "No *way*", "danger"),
    Action("later", "Later"),
)


def test_each_action_is_an_execute_button_naming_the_delivery_and_the_action():
    message = with_teams_actions(to_teams("Ship it?"), "m:ship:1", ACTIONS)
    assert message.card["actions"] == [
        {
            "type": "Action.Execute",
            "title": "Yes",
            "verb": "yes",
            "style": "positive",
            "data": {"value": '{"delivery":"m:ship:1","action":"yes"}'},
        },
        {
            "type": "Action.Execute",
            "title": "No *way*",  # a button title is plain text, shown as typed
            "verb": "no",
            "style": "destructive",
            "data": {"value": '{"delivery":"m:ship:1","action":"no"}'},
        },
        {
            "type": "Action.Execute",
            "title": "Later",
            "verb": "later",
            "data": {"value": '{"delivery":"m:ship:1","action":"later"}'},
        },
    ]
    values = [parse_button_value(button["data"]["value"]) for button in message.card["actions"]]
    assert values == [("m:ship:1", "yes"), ("m:ship:1", "no"), ("m:ship:1", "later")]
    assert message.card["body"] == to_teams("Ship it?").card["body"]


def test_no_actions_leave_the_message_as_it_was():
    message = to_teams("hi")
    assert with_teams_actions(message, "m:x:1", ()) is message


def test_buttons_that_would_pass_the_size_limit_are_refused():
    near_limit = to_teams("\n\n".join("p " + "x" * 998 for _ in range(23)))  # 94 KB
    assert with_teams_actions(near_limit, "m:x:1", ACTIONS).card["actions"]
    with pytest.raises(DocumentError) as error:
        with_teams_actions(near_limit, "m:x:1", ACTIONS * 5)
    assert error.value.code == "message_too_long"


def test_answers_are_shown_by_mention_with_the_buttons_kept_while_open():
    message = to_teams("Ship it?")
    shown = teams_answered(
        message,
        "m:ship:1",
        ACTIONS,
        [(("29:1ann", "Ann"), ACTIONS[0]), ("29:2bob", ACTIONS[1])],
        closed=False,
    )
    assert len(shown.card["actions"]) == 3
    assert shown.card["body"][:-1] == message.card["body"]
    assert shown.card["body"][-1] == {
        "type": "TextBlock",
        "text": "<at>Ann</at> answered **Yes**\n\n<at>29:2bob</at> answered **No \\*way\\***",
        "wrap": True,
        "isSubtle": True,
        "separator": True,
    }
    assert shown.mentions == [
        {"type": "mention", "text": "<at>Ann</at>", "mentioned": {"id": "29:1ann", "name": "Ann"}},
        {
            "type": "mention",
            "text": "<at>29:2bob</at>",
            "mentioned": {"id": "29:2bob", "name": "29:2bob"},
        },
    ]
    assert shown.card["msteams"] == {"entities": shown.mentions}


def test_a_closed_card_has_no_buttons_and_keeps_the_message_mentions():
    message = to_teams("<@29:9lead|Lead> asks: ship it?")
    shown = teams_answered(
        message, "m:ship:1", ACTIONS, [(("29:1ann", "Ann"), ACTIONS[0])], closed=True
    )
    assert "actions" not in shown.card
    assert [entity["mentioned"]["id"] for entity in shown.mentions] == ["29:9lead", "29:1ann"]
    assert shown.card["msteams"]["entities"] == shown.mentions


def test_labels_and_names_cannot_inject_a_tag_a_mention_or_a_broadcast():
    evil = Action("x", "<at>Boss</at> @channel")
    shown = teams_answered(
        to_teams("Q?"), "m:q:1", (evil,), [(("29:1ann", "<at>Ann</at>"), evil)], closed=True
    )
    line = shown.card["body"][-1]["text"]
    assert line == f"<at>at Ann /at</at> answered **<{WJ}at>Boss<{WJ}/at> @{WJ}channel**"
    assert [entity["text"] for entity in shown.mentions] == ["<at>at Ann /at</at>"]


def test_many_answers_are_counted_past_the_lines_shown():
    answers = [(f"29:u{n}", ACTIONS[0]) for n in range(MAX_ANSWER_LINES + 7)]
    shown = teams_answered(to_teams("Q?"), "m:q:1", ACTIONS, answers, closed=False)
    lines = shown.card["body"][-1]["text"].split("\n\n")
    assert len(lines) == MAX_ANSWER_LINES + 1
    assert lines[-1] == "and 7 more"


def test_no_answers_yet_is_the_card_with_its_buttons():
    message = to_teams("Q?")
    assert teams_answered(message, "m:q:1", ACTIONS, [], closed=False) == with_teams_actions(
        message, "m:q:1", ACTIONS
    )
