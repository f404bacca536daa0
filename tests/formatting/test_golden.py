"""Markdown → Slack mrkdwn, pinned by input → expected pairs in data/formatting_golden.json.

Each case is what a person types and exactly what Slack receives; the file covers every
construct the converter knows and the cases other converters get wrong (nested lists,
multi-line quotes, tables, `**Status:**OK`, escaping, broadcasts, bare `@user`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from formatting.slack_text import RENDER_VERSION, to_slack

GOLDEN = json.loads(
    (Path(__file__).parent / "data" / "formatting_golden.json").read_text(encoding="utf-8")
)


def test_the_golden_file_is_large_enough_and_names_are_unique():
    names = [case["name"] for case in GOLDEN]
    assert len(names) >= 80
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("case", GOLDEN, ids=[case["name"] for case in GOLDEN])
def test_markdown_becomes_the_expected_mrkdwn(case):
    message = to_slack(case["markdown"], allow_broadcast=case.get("allow_broadcast", False))
    assert message.text == case["mrkdwn"]
    # A short message is one section holding exactly the fallback text.
    assert message.blocks == [
        {"type": "section", "text": {"type": "mrkdwn", "text": case["mrkdwn"]}}
    ]


# The golden file each RENDER_VERSION renders exactly: a change of the converter's output
# changes the golden file, and so fails here until RENDER_VERSION is bumped with it (a
# rotation day's post pins the version; interactions.show relies on it). A case added that
# the current version already renders so updates the current version's digest instead.
GOLDEN_BY_VERSION = {1: "12fd5929c53c7ed9796acf3ae5839dc9f2f0f53c68aa1a354ed1281a04e33bf9"}


def test_the_render_version_names_the_golden_file_it_renders():
    digest = hashlib.sha256(
        (Path(__file__).parent / "data" / "formatting_golden.json").read_bytes()
    ).hexdigest()
    assert GOLDEN_BY_VERSION.get(RENDER_VERSION) == digest
