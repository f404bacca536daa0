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

A = TypeVar("A", bound=BaseModel)


def message_json(doc_id: str, data: dict[str, Any]) -> dict[str, Any]:
    return stored_json(Message, doc_id, data)


def rotation_json(doc_id: str, data: dict[str, Any]) -> dict[str, Any]:
    return stored_json(Rotation, doc_id, data)


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
