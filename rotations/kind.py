"""Rotation days as a kind of send: processor.abc's protocols, implemented for a day's turn,
whose lease names a local day and whose give-back rolls the turn back. What an outcome
writes and how it reads is rotations.outcome's.

Unverifiable under the `hold` policy, a day stays claimed, `unconfirmed` in the ledger, with
`rollback` kept so that an operator's release can give the member their turn back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from core.documents.deliveries import (
    LedgerField,
    LedgerKind,
    LedgerStatus,
    LedgerWrite,
)
from core.documents.errors import StoredError
from core.documents.leases import LEASE, usable_lease
from core.documents.rotations import (
    RotationField,
    RotationStatus,
    RotationWrite,
)
from core.documents.subjects import SubjectWrite
from core.documents.write import DELETE
from core.platform import Destination, Outcome, PostResult
from core.queues import Queue
from core.runtime import Runtime
from core.store import ROTATIONS, Snapshot
from formatting.render import Rendered, with_actions
from processor.abc import (
    Claim,
    Doc,
    Leased,
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
from rotations.lease import given_up, leased_day, still_leased_day, taken_over_day
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
        return given_up(doc_id, data, error)

    def live(self, data: Doc) -> bool:
        return data.get(RotationField.STATUS) in frozenset(RotationStatus)

    def leased(self, subject_id: str, data: Doc) -> Leased:
        return leased_day(subject_id, data)

    def taken_over(self, subject_id: str, data: Doc, leased: Leased, entry: Doc) -> DayTurn:
        return taken_over_day(subject_id, data, leased, entry)

    def destination(self, claim: Claim[DayTurn]) -> Destination:
        rotation = claim.subject.rotation
        return Destination(rotation.platform, rotation.channel)

    def render(self, claim: Claim[DayTurn]) -> Rendered:
        rotation = claim.subject.rotation
        rendered = render_turn(rotation.text, claim.subject.member, rotation.platform)
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

    def still_leased(self, claim: Claim[DayTurn], subject: Doc) -> bool:
        return still_leased_day(claim, subject)

    def log_fields(self, claim: Claim[DayTurn]) -> dict[str, Any]:
        return {LedgerField.OCCURRENCE_DATE.value: claim.subject.day.isoformat()}

    def outcome_line(self, claim: Claim[DayTurn], post: PostResult, result: Result) -> OutcomeLine:
        return day_line(claim, post, result)


ROTATION_DAY_KIND = RotationDayKind()
