"""Stored documents as JSON answers, built through their answer models (`composer.answers`):
the document's fields plus its `id`, instants as ISO-8601 strings with their offset.

A field that another service wrote in a shape the answer cannot describe (a `version` that
is a string, a `lease` that is not a map) is left out of the answer and logged, so one odd
document neither breaks a listing nor makes an answer its documented schema does not allow.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from composer.answers import Message, Rotation
from core import logs
from core.documents.errors import ErrorField
from core.documents.subjects import SubjectField
from core.error_help import help_for
from core.errors import DocumentError
from core.rotation import Rotation as StoredRotation
from core.schedule_words import draft_schedule_text, rotation_schedule_text

A = TypeVar("A", bound=BaseModel)
_DESTINATIONS = (SubjectField.CHANNEL, SubjectField.USER, SubjectField.TEAMS_CONVERSATION)


def message_json(doc_id: str, data: dict[str, Any]) -> dict[str, Any]:
    """A message's answer, with its schedule in words and its `last_error`'s help."""
    words = {"schedule_text": draft_schedule_text(data), **_error_help(data)}
    return stored_json(Message, doc_id, {**data, **words})


def rotation_json(doc_id: str, data: dict[str, Any]) -> dict[str, Any]:
    """A rotation's answer, with its turns in words and its `last_error`'s help."""
    try:
        schedule_text: str | None = rotation_schedule_text(
            StoredRotation.from_document(doc_id, data)
        )
    except DocumentError:
        schedule_text = None  # a rotation the processor cannot use has no schedule to say
    words = {"schedule_text": schedule_text, **_error_help(data)}
    return stored_json(Rotation, doc_id, {**data, **words})


def _error_help(data: dict[str, Any]) -> dict[str, Any]:
    """`last_error` with the catalog's words for its code (`{channel}` as the destination's
    id, which the answer's `names` turns into a name); nothing when there is no error."""
    error = data.get(SubjectField.LAST_ERROR)
    if not isinstance(error, dict):
        return {}
    code = error.get(ErrorField.CODE)
    destination = next(
        (
            data[f]
            for f in ("channel", "user", "teams_conversation")
            if isinstance(data.get(f), str)
        ),
        "the conversation",
    )
    entry = help_for(code if isinstance(code, str) else None).filled(destination)
    return {SubjectField.LAST_ERROR.value: {**error, "help": vars(entry)}}


def stored_json(model: type[A], doc_id: str, data: dict[str, Any]) -> dict[str, Any]:
    fields = {"id": doc_id, **{name: _plain(value) for name, value in data.items()}}
    try:
        return dump(model.model_validate(fields))
    except ValidationError as exc:
        unfit = sorted({str(error["loc"][0]) for error in exc.errors() if error["loc"]})
        logs.warning(
            "stored fields left out of an answer: their shape is not the documented one",
            document_id=doc_id,
            fields=unfit,
        )
        kept = {name: value for name, value in fields.items() if name not in unfit}
        return dump(model.model_validate(kept))


def dump(answer: BaseModel) -> dict[str, Any]:
    """An answer model as JSON data: only the fields it was given, so an answer never
    invents a `null` the document does not hold."""
    data: dict[str, Any] = answer.model_dump(mode="json", exclude_unset=True)
    return data


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {name: _plain(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
