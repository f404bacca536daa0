"""Rotation days as a kind of send: processor.abc's protocols, implemented for a day's turn,
whose lease names a local day and whose give-back rolls the turn back. What an outcome
writes and how it reads is rotations.outcome's.

Unverifiable under the `hold` policy, a day stays claimed, `unconfirmed` in the ledger, with
`rollback` kept so that an operator's release can give the member their turn back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from core.documents.deliveries import (
    LedgerField,
    LedgerKind,
    LedgerStatus,
    LedgerWrite,
)
from core.documents.errors import StoredError
from core.documents.leases import LEASE, LeaseField, lease_of, usable_lease
from core.documents.rotations import (
    RotationField,
    RotationStatus,
    RotationWrite,
)
from core.documents.subjects import SubjectWrite
from core.documents.write import DELETE, UNSET
from core.errors import DocumentError
from core.models import rotation_delivery_id
from core.queues import Queue
from core.rotation import Rotation
from core.runtime import Runtime
from core.slack import Outcome, PostResult
from core.store import ROTATIONS, Snapshot
from formatting.buttons import with_actions
from formatting.slack_text import SlackMessage
from processor.abc import (
    Claim,
    Doc,
    Leased,
    LeaseUnreadable,
    OutcomeLine,
    Planned,
    Settle,
    Writes,
)
from processor.doctor import Finding
from processor.outcome import Result
from rotations.claim import plan_day
from rotations.day import DayTurn
from rotations.examine import examine_rotation
from rotations.outcome import day_line, day_writes
from rotations.preview import preview_turns
from rotations.render import render_turn
from rotations.settle import rotation_settle_writes


class RotationDayKind:
    name = LedgerKind.ROTATION
    collection = ROTATIONS
    id_field = LedgerField.ROTATION_ID
    noun = "a claimed rotation day"
    # A claimed day is found by its lease alone, paused or not: it is settled either way.
    queue = Queue(ROTATIONS, (RotationStatus.ACTIVE,), sending=None)
    summary_key: str | None = "rotations"
    fences_subject = True

    def read_ahead(self, rt: Runtime, due: list[Snapshot]) -> None:
        return None

    def sent(self, ahead: None, claim: Claim[Any], outcome: Outcome) -> None:
        pass

    def plan(self, rt: Runtime, snap: Snapshot, ahead: None) -> Planned[DayTurn]:
        return plan_day(rt, self, snap)

    def due(
        self, rt: Runtime, now: datetime, limit: int, excluding: Sequence[str] = ()
    ) -> list[Snapshot]:
        # A claimed day (a lease held for a person can outlast the next turn's time) is
        # reconciliation's, not a claim's: left out, so a pass does not count it as due.
        due = self.queue.due(rt.db, now, limit, excluding=excluding, shards=rt.settings.shards)
        return [snap for snap in due if not usable_lease((snap.to_dict() or {}).get(LEASE))]

    def preview(self, rt: Runtime, due: list[Snapshot], now: datetime) -> list[dict[str, Any]]:
        return preview_turns(due, now)

    def sweep(self, rt: Runtime) -> Counter[str]:
        # Nothing: a lease no pass can settle is rejected by the rotation's claim once its
        # next turn is due (rotations.claim.reject_rotation).
        return Counter()

    def examine(self, doc_id: str, data: Doc, now: datetime) -> Finding | None:
        return examine_rotation(doc_id, data, now)

    def held_failed(
        self, doc_id: str, data: Doc, error: StoredError
    ) -> tuple[SubjectWrite, str | None]:
        """The claimed day is given up: `last_processed_date` stays on it, and the order
        goes on with the next turn."""
        day = lease_of(data).get(LeaseField.OCCURRENCE_DATE)
        given_up = RotationWrite(
            lease=DELETE,
            last_error=error,
            rollback=DELETE,
            last_processed_date=day if isinstance(day, str) else UNSET,
        )
        try:
            return given_up, rotation_delivery_id(doc_id, date.fromisoformat(str(day)))
        except ValueError:
            return given_up, None

    def live(self, data: Doc) -> bool:
        return data.get(RotationField.STATUS) in frozenset(RotationStatus)

    def leased(self, subject_id: str, data: dict[str, Any]) -> Leased:
        day = _leased_day(subject_id, data)
        rotation = Rotation.from_document(subject_id, data)
        fields = {LedgerField.OCCURRENCE_DATE.value: day.isoformat()}
        return Leased(rotation.due_at(day), rotation_delivery_id(subject_id, day), fields)

    def taken_over(
        self, subject_id: str, data: dict[str, Any], leased: Leased, entry: dict[str, Any]
    ) -> DayTurn:
        rotation = Rotation.from_document(subject_id, data)
        lease = data.get(LEASE) or {}
        member = str(lease.get(LeaseField.MEMBER) or entry.get(LedgerField.MEMBER))
        day = date.fromisoformat(leased.fields[LedgerField.OCCURRENCE_DATE])
        escalated = entry.get(LedgerField.ESCALATED_AT) is not None
        return DayTurn(rotation, day, member, _rollback(data), escalated)

    def channel(self, claim: Claim[DayTurn]) -> str:
        return claim.subject.rotation.channel

    def render(self, claim: Claim[DayTurn]) -> SlackMessage:
        rotation = claim.subject.rotation
        rendered = render_turn(rotation.text, claim.subject.member)
        return with_actions(rendered, claim.delivery_id, rotation.actions)

    def outcome_writes(
        self, claim: Claim[DayTurn], post: PostResult, now: datetime, max_attempts: int
    ) -> Writes:
        return day_writes(claim, post, now, max_attempts)

    def unconfirmed_writes(self, claim: Claim[DayTurn], error: StoredError) -> Writes:
        rotation = RotationWrite(lease=DELETE, last_error=error)
        ledger = LedgerWrite(status=LedgerStatus.UNCONFIRMED, error=error)
        return Writes(rotation, ledger, Result.UNCONFIRMED)

    def settle_writes(self, rt: Runtime, action: Settle, entry: Doc, subject: Doc) -> Writes:
        return rotation_settle_writes(rt, action, entry, subject)

    def still_leased(self, claim: Claim[DayTurn], subject: dict[str, Any]) -> bool:
        lease = subject.get(LEASE) or {}
        return bool(
            lease.get(LeaseField.OWNER) == claim.owner
            and lease.get(LeaseField.OCCURRENCE_DATE) == claim.subject.day.isoformat()
        )

    def log_fields(self, claim: Claim[DayTurn]) -> dict[str, Any]:
        return {LedgerField.OCCURRENCE_DATE.value: claim.subject.day.isoformat()}

    def outcome_line(self, claim: Claim[DayTurn], post: PostResult, result: Result) -> OutcomeLine:
        return day_line(claim, post, result)


def _leased_day(subject_id: str, data: dict[str, Any]) -> date:
    """The lease's day, once the rotation is known to parse (LeaseUnreadable otherwise)."""
    try:
        Rotation.from_document(subject_id, data)
        return date.fromisoformat(str((data.get(LEASE) or {}).get(LeaseField.OCCURRENCE_DATE)))
    except (DocumentError, ValueError) as exc:
        code = exc.code if isinstance(exc, DocumentError) else "invalid_lease"
        raise LeaseUnreadable(code, f"a claimed rotation day no longer parses: {exc}") from None


def _rollback(data: dict[str, Any]) -> dict[str, Any]:
    """What giving the day back restores: the `rollback` stored beside the lease (every
    claim and repair writes both; rotations.claim.DayPlan)."""
    rollback = data.get(RotationField.ROLLBACK)
    return rollback if isinstance(rollback, dict) else {}


ROTATION_DAY_KIND = RotationDayKind()
