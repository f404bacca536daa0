"""What the people section checks once a run has drained (bench.people): each occurrence
settled exactly once, by the ledger and the stand-in's record together, and the gates'
promises, person by person. Pure functions of what was seeded, the ledger entries and the
posts, so they are tested without a run (tests/bench/test_people_checks.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from bench.metrics import delivery_id
from bench.people_data import PersonMessage
from core.documents.categories import CategoryField
from core.documents.deliveries import LedgerStatus
from emulator.slack_users import dm_id

NO_ENTRY = "none"  # a seeded occurrence with no ledger entry at all


def outcomes(
    seeded: list[PersonMessage],
    entries: Mapping[str, Mapping[str, Any]],
    posts: list[dict[str, Any]],
) -> dict[str, Any]:
    """Sent and skipped by reason (the ledger), and each occurrence exactly once: every
    entry `sent` xor `skipped`, one post for each sent entry, none for a skipped one, none
    that no seeded occurrence names, and each post in its person's DM."""
    by_id = {row.delivery_id: row for row in seeded}
    per_id = Counter(delivery_id(post) for post in posts)
    statuses: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    lost = skipped_but_posted = 0
    for ident in by_id:
        entry = entries.get(ident) or {}
        status = str(entry.get("status", NO_ENTRY))
        statuses[status] += 1
        if status == LedgerStatus.SKIPPED:
            reasons[str(entry.get("reason"))] += 1
            skipped_but_posted += per_id[ident]
        elif status != LedgerStatus.SENT or per_id[ident] == 0:
            lost += 1  # neither settled, or sent with nothing in the record
    duplicates = sum(n - 1 for i, n in per_id.items() if i in by_id and n > 1)
    duplicates += sum(n for i, n in per_id.items() if i not in by_id)
    wrong_channel = sum(
        1
        for post in posts
        if (row := by_id.get(delivery_id(post))) and post.get("channel") != dm_id(row.user)
    )
    return {
        "occurrences": len(by_id),
        "sent": statuses[LedgerStatus.SENT],
        "skipped": sum(reasons.values()),
        "skipped_by_reason": dict(sorted(reasons.items())),
        "other_statuses": {
            s: n for s, n in statuses.items() if s not in (LedgerStatus.SENT, LedgerStatus.SKIPPED)
        },
        "posts": len(posts),
        "duplicates": duplicates,
        "lost": lost,
        "skipped_but_posted": skipped_but_posted,
        "wrong_channel": wrong_channel,
        "exactly_once": duplicates == lost == skipped_but_posted == wrong_channel == 0,
    }


def invariants(
    seeded: list[PersonMessage],
    posts: list[dict[str, Any]],
    categories: Mapping[str, Mapping[str, Any]],
    opted: Mapping[str, list[str]],
    earlier: Mapping[tuple[str, str], int],
) -> dict[str, Any]:
    """The gates' promises, counted from what reached the stand-in: no post of a category to
    a person who opted out of it (where opting out is allowed); at most one post of the
    quiet-window categories per person (the run is shorter than any window); no person's
    daily cap of a category exceeded, counting `earlier` sends of the same day."""
    by_id = {row.delivery_id: row for row in seeded}
    sent = Counter(
        (row.user, row.category)
        for post in posts
        if (row := by_id.get(delivery_id(post))) is not None and row.category is not None
    )
    opted_out_sent = sum(
        n
        for (user, category), n in sent.items()
        if category in opted.get(user, [])
        and categories[category].get(CategoryField.OPT_OUT_ALLOWED) is not False
    )
    quiet = {c for c, f in categories.items() if (f.get(CategoryField.QUIET_WINDOW_HOURS) or 0) > 0}
    quiet_sends: Counter[str] = Counter()
    for (user, category), n in sent.items():
        if category in quiet:
            quiet_sends[user] += n
    cap_field = CategoryField.DAILY_CAP
    caps = {c: f[cap_field] for c, f in categories.items() if cap_field in f}
    counted = Counter(earlier) + Counter({k: n for k, n in sent.items() if k[1] in caps})
    over_cap = sorted(f"{u}/{c}: {n}" for (u, c), n in counted.items() if c in caps and n > caps[c])
    over_window = sorted(f"{u}: {n}" for u, n in quiet_sends.items() if n > 1)
    return {
        "opted_out_sent": opted_out_sent,
        "quiet_window_persons_over_one": len(over_window),
        "caps_exceeded": len(over_cap),
        "examples": (over_window + over_cap)[:10],
        "hold": opted_out_sent == 0 and not over_window and not over_cap,
    }


def expected_reasons(
    seeded: list[PersonMessage],
    categories: Mapping[str, Mapping[str, Any]],
    opted: Mapping[str, list[str]],
    earlier: Mapping[tuple[str, str], int],
) -> dict[str, int]:
    """The skips by reason the gates should come to on this data, in their order (opted out,
    quiet window, daily cap), playing each person's sends forward: what a run's counts are
    compared with (which of a person's two nudges is the one sent does not matter here)."""
    reasons: Counter[str] = Counter()
    quiet_open: set[str] = set()
    counted = Counter(earlier)
    for row in seeded:
        if row.category is None:
            continue
        fields = categories[row.category]
        may_opt_out = fields.get(CategoryField.OPT_OUT_ALLOWED) is not False
        quiet = (fields.get(CategoryField.QUIET_WINDOW_HOURS) or 0) > 0
        cap = fields.get(CategoryField.DAILY_CAP)
        key = (row.user, row.category)
        if may_opt_out and row.category in opted.get(row.user, []):
            reasons["opted_out"] += 1
        elif quiet and row.user in quiet_open:
            reasons["quiet_window"] += 1
        elif cap is not None and counted[key] >= cap:
            reasons["daily_cap"] += 1
        else:
            quiet_open |= {row.user} if quiet else set()
            counted[key] += 1
    return dict(sorted(reasons.items()))
