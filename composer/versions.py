"""Optimistic concurrency for edits: the `version` every write increments, `If-Match`,
and the read-decide-write loop that keeps an edit atomic against the processor.

Edits are written with a `last_update_time` precondition on the snapshot they were decided
from, the way the processor claims (no transaction: the emulator and Firestore make lock
contention slow, and the processor never takes locks). Whoever writes second fails the
precondition; an edit then reads again and decides again, so a claim that landed in
between is seen (409), and so is another edit (412 when the caller sent If-Match).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from google.api_core.exceptions import FailedPrecondition
from google.cloud import firestore
from pydantic import BaseModel

from composer.actor import updated_by
from composer.validation import Problems
from core.documents.subjects import SubjectField
from core.errors import BadRequest, Conflict, NotFound, PreconditionFailed
from core.store import Snapshot

IF_MATCH = "If-Match"
# A bare version, or the same quoted as an entity tag (optionally weak): 7, "7", W/"7".
VERSION_TAG = re.compile(r'^(?:W/)?"?(\d{1,18})"?$')
# Each retry follows a write someone else made; a handful is plenty.
_MAX_DECISIONS = 5

T = TypeVar("T")


def if_match_from(headers: Any) -> int | None:
    raw = headers.get(IF_MATCH)
    if raw is None:
        return None
    match = VERSION_TAG.match(raw.strip())
    if not match:
        raise BadRequest(f"{IF_MATCH} must be the version number, e.g. {IF_MATCH}: 3")
    return int(match.group(1))


def version_of(data: dict[str, Any]) -> int:
    """A document written directly without a version counts as version 0."""
    version = data.get(SubjectField.VERSION)
    return version if isinstance(version, int) and not isinstance(version, bool) else 0


def check_if_match(data: dict[str, Any], if_match: int | None) -> None:
    if if_match is not None and if_match != version_of(data):
        raise PreconditionFailed(
            f"the record is at version {version_of(data)}, not {if_match}: "
            "it changed since you read it",
            [{"field": IF_MATCH, "message": f"current version is {version_of(data)}"}],
        )


def read(reference: firestore.DocumentReference, what: str) -> Snapshot:
    snap = reference.get()
    if not snap.exists:
        raise NotFound(f"no {what} with id {reference.id!r}")
    return snap


def applied(data: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """`data` after `update` is written: what the record now is, without reading it back."""
    after = dict(data)
    for name, value in update.items():
        if value is firestore.DELETE_FIELD:
            after.pop(name, None)
        else:
            after[name] = value
    return after


# Another document written in the same commit: (reference, fields, the update time it
# was read at, which is its precondition).
Along = tuple[firestore.DocumentReference, dict[str, Any], Any]


@dataclass(frozen=True)
class Decision:
    """What an edit writes: the record's update, and updates of other documents that must
    land with it or not at all."""

    update: dict[str, Any]
    along: tuple[Along, ...] = ()


def decide_and_write(
    db: firestore.Client,
    reference: firestore.DocumentReference,
    what: str,
    decide: Callable[[dict[str, Any]], Decision | None],
    by: str | None = None,
) -> dict[str, Any]:
    """Read, let `decide` raise (404/409/412/422) or return the writes (None: nothing to
    write), and commit them only if the record did not change since the read; else decide
    again. The record's `updated_by` becomes the actor (`by`, else the request's principal:
    composer.actor), when one is known."""
    by_whom = updated_by(by)
    for _ in range(_MAX_DECISIONS):
        snap = read(reference, what)
        data = snap.to_dict() or {}
        decision = decide(data)
        if decision is None:
            return data
        update = decision.update | by_whom
        batch = db.batch()
        batch.update(reference, update, option=db.write_option(last_update_time=snap.update_time))
        for other, fields, read_at in decision.along:
            batch.update(other, fields, option=db.write_option(last_update_time=read_at))
        try:
            batch.commit()  # pragma: SYNCPOINT edit
        except FailedPrecondition:
            continue  # written since our read (a claim, a send, another edit): decide again
        return applied(data, update)
    raise Conflict(f"the {what} kept changing while this request was deciding; try again")


def merge_edit(
    data: dict[str, Any], edit: BaseModel, fields: tuple[str, ...], required: tuple[str, ...]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What an edit body says (`given`: the fields it names, `null` meaning remove) and the
    record it describes (`merged`: the stored caller-owned `fields` with the edit applied).
    Removing one of the `required` fields is a 422."""
    given = {name: getattr(edit, name) for name in edit.model_fields_set}
    problems = Problems()
    for name in required:
        if name in given and given[name] is None:
            problems.add(name, "is required and cannot be removed")
    problems.raise_if_any()
    merged = {name: data[name] for name in fields if name in data}
    for name, value in given.items():
        if value is None:
            merged.pop(name, None)
        elif hasattr(value, "model_dump"):
            merged[name] = value.model_dump(exclude_none=True)
        else:
            merged[name] = value
    return given, merged


def content_update(
    data: dict[str, Any], content: dict[str, Any], fields: tuple[str, ...]
) -> dict[str, Any]:
    """The update that makes the stored caller-owned `fields` of `data` the edited
    `content`: its values, and a delete of each stored field the edit removed."""
    removed = {name: firestore.DELETE_FIELD for name in fields if name in data}
    return removed | content
