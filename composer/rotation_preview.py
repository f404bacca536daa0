"""`POST /rotations/{id}/preview`: who takes the next turns of a stored rotation and what
the next turn's post looks like, from exactly the code the real send runs
(`Rotation.from_document`, `upcoming_turns`, `render_turn`); nothing is written."""

from __future__ import annotations

from typing import Any

from composer.answers import RotationTurns, Turn
from composer.names import named
from composer.preview import PREVIEW_DELIVERY, posted
from composer.rotation_rules import invalid_document
from composer.serialize import dump
from composer.versions import read
from core.errors import DocumentError
from core.rotation import Rotation, upcoming_turns
from core.runtime import Runtime
from core.schedule_words import rotation_schedule_text
from core.store import ROTATIONS
from formatting.render import with_actions
from rotations.render import render_turn


def preview_rotation(rt: Runtime, rotation_id: str, count: int) -> dict[str, Any]:
    """The next `count` turns from now (today's too while it is open) and the rendering of
    the first one somebody takes; `text` is null and `blocks` empty when nobody does (every
    member is out on every previewed day). A stored rotation the processor could not take
    turns with is 422 with the processor's code."""
    snap = read(rt.db.collection(ROTATIONS).document(rotation_id), "rotation")
    try:
        rotation = Rotation.from_document(rotation_id, snap.to_dict() or {})
        turns = upcoming_turns(rotation, rt.clock.now(), count)
        member = next((turn.member for turn in turns if turn.member is not None), None)
        rendered = None
        if member is not None:
            # The buttons as posted; a preview has no delivery yet (composer.preview).
            turn = render_turn(rotation.text, member, rotation.platform)
            rendered = with_actions(turn, PREVIEW_DELIVERY, rotation.actions)
    except DocumentError as exc:
        raise invalid_document(exc) from None
    post = posted(rendered) if rendered is not None else {"text": None, "blocks": []}
    preview = RotationTurns(
        **post,
        turns=[
            Turn(
                date=turn.day,
                utc=rotation.due_at(turn.day),
                local=rotation.due_at(turn.day).astimezone(rotation.tz),
                member=turn.member,
            )
            for turn in turns
        ],
        schedule_text=rotation_schedule_text(rotation),
    )
    return named(rt.db, "RotationTurns", dump(preview), {rotation.channel})
