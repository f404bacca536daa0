"""The records the API keeps in one collection (messages, rotations), read, created and
edited alike: a read answers 404 for a missing record, a create stamps the first version
(and records an `Idempotency-Key` in the same commit), an edit is decided and written under
a precondition (`composer.versions.decide_and_write`) and logged as it now stands."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from google.cloud import firestore

from composer import idempotency
from composer.actor import actor
from composer.versions import Decision, decide_and_write, read
from core import logs
from core.documents.subjects import SubjectField, SubjectWrite
from core.runtime import Runtime
from core.shards import shard_of

# A stored record's answer (composer.serialize), from its id and fields.
Answer = Callable[[str, dict[str, Any]], dict[str, Any]]
# Fields an answer shows that are worked out from the stored ones at `now` (a rotation's
# `up`): the record's id, its stored fields and now -> the fields to answer.
Computed = Callable[[str, dict[str, Any], datetime], dict[str, Any]]


@dataclass(frozen=True)
class Records:
    collection: str
    noun: str  # what a 404 and a log line call one record: "message"
    answer: Answer
    computed: Computed | None = None

    def get(self, rt: Runtime, record_id: str) -> dict[str, Any]:
        snap = read(rt.db.collection(self.collection).document(record_id), self.noun)
        return self.answer_at(rt, record_id, snap.to_dict() or {})

    def answer_at(self, rt: Runtime, record_id: str, data: dict[str, Any]) -> dict[str, Any]:
        """The answer of the record stored as `data`, with what is computed from it now."""
        if self.computed is not None:
            data = self.computed(record_id, data, rt.clock.now())
        return self.answer(record_id, data)

    def new(self, rt: Runtime) -> firestore.DocumentReference:
        """Where a record about to be created goes: a fresh id."""
        return rt.db.collection(self.collection).document()

    def create(
        self,
        rt: Runtime,
        reference: firestore.DocumentReference,
        fields: dict[str, Any],
        key: idempotency.Fresh | None,
        now: datetime,
        by: str | None = None,
    ) -> dict[str, Any]:
        """Creates the record from `fields` as its first version (its shard, version 1,
        stamped `now`, made by the actor: composer.actor); returns what was stored."""
        first = first_version(rt, reference.id, now, by)
        document = fields | first.to_document()
        idempotency.create(rt.db, reference, document, key, now)
        return document

    def edit(
        self,
        rt: Runtime,
        record_id: str,
        decide: Callable[[dict[str, Any]], Decision | None],
        by: str | None = None,
    ) -> dict[str, Any]:
        """The answer of the record after the edit `decide` makes; logged as it now stands."""
        reference = rt.db.collection(self.collection).document(record_id)
        after = decide_and_write(rt.db, reference, self.noun, decide, by)
        logs.info(
            f"{self.noun} edited",
            **{f"{self.noun}_id": record_id},
            version=after.get(SubjectField.VERSION),
            status=after.get(SubjectField.STATUS),
            next_run_at=after.get(SubjectField.NEXT_RUN_AT),
        )
        return self.answer_at(rt, record_id, after)


def first_version(rt: Runtime, record_id: str, now: datetime, by: str | None) -> SubjectWrite:
    """What every new record stores besides its content: its shard, version 1, stamped
    `now`, and who made it (`created_by` = `updated_by`: composer.actor) when known."""
    first = SubjectWrite(shard=shard_of(record_id, rt.settings.shards), updated_at=now, version=1)
    who = actor(by)
    return first if who is None else replace(first, created_by=who, updated_by=who)
