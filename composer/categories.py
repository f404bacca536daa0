"""The `category` a message or an event names, as the API checks it when it is written: a
`categories` document that exists and whose gates can be read (core.documents.categories),
else a 422 naming `category`. One deleted or broken later is the send's concern: the
message is not rewritten, and its claim ends it `failed` if the gates cannot be read."""

from __future__ import annotations

from typing import NoReturn

from google.cloud import firestore

from core.documents.categories import check_category
from core.documents.messages import MessageField
from core.errors import DocumentError, ValidationFailed
from core.store import CATEGORIES, is_document_id


def check_category_exists(db: firestore.Client, category: str | None) -> None:
    """422 when `category` names no category, or one whose gates cannot be read."""
    if category is None or not is_document_id(category):
        return  # none named, or the body's own checks name the malformed id
    snap = db.collection(CATEGORIES).document(category).get()
    if not snap.exists:
        refuse_category(f"{category!r} is not a category")
    try:
        check_category(snap.to_dict() or {})
    except DocumentError as exc:
        refuse_category(f"{category!r} cannot be used as stored: {exc.message}")


def refuse_category(message: str) -> NoReturn:
    raise ValidationFailed(
        "invalid fields: category", [{"field": MessageField.CATEGORY.value, "message": message}]
    )
