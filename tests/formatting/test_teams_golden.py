"""Markdown → the Teams card, pinned by input → expected pairs in data/teams_golden.json.

The inputs are Slack's golden inputs (every construct the converter knows and the cases
other converters get wrong) plus Teams' own: mentions in every place, typed `<at>` tags,
HTML, `@team`, literal markup characters. Each case holds exactly the card body, the
plain-text fallback and the mention entities Teams receives."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from formatting.teams_card import TEAMS_RENDER_VERSION, to_teams

DATA = Path(__file__).parent / "data"
GOLDEN = json.loads((DATA / "teams_golden.json").read_text(encoding="utf-8"))
SLACK_GOLDEN = json.loads((DATA / "formatting_golden.json").read_text(encoding="utf-8"))


def test_the_golden_file_covers_every_slack_case_and_names_are_unique():
    names = [case["name"] for case in GOLDEN]
    assert len(set(names)) == len(names)
    markdown = {case["markdown"] for case in GOLDEN}
    assert {case["markdown"] for case in SLACK_GOLDEN} <= markdown
    assert len(GOLDEN) >= len(SLACK_GOLDEN) + 20


@pytest.mark.parametrize("case", GOLDEN, ids=[case["name"] for case in GOLDEN])
def test_markdown_becomes_the_expected_card(case):
    message = to_teams(case["markdown"], allow_broadcast=case.get("allow_broadcast", False))
    assert message.card["body"] == case["body"]
    assert message.text == case["text"]
    assert message.mentions == case.get("mentions", [])


# The golden file each TEAMS_RENDER_VERSION renders exactly: a change of the renderer's
# output changes the golden file, and so fails here until TEAMS_RENDER_VERSION is bumped
# with it (as RENDER_VERSION for Slack: a rotation day's post pins the version that
# rendered it). A case added that the current version already renders so updates the
# current version's digest instead.
GOLDEN_BY_VERSION = {2: "dcb52931fd0bdf34116d53d40b8be01787b05b5af238c35f40ae2e874889beae"}


def test_the_render_version_names_the_golden_file_it_renders():
    digest = hashlib.sha256((DATA / "teams_golden.json").read_bytes()).hexdigest()
    assert GOLDEN_BY_VERSION.get(TEAMS_RENDER_VERSION) == digest
