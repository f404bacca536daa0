"""What every subject a kind sends (a message, an event, a rotation) stores alike: when it is next
due, its lease while an occurrence is claimed, its last error, its policy for a send that
cannot be verified, and the stamps of every write. The processor reads and writes these
without knowing the kind."""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Self

from core.documents.errors import StoredError
from core.documents.leases import LEASE, Lease, LeasePatch
from core.documents.write import INCREMENT, UNSET, Add, Delete, Unset, Write


class SubjectField(enum.StrEnum):
    STATUS = "status"  # the collection's own status enum
    NEXT_RUN_AT = "next_run_at"  # when the due query finds it
    CHANNEL = "channel"  # where it posts: the due query's channel ranges go by it
    USER = "user"  # the person it posts to (their DM), where it has one
    # Instead of either: a `teams_conversations` id, posted to on Microsoft Teams.
    TEAMS_CONVERSATION = "teams_conversation"
    CATEGORY = "category"  # what a send to a person is, for their gates (processor.gates)
    SHARD = "shard"  # which of the due scan's shards finds it (core.shards)
    LEASE = LEASE
    LAST_ERROR = "last_error"
    DELETED = "deleted"  # soft-deleted by its writer: never sent (a message's)
    ON_AMBIGUOUS = "on_ambiguous"  # "hold" (default) or "retry" (processor.reconcile)
    UPDATED_AT = "updated_at"
    # Who made the record and who last changed it through the API or from Slack (`admin`,
    # an email, or a Slack user id); absent on documents written straight to Firestore.
    CREATED_BY = "created_by"
    UPDATED_BY = "updated_by"
    VERSION = "version"


def shown_destination(data: dict[str, Any]) -> dict[str, Any]:
    """Where a dry run's preview says a stored subject posts: its `channel` (null for a
    person's, whose DM a dry run never opens, and for a Teams one), and its
    `teams_conversation` when it names one."""
    shown = {SubjectField.CHANNEL.value: data.get(SubjectField.CHANNEL)}
    conversation = data.get(SubjectField.TEAMS_CONVERSATION)
    if conversation is not None:
        shown[SubjectField.TEAMS_CONVERSATION.value] = conversation
    return shown


@dataclass(frozen=True, kw_only=True)
class SubjectWrite(Write):
    """Some of a subject's fields; every write of a subject is `stamped`: when, and a
    `version` one higher."""

    status: enum.StrEnum | Unset = UNSET  # narrowed to its enum by each collection's write
    next_run_at: datetime | Unset | None = UNSET  # None: a rotation with no turn day ahead
    shard: int | Unset = UNSET
    lease: Lease | LeasePatch | Delete | Unset = UNSET
    last_error: StoredError | Delete | Unset = UNSET
    updated_at: datetime | Unset = UNSET
    created_by: str | Unset = UNSET
    updated_by: str | Unset = UNSET
    version: int | Add | Unset = UNSET

    def stamped(self, now: datetime) -> Self:
        return replace(self, updated_at=now, version=INCREMENT)
