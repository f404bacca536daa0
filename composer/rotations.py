"""Rotations through the API: create, read and edit, validated and stored per the
contract's `rotations` model. Who is next on which day is the rotations domain's work
(`rotations/`); this module only keeps the definition."""

from __future__ import annotations

import re
from typing import Any

from composer import idempotency
from composer.models import RotationDraft, RotationEdit
from composer.serialize import as_json
from composer.validation import Problems, check_channel, check_text, check_zone, validated
from composer.versions import Decision, check_if_match, decide_and_write, read, version_of
from core import logs
from core.runtime import Runtime
from core.store import ROTATIONS

ROTATION_FIELDS = (
    "name",
    "channel",
    "members",
    "timezone",
    "send_time",
    "weekdays",
    "text",
    "cursor",
    "status",
)
_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,}$")
_SEND_TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
_MAX_NAME = 200


def get_rotation(rt: Runtime, rotation_id: str) -> dict[str, Any]:
    snap = read(rt.db.collection(ROTATIONS).document(rotation_id), "rotation")
    return as_json(rotation_id, snap.to_dict() or {})


def create_rotation(
    rt: Runtime, draft: RotationDraft, key: idempotency.Fresh | None = None
) -> dict[str, Any]:
    now = rt.clock.now()
    check_rotation(draft)
    reference = rt.db.collection(ROTATIONS).document()
    doc = draft.model_dump() | {"created_at": now, "updated_at": now, "version": 1}
    batch = rt.db.batch()
    batch.create(reference, doc)
    if key is not None:
        idempotency.record(rt.db, batch, key, reference.id, now)
    batch.commit()
    logs.info("rotation created", rotation_id=reference.id, channel=draft.channel)
    return as_json(reference.id, doc)


def edit_rotation(
    rt: Runtime, rotation_id: str, edit: RotationEdit, if_match: int | None
) -> dict[str, Any]:
    def decide(data: dict[str, Any]) -> Decision:
        check_if_match(data, if_match)
        given = {name: getattr(edit, name) for name in edit.model_fields_set}
        problems = Problems()
        for name, value in given.items():
            if value is None and name in ("name", "channel", "members", "send_time", "text"):
                problems.add(name, "is required and cannot be removed")
        problems.raise_if_any()
        merged = {name: data[name] for name in ROTATION_FIELDS if name in data}
        merged |= {name: value for name, value in given.items() if value is not None}
        for name in (name for name, value in given.items() if value is None):
            merged.pop(name, None)
        members = merged.get("members")
        # Fewer members can leave the cursor past the end: start the order again.
        if "cursor" not in given and isinstance(members, list):
            cursor = merged.get("cursor", 0)
            if isinstance(cursor, int) and not 0 <= cursor < max(len(members), 1):
                merged["cursor"] = 0
        draft: RotationDraft = validated(RotationDraft, merged)
        check_rotation(draft)
        return Decision(
            draft.model_dump() | {"updated_at": rt.clock.now(), "version": version_of(data) + 1}
        )

    reference = rt.db.collection(ROTATIONS).document(rotation_id)
    after = decide_and_write(rt.db, reference, "rotation", decide)
    logs.info("rotation edited", rotation_id=rotation_id, version=after.get("version"))
    return as_json(rotation_id, after)


def check_rotation(draft: RotationDraft) -> None:
    problems = Problems()
    if not draft.name.strip() or len(draft.name) > _MAX_NAME:
        problems.add("name", f"must be 1..{_MAX_NAME} characters and not blank")
    check_channel(problems, "channel", draft.channel)
    check_text(problems, "text", draft.text)
    check_zone(problems, "timezone", draft.timezone)
    if not draft.members:
        problems.add("members", "needs at least one member")
    for index, member in enumerate(draft.members):
        if not _USER_ID.match(member):
            problems.add(f"members.{index}", f"{member!r} is not a Slack user id such as U0123ABCD")
    if len(set(draft.members)) != len(draft.members):
        problems.add("members", "lists a member more than once")
    if not _SEND_TIME.match(draft.send_time):
        problems.add("send_time", f"{draft.send_time!r} is not a local time HH:MM")
    if not draft.weekdays:
        problems.add("weekdays", "needs at least one day (0 = Monday ... 6 = Sunday)")
    if any(not 0 <= day <= 6 for day in draft.weekdays):
        problems.add("weekdays", "days are 0 (Monday) to 6 (Sunday)")
    if len(set(draft.weekdays)) != len(draft.weekdays):
        problems.add("weekdays", "lists a day more than once")
    if draft.members and not 0 <= draft.cursor < len(draft.members):
        problems.add("cursor", f"must be an index into members (0..{len(draft.members) - 1})")
    problems.raise_if_any()
