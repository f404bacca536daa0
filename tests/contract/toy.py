"""A toy kind of send, defined only in the tests: a note posted once to a channel (a Slack
channel, or a Teams conversation) at its instant, stored in `toy_notes`, with ledger entries
of kind `toy_note`. It is the record
(processor.occurrence_kind.OccurrenceKind) and the rules a kind leasing one occurrence
writes itself (a side-effect-free claim plan, its delivered write, `render`), and it goes
through the whole contract suite with nothing in processor/ changed for it: what
docs/architecture.md's "add a kind" promises."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from google.cloud import firestore

from core.documents.deliveries import (
    LedgerField,
    LedgerStatus,
    LedgerWrite,
    Occurrence,
    entry_lease,
    new_entry,
)
from core.documents.leases import Lease
from core.documents.subjects import SubjectWrite
from core.documents.write import DELETE, UNSET, Unset
from core.errors import DocumentError
from core.models import CHANNEL_ID, teams_conversation
from core.named_batch import Landed, NamedBatch
from core.platform import SLACK, TEAMS
from core.queues import Queue
from core.runtime import Runtime
from core.store import DELIVERIES, Snapshot
from formatting.render import Rendered, render
from processor.abc import Doc, Kind, Missed, Settlement
from processor.occurrence_kind import Delivered, OccurrenceKind, OccurrenceRules, Statuses, Words
from processor.outcome import Result
from processor.reject import reject

TOY_NOTES = "toy_notes"


class ToyLedger(enum.StrEnum):
    """The toy's names on its ledger entries: their `kind`, and the field naming the note."""

    KIND = "toy_note"
    NOTE_ID = "note_id"


class NoteField(enum.StrEnum):
    CHANNEL = "channel"
    TEXT = "text"
    AT = "at"  # the note's one occurrence
    STATUS = "status"
    NEXT_RUN_AT = "next_run_at"


class NoteStatus(enum.StrEnum):
    WAITING = "waiting"
    SENDING = "sending"
    POSTED = "posted"
    FAILED = "failed"
    UNCONFIRMED = "unconfirmed"


@dataclass(frozen=True, kw_only=True)
class NoteWrite(SubjectWrite):
    status: NoteStatus | Unset = UNSET
    slack_ts: str | Unset = UNSET
    posted_at: datetime | Unset = UNSET
    attempts: int | Unset = UNSET


@dataclass(frozen=True)
class Note:
    id: str
    channel: str
    text: str
    at: datetime
    user: str | None = None  # a note never posts to a person
    platform: str = SLACK


def parse(doc_id: str, data: Doc) -> Note:
    channel, text, at = (
        data.get(NoteField.CHANNEL),
        data.get(NoteField.TEXT),
        data.get(NoteField.AT),
    )
    teams = teams_conversation(data)  # core's parsing of a Teams destination, as any kind's
    platform = SLACK if teams is None else TEAMS
    if teams is not None:
        channel = teams.conversation
    elif not isinstance(channel, str) or not CHANNEL_ID.match(channel):
        raise DocumentError("invalid_channel", f"channel {channel!r} is not a Slack id")
    if not isinstance(text, str) or not text.strip():
        raise DocumentError("invalid_text", "a note needs a text")
    if not isinstance(at, datetime):
        raise DocumentError("invalid_at", "a note needs its instant `at`")
    return Note(doc_id, channel, text, at, platform=platform)


def delivery_id(note_id: str, occurrence: datetime) -> str:
    return f"t:{note_id}:{occurrence:%Y%m%dT%H%M%SZ}"


@dataclass(frozen=True)
class NotePlan:
    """The claim of a note's one occurrence (processor.abc.ClaimPlan): it reads and writes
    nothing itself."""

    note: Note
    ledger_ref: firestore.DocumentReference
    worker_id: str
    missed: Sequence[Missed] = ()

    @property
    def occurrence_at(self) -> datetime:
        return self.note.at

    def new_entry(self) -> dict[str, Any]:
        note = self.note
        identity = Occurrence(
            ToyLedger.KIND,
            ToyLedger.NOTE_ID,
            note.id,
            note.at,
            note.channel,
            platform=note.platform,
        )
        return new_entry(identity, self.worker_id, LedgerWrite())

    def claim_fields(self) -> LedgerWrite:
        return LedgerWrite()

    def claimed(
        self, owner: str, expires_at: datetime, attempts: int, missed: Sequence[Missed]
    ) -> NoteWrite:
        lease = Lease(owner, expires_at, self.note.at)
        return NoteWrite(status=NoteStatus.SENDING, lease=lease, attempts=attempts)

    def repaired(self, entry: dict[str, Any], now: datetime, missed: Sequence[Missed]) -> NoteWrite:
        status = entry.get(LedgerField.STATUS)
        if status == LedgerStatus.CLAIMED:
            return NoteWrite(status=NoteStatus.SENDING, lease=entry_lease(entry, self.note.at))
        settled: dict[str, NoteStatus] = {
            LedgerStatus.SENT: NoteStatus.POSTED,
            LedgerStatus.UNCONFIRMED: NoteStatus.UNCONFIRMED,
        }
        return NoteWrite(status=settled.get(str(status), NoteStatus.FAILED))

    def subject(self, entry: dict[str, Any] | None) -> Note:
        return self.note

    def alongside(self, batch: NamedBatch) -> None:
        pass

    def log(self, missed: Sequence[Missed]) -> None:
        pass

    def log_fields(self) -> dict[str, Any]:
        return {LedgerField.OCCURRENCE_AT.value: self.note.at}

    def landed(self, landed: Landed) -> None:
        pass


class NoteRules(OccurrenceRules[Note, None]):
    def plan(
        self, rt: Runtime, kind: Kind, snap: Snapshot, ahead: None
    ) -> NotePlan | Settlement | Result:
        data = snap.to_dict() or {}
        due = data.get(NoteField.NEXT_RUN_AT)
        waiting = data.get(NoteField.STATUS) == NoteStatus.WAITING
        if not waiting or not isinstance(due, datetime) or due > rt.clock.now():
            return Result.SKIPPED  # claimed or settled since it was found due
        try:
            note = parse(snap.id, data)
        except DocumentError as exc:
            detail = f"cannot be sent as stored: {exc.message}"
            fail = partial(reject, kind=kind, snap=snap, exc=exc, status=NoteStatus.FAILED)
            return Settlement(partial(fail, detail=detail))
        ref = rt.db.collection(DELIVERIES).document(delivery_id(note.id, note.at))
        return NotePlan(note, ref, rt.worker_id)

    def delivered(
        self, subject: Note, occurrence_at: datetime, ts: str | None, now: datetime
    ) -> Delivered:
        posted = NoteWrite(
            status=NoteStatus.POSTED,
            lease=DELETE,
            slack_ts=UNSET if ts is None or subject.platform != SLACK else ts,
            posted_at=now,
        )
        return Delivered(posted, Result.SENT)

    def released(self, subject: Note, occurrence_at: datetime) -> NoteWrite:
        return NoteWrite(status=NoteStatus.WAITING)

    def render(self, subject: Note, delivery_id: str) -> Rendered:
        return render(subject.platform, subject.text)

    def occurrence(self, subject: Note) -> datetime | None:
        return subject.at


TOY_KIND: OccurrenceKind[Note, None] = OccurrenceKind(
    name=ToyLedger.KIND,
    id_field=ToyLedger.NOTE_ID,
    queue=Queue(TOY_NOTES, (NoteStatus.WAITING,), NoteStatus.SENDING),
    statuses=Statuses(
        failed=NoteStatus.FAILED,
        unconfirmed=NoteStatus.UNCONFIRMED,
        every=frozenset(NoteStatus),
        live=frozenset((NoteStatus.WAITING, NoteStatus.SENDING)),
    ),
    write=NoteWrite,
    words=Words(
        delivered="note posted",
        ambiguous="note outcome unknown; held for reconciliation",
        released="note not posted; released for retry",
        noun="a sending note",
    ),
    parse=parse,
    delivery_id=delivery_id,
    rules=NoteRules(),
)
