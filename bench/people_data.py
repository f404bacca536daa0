"""The people section's data (bench.people): who the people are, their three categories,
who opted out of what, whose daily cap an earlier round fills, and the messages due to them
at one instant. Deterministic, so the checks (bench.people_checks) know what each person's
messages should come to without reading anything back."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.cloud import firestore

from core.documents.categories import CategoryField
from core.documents.messages import MessageWrite, Status
from core.documents.write import UNSET
from core.models import message_delivery_id
from core.store import CATEGORIES, MESSAGES

BATCH = 500  # Firestore's limit of writes per commit

NUDGE, DIGEST, REMINDER = "nudge", "digest", "reminder"
# The categories as an operator writes them: a nudge opens a 4-hour quiet window, a digest is
# capped at one a day, a reminder is exempt from the window both ways and cannot be opted out.
CATEGORY_FIELDS: dict[str, dict[str, Any]] = {
    NUDGE: {CategoryField.QUIET_WINDOW_HOURS: 4, CategoryField.OPT_OUT_ALLOWED: True},
    DIGEST: {
        CategoryField.QUIET_WINDOW_HOURS: 0,
        CategoryField.DAILY_CAP: 1,
        CategoryField.OPT_OUT_ALLOWED: True,
    },
    REMINDER: {CategoryField.QUIET_WINDOW_HOURS: 0, CategoryField.OPT_OUT_ALLOWED: False},
}


def user_of(n: int) -> str:
    """Person n's Slack user id: one the stand-in knows (any id never set is an active user)."""
    return f"UPPL{n:06d}"


def opted_out(n: int) -> list[str]:
    """What person n opted out of: every fifth person, nudges (20%)."""
    return [NUDGE] if n % 5 == 0 else []


def capped(n: int) -> bool:
    """Whether an earlier round sends person n their one digest of the day (10%)."""
    return n % 10 == 3


def categories_of(n: int) -> list[str]:
    """Person n's messages due at the instant, in their lane's order: one of each category
    and, for every other person, a second nudge (3 or 4 messages each)."""
    return [NUDGE, DIGEST, REMINDER, *([NUDGE] if n % 2 == 0 else [])]


@dataclass(frozen=True)
class PersonMessage:
    """One seeded one-off to a person; `category` None in the run without gates."""

    doc_id: str
    user: str
    category: str | None
    due: datetime

    @property
    def delivery_id(self) -> str:
        return message_delivery_id(self.doc_id, self.due)


def seed_categories(db: firestore.Client) -> None:
    batch = db.batch()
    for ident, fields in CATEGORY_FIELDS.items():
        batch.set(db.collection(CATEGORIES).document(ident), {"label": ident.title(), **fields})
    batch.commit()


def messages_for(
    people: int, prefix: str, due: datetime, *, gated: bool = True
) -> list[PersonMessage]:
    """Every person's messages due at `due`; a person's ids are adjacent (the due query's
    order at one instant is the documents' names), so a page holds them together."""
    return [
        PersonMessage(f"{prefix}{user_of(n)}-{k}", user_of(n), category if gated else None, due)
        for n in range(people)
        for k, category in enumerate(categories_of(n))
    ]


def earlier_digests(people: int, prefix: str, due: datetime) -> list[PersonMessage]:
    """The earlier round's digests: one to each capped person, due at the same instant (the
    same local day, whatever the hour)."""
    return [
        PersonMessage(f"{prefix}{user_of(n)}", user_of(n), DIGEST, due)
        for n in range(people)
        if capped(n)
    ]


def seed(db: firestore.Client, rows: list[PersonMessage]) -> None:
    """The messages as another service writes them: waiting one-offs to a person (`user`,
    no channel), in batches of 500 committed four at a time."""

    def commit(chunk: list[PersonMessage]) -> None:
        batch = db.batch()
        for row in chunk:
            data = MessageWrite(
                user=row.user,
                category=UNSET if row.category is None else row.category,
                text=f"**Benchmark** {row.category or 'plain'} message to {row.user}",
                timezone="UTC",
                send_at=row.due,
                next_run_at=row.due,
                status=Status.PENDING,
                version=1,
            ).to_document()
            batch.set(db.collection(MESSAGES).document(row.doc_id), data)
        batch.commit()

    chunks = [rows[i : i + BATCH] for i in range(0, len(rows), BATCH)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(commit, chunks))
