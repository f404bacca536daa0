"""Rotations through the API: create, read and edit, validated (`composer.rotation_rules`)
and stored per the contract's `rotations` model. Who is next on which day is decided by
`core.rotation`, the same math the processor (`rotations/`) takes turns with.

An edit is decided on a fresh read and written under a precondition on it
(`composer.versions.decide_and_write`), like a message edit, and only names the fields a
caller owns, so what the processor recorded (`last_processed_date`, `lease`, `attempts`,
`last_error`, `sent_count`, ...) survives it. While a day is claimed (`lease` present) the
turn is being posted or reconciled from the stored order: an edit then is `409`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from composer import idempotency
from composer.models import RotationDraft, RotationEdit, RotationSwap
from composer.records import Records
from composer.rotation_rules import (
    ROTATION_FIELDS,
    RotationPlan,
    check_rotation,
    pruned_away,
    pruned_skips,
)
from composer.rotation_up import with_up
from composer.serialize import rotation_json
from composer.teams_destination import check_installed
from composer.validation import Problems, validated
from composer.versions import (
    Decision,
    check_if_match,
    content_update,
    merge_edit,
    version_of,
)
from core import logs
from core.documents.deliveries import LedgerField, LedgerStatus
from core.documents.rotations import RotationField, RotationWrite
from core.errors import Conflict
from core.models import rotation_delivery_id
from core.rotation import cursor_after_edit
from core.runtime import Runtime
from core.store import DELIVERIES, ROTATIONS

_REQUIRED = tuple(
    field.value
    for field in (
        RotationField.NAME,
        RotationField.MEMBERS,
        RotationField.SEND_TIME,
        RotationField.TEXT,
    )
)


ROTATION_RECORDS = Records(ROTATIONS, "rotation", rotation_json, with_up)


def create_rotation(
    rt: Runtime,
    draft: RotationDraft,
    key: idempotency.Fresh | None = None,
    *,
    by: str | None = None,
) -> dict[str, Any]:
    now = rt.clock.now()
    reference = ROTATION_RECORDS.new(rt)
    plan = check_rotation(draft, reference.id, now)
    check_installed(rt.db, draft.teams_conversation)
    # With no `last_processed_date`, today's turn is open: created after today's send_time
    # on a turn day, the rotation is due at once and posts today's turn at the next tick.
    fields = RotationWrite(next_run_at=plan.next_run_at, created_at=now)
    doc = ROTATION_RECORDS.create(rt, reference, plan.content | fields.to_document(), key, now, by)
    logs.info(
        "rotation created",
        rotation_id=reference.id,
        channel=draft.channel,
        teams_conversation=draft.teams_conversation,
        next_run_at=plan.next_run_at,
    )
    return ROTATION_RECORDS.answer_at(rt, reference.id, doc)


def edit_rotation(
    rt: Runtime,
    rotation_id: str,
    edit: RotationEdit,
    if_match: int | None,
    *,
    by: str | None = None,
) -> dict[str, Any]:
    def decide(data: dict[str, Any]) -> Decision:
        _refuse_while_claimed(data)
        check_if_match(data, if_match)
        return Decision(_edited(rt, rotation_id, data, edit))

    return ROTATION_RECORDS.edit(rt, rotation_id, decide, by)


def swap_members(
    rt: Runtime,
    rotation_id: str,
    swap: RotationSwap,
    if_match: int | None,
    *,
    by: str | None = None,
) -> dict[str, Any]:
    """The two members trade places in `members`, the cursor staying where it is: each takes
    the turn the other would have had (and every one after it, in the order). 422 naming
    `members` unless both are members and not the same one."""

    def decide(data: dict[str, Any]) -> Decision:
        _refuse_while_claimed(data)
        check_if_match(data, if_match)
        members = data.get(RotationField.MEMBERS)
        order = list(members) if isinstance(members, list) else []
        first, second = swap.members
        problems = Problems()
        if first == second:
            problems.add("members", "names the same member twice; swap two different members")
        for member in (first, second):
            if member not in order:
                problems.add("members", f"{member[:80]!r} is not a member of this rotation")
        problems.raise_if_any()
        i, j = order.index(first), order.index(second)
        order[i], order[j] = second, first
        write = RotationWrite(
            members=order, updated_at=rt.clock.now(), version=version_of(data) + 1
        )
        return Decision(write.to_document())

    return ROTATION_RECORDS.edit(rt, rotation_id, decide, by)


def _refuse_while_claimed(data: dict[str, Any]) -> None:
    """409 while a day is claimed: its turn is posted or reconciled from the stored order."""
    if data.get(RotationField.LEASE):
        raise Conflict(
            "the rotation's turn is being posted right now; try again once it has settled",
            [{"field": RotationField.LEASE.value, "message": "a day is claimed"}],
        )


def _edited(
    rt: Runtime, rotation_id: str, data: dict[str, Any], edit: RotationEdit
) -> dict[str, Any]:
    """The update an edit makes to the stored `data` (422 if the result is invalid)."""
    now = rt.clock.now()
    given, merged = merge_edit(data, edit, ROTATION_FIELDS, _REQUIRED)
    members, cursor, skips = RotationField.MEMBERS, RotationField.CURSOR, RotationField.SKIPS
    old_members = data.get(members)
    if isinstance(old_members, list):
        new_members = given.get(members) or old_members
        if cursor not in given:
            # Fairness: whoever was next stays next (or the one after them, if removed); with
            # the members unchanged this only brings a directly written cursor into range.
            merged[cursor.value] = cursor_after_edit(
                old_members, _int(data.get(cursor)), new_members
            )
        if members in given and skips not in given and skips in merged:
            merged[skips.value] = pruned_skips(merged[skips], new_members)
        if members in given and RotationField.AWAY not in given and RotationField.AWAY in merged:
            merged[RotationField.AWAY.value] = pruned_away(merged[RotationField.AWAY], new_members)
    draft: RotationDraft = validated(RotationDraft, merged)
    kept = {name: value for name, value in data.items() if name not in ROTATION_FIELDS}
    plan = check_rotation(draft, rotation_id, now, kept)
    check_installed(rt.db, draft.teams_conversation)
    update = content_update(data, plan.content, ROTATION_FIELDS)
    # Recomputed from now on every edit: a day whose post failed definitively opens again,
    # and a resumed rotation takes today's turn if it is still open.
    system = RotationWrite(
        next_run_at=_after_retry_wait(rt, rotation_id, plan),
        updated_at=now,
        version=version_of(data) + 1,
    )
    return update | system.to_document()


def _after_retry_wait(rt: Runtime, rotation_id: str, plan: RotationPlan) -> datetime | None:
    """The plan's `next_run_at`, or later while that day waits out a Slack `Retry-After`
    (its ledger entry is `released` with a `retry_at`): an edit must not bring the retry
    forward of what Slack asked for."""
    due = plan.next_run_at
    if due is None:
        return None
    day = plan.rotation.today(due)  # a turn is due on its own local date
    entry = rt.db.collection(DELIVERIES).document(rotation_delivery_id(rotation_id, day)).get()
    fields = entry.to_dict() or {}
    retry_at = fields.get(LedgerField.RETRY_AT)
    if (
        fields.get(LedgerField.STATUS) == LedgerStatus.RELEASED
        and isinstance(retry_at, datetime)
        and retry_at > due
    ):
        return retry_at
    return due


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
