"""The people section's checks (bench.people_checks): what makes a run's "exactly once" and
its gates' invariants fail, on ledger entries and stand-in posts built by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bench.people_checks import expected_reasons, invariants, outcomes
from bench.people_data import CATEGORY_FIELDS, DIGEST, NUDGE, REMINDER, messages_for, user_of
from emulator.slack_users import dm_id

DUE = datetime(2026, 12, 2, 9, tzinfo=UTC)
# Person 0 opts out of nudges and has a second nudge; person 1 has three messages.
ROWS = messages_for(2, "p-", DUE)
P0, P1 = user_of(0), user_of(1)
OPTED = {P0: [NUDGE]}


def post(row: Any, channel: str | None = None) -> dict[str, Any]:
    return {
        "channel": channel or dm_id(row.user),
        "received_at": DUE.timestamp() + 1,
        "metadata": {"event_payload": {"delivery_id": row.delivery_id}},
    }


def sent(row: Any) -> dict[str, Any]:
    return {"status": "sent"}


def skipped(reason: str) -> dict[str, Any]:
    return {"status": "skipped", "reason": reason}


def rows(user: str, category: str) -> list[Any]:
    return [r for r in ROWS if r.user == user and r.category == category]


def clean_run() -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Person 0: both nudges opted out, digest and reminder sent; person 1 all sent."""
    entries = {r.delivery_id: skipped("opted_out") for r in rows(P0, NUDGE)}
    delivered = [*rows(P0, DIGEST), *rows(P0, REMINDER), *(r for r in ROWS if r.user == P1)]
    entries |= {r.delivery_id: sent(r) for r in delivered}
    return entries, [post(r) for r in delivered]


def test_a_clean_run_is_exactly_once_and_its_counts_are_the_ledgers() -> None:
    entries, posts = clean_run()
    result = outcomes(ROWS, entries, posts)
    assert result["exactly_once"]
    assert (result["sent"], result["skipped_by_reason"]) == (5, {"opted_out": 2})
    assert invariants(ROWS, posts, CATEGORY_FIELDS, OPTED, {})["hold"]


def test_a_second_post_a_post_nobody_seeded_and_a_post_outside_the_dm_are_counted() -> None:
    entries, posts = clean_run()
    stranger = {**posts[0], "metadata": {"event_payload": {"delivery_id": "m:other"}}}
    posts += [posts[0], stranger, post(rows(P1, DIGEST)[0], channel="C0OTHER")]
    result = outcomes(ROWS, entries, posts)
    assert (result["duplicates"], result["wrong_channel"]) == (3, 1)
    assert not result["exactly_once"]


def test_a_send_without_its_post_an_unsettled_entry_and_a_posted_skip_are_not_once() -> None:
    entries, posts = clean_run()
    reminder = rows(P1, REMINDER)[0]
    posts = [
        p for p in posts if p["metadata"]["event_payload"]["delivery_id"] != reminder.delivery_id
    ]
    entries[rows(P1, DIGEST)[0].delivery_id] = {"status": "claimed"}
    del entries[rows(P1, NUDGE)[0].delivery_id]
    posts.append(post(rows(P0, NUDGE)[0]))
    result = outcomes(ROWS, entries, posts)
    assert (result["lost"], result["skipped_but_posted"]) == (3, 1)
    assert result["other_statuses"] == {"claimed": 1, "none": 1}
    assert not result["exactly_once"]


def test_each_broken_promise_of_the_gates_is_counted() -> None:
    _, posts = clean_run()
    posts += [post(r) for r in rows(P0, NUDGE)]  # opted out, and two in the quiet window
    checked = invariants(ROWS, posts, CATEGORY_FIELDS, OPTED, {(P1, DIGEST): 1})
    assert checked["opted_out_sent"] == 2
    assert checked["quiet_window_persons_over_one"] == 1
    assert checked["caps_exceeded"] == 1  # person 1's digest beside the earlier one
    assert not checked["hold"]


def test_a_must_read_category_sent_to_someone_who_listed_it_breaks_nothing() -> None:
    _, posts = clean_run()
    checked = invariants(ROWS, posts, CATEGORY_FIELDS, {P0: [NUDGE, REMINDER]}, {})
    assert checked["hold"]


def test_the_expected_skips_play_each_persons_gates_forward_in_order() -> None:
    # Person 0: two nudges opted out (the first gate wins over the quiet window); person 1:
    # three messages, nothing held; person 2 (second nudge): the quiet window; person 3:
    # the digest cap reached earlier.
    four = messages_for(4, "p-", DUE)
    earlier = {(user_of(3), DIGEST): 1}
    assert expected_reasons(four, CATEGORY_FIELDS, OPTED, earlier) == {
        "daily_cap": 1,
        "opted_out": 2,
        "quiet_window": 1,
    }
