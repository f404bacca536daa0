"""Stored documents as JSON answers: the document's fields plus its `id`, instants as
ISO-8601 strings with their offset."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def as_json(doc_id: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"id": doc_id, **{name: _plain(value) for name, value in data.items()}}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {name: _plain(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
