"""The error catalog (core.error_help): every code the product stores has words a team lead
can act on, found in the product's own tables and sources (not a hand list), and each kind
of row reads as the catalog promises."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from core.documents.deliveries import LedgerReason
from core.error_help import ErrorHelp, catalog, help_for
from core.slack import OUTCOMES
from core.teams_outcomes import RATELIMITED, ROWS
from messages.claim import EXPIRED
from processor.dead_letter import DEAD_LETTERED
from processor.fail_held import OPERATOR_FAILED
from processor.gates import ALREADY_SENT

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("core", "processor", "messages", "rotations", "events", "interactions", "composer")
# Calls whose argument at this position (or keyword `code`) is a stored error code.
CODE_ARGUMENT = {"DocumentError": 0, "StoredError": 0, "PostResult": 1, "_unsent": 4}


def _literal_codes(node: ast.expr | None) -> set[str]:
    """The string constants a code argument can be (`opened.code or "dm_not_opened"`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.BoolOp):
        return set().union(*(_literal_codes(value) for value in node.values))
    return set()


def _source_codes() -> set[str]:
    codes: set[str] = set()
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.Call):
                    continue
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                position = CODE_ARGUMENT.get(str(name))
                if position is not None and len(node.args) > position:
                    codes |= _literal_codes(node.args[position])
                codes |= {
                    c for k in node.keywords if k.arg == "code" for c in _literal_codes(k.value)
                }
    return codes


def stored_codes() -> set[str]:
    tables = set(OUTCOMES) | {row.code for row in ROWS if row.code} | {RATELIMITED}
    tables |= {str(reason) for reason in LedgerReason}
    tables |= {EXPIRED, DEAD_LETTERED, OPERATOR_FAILED, ALREADY_SENT}
    return tables | _source_codes()


def is_generic(code: str) -> bool:
    return help_for(code).title == f"It failed ({code})"


def test_the_sources_name_codes_of_every_family() -> None:
    # The scan finds what it is meant to: a DocumentError, a PostResult and a fallback code.
    found = _source_codes()
    assert {"invalid_rrule", "empty_text", "connection_refused", "dm_not_opened"} <= found


def test_every_stored_code_has_words_of_its_own() -> None:
    codes = stored_codes()
    assert len(codes) > 60
    assert sorted(code for code in codes if is_generic(code)) == []
    for code in codes:
        entry = help_for(code)
        assert entry.title and entry.action.endswith("."), code


def test_a_table_row_names_the_channel_it_is_given() -> None:
    entry = help_for("not_in_channel").filled("#general")
    assert entry == ErrorHelp(
        "The app is not in #general", "Invite the app: /invite @Scheduler in #general, then Retry."
    )


def test_what_heals_by_itself_says_nothing_is_to_be_done() -> None:
    assert help_for("ratelimited").action.startswith("Nothing to do")
    assert "never posts twice" in help_for("internal_error").action


def test_an_invalid_field_names_the_field() -> None:
    assert help_for("invalid_misfire_grace_seconds").title == (
        "The misfire grace seconds is not valid"
    )
    assert help_for("invalid_rrule").action.startswith("Edit the message")


@pytest.mark.parametrize(
    ("code", "title"),
    [
        ("http_503", "The chat service failed while posting (HTTP 503)"),
        ("http_403", "The chat service refused the post (HTTP 403)"),
    ],
)
def test_an_http_status_says_whether_it_may_have_posted(code: str, title: str) -> None:
    assert help_for(code).title == title


def test_an_unknown_code_still_says_where_to_look() -> None:
    assert help_for("made_up") == ErrorHelp(
        "It failed (made_up)",
        "The error's message says why; Retry once it is fixed, or tell your operator.",
    )
    assert help_for(None).title == "It failed for an unknown reason"


def test_the_catalog_lists_its_exact_codes() -> None:
    assert catalog()["not_in_channel"] == help_for("not_in_channel")


def test_the_operations_page_lists_the_catalog_as_it_is() -> None:
    page = (ROOT / "docs" / "operations.md").read_text()
    for code, entry in catalog().items():
        assert f"| `{code}` | {entry.title} | {entry.action} |" in page, code
