"""A claim's `lease` on its subject (a message, an event, a rotation), stored as a map in
the subject's `lease` field: who holds the occurrence's send and until when, and which
occurrence it is."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.documents.write import UNSET, Delete, Unset, Write
from core.errors import DocumentError

LEASE = "lease"  # the subject's field that holds it


class LeaseField(enum.StrEnum):
    OWNER = "owner"
    EXPIRES_AT = "expires_at"
    OCCURRENCE_AT = "occurrence_at"  # a message's occurrence
    OCCURRENCE_DATE = "occurrence_date"  # a rotation's local day
    MEMBER = "member"  # whose turn that day is
    HELD_SINCE = "held_since"  # held for a person (processor.held)
    HELD_CODE = "held_code"

    @property
    def path(self) -> str:
        """The field's path from its subject, for queries and orderings: `lease.expires_at`."""
        return f"{LEASE}.{self.value}"


@dataclass(frozen=True)
class Lease:
    """A lease as a claim writes it (the whole map): a message's names `occurrence_at`, a
    rotation day's its `occurrence_date` and `member`."""

    owner: str | None
    expires_at: datetime | None
    occurrence_at: datetime | None = None
    occurrence_date: str | None = None
    member: str | None = None

    def to_document(self) -> dict[str, Any]:
        if self.occurrence_date is None:
            occurrence: dict[str, Any] = {LeaseField.OCCURRENCE_AT.value: self.occurrence_at}
        else:
            occurrence = {
                LeaseField.OCCURRENCE_DATE.value: self.occurrence_date,
                LeaseField.MEMBER.value: self.member,
            }
        return {
            LeaseField.OWNER.value: self.owner,
            LeaseField.EXPIRES_AT.value: self.expires_at,
            **occurrence,
        }


@dataclass(frozen=True, kw_only=True)
class LeasePatch(Write):
    """Some fields of a stored lease, the others kept (written as `lease.<field>` paths)."""

    owner: str | Unset = UNSET
    expires_at: datetime | Unset = UNSET
    held_since: datetime | Delete | Unset = UNSET
    held_code: str | Delete | Unset = UNSET


def lease_of(data: dict[str, Any]) -> dict[str, Any]:
    """A stored subject's lease map; empty when it has none (or one that is not a map)."""
    lease = data.get(LEASE)
    return lease if isinstance(lease, dict) else {}


def usable_lease(lease: object) -> bool:
    """Whether a stored `lease` is one a pass can settle: a map with a timestamp
    `expires_at`, as every lease this product writes is."""
    return isinstance(lease, dict) and isinstance(lease.get(LeaseField.EXPIRES_AT), datetime)


def invalid_lease(lease: object) -> DocumentError:
    return DocumentError(
        "invalid_lease",
        f"lease {lease!r} is not a map with a timestamp expires_at; no worker holds it",
    )


def check_lease(lease: object) -> None:
    """DocumentError `invalid_lease` when a stored `lease` is there (not empty) but not
    usable: written by hand, it holds no claim, and no pass would ever settle it."""
    if lease and not usable_lease(lease):
        raise invalid_lease(lease)
