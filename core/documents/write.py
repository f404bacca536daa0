"""Typed partial writes: a frozen dataclass per collection whose attributes are the document's
fields, so that a misspelt field is a type error, not a new key on disk.

A field left UNSET is not written. DELETE removes it (firestore.DELETE_FIELD), `Add(n)`
adds n to it (firestore.Increment(n); INCREMENT adds one). A nested `Write` (a patch of a map
field) is written key by key as dotted paths (`lease.expires_at`), and a value with
`to_document()` (a whole map) as that map."""

from __future__ import annotations

import enum
from dataclasses import dataclass, fields
from typing import Any, Final, Literal

from google.cloud import firestore

from core.named_batch import NamedBatch


class Sentinel(enum.Enum):
    UNSET = "unset"
    DELETE = "delete"


@dataclass(frozen=True)
class Add:
    """Adds `n` to the stored number (a server-side increment)."""

    n: int


UNSET: Final = Sentinel.UNSET
DELETE: Final = Sentinel.DELETE
INCREMENT: Final = Add(1)
Unset = Literal[Sentinel.UNSET]
Delete = Literal[Sentinel.DELETE]


@dataclass(frozen=True, kw_only=True)
class Write:
    """The base of every collection's write: `to_document()` is what `update()`, `set()` or
    `create()` is given."""

    def to_document(self) -> dict[str, Any]:
        document: dict[str, Any] = {}
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, Write):
                document |= {f"{field.name}.{k}": v for k, v in value.to_document().items()}
            elif value is not UNSET:
                document[field.name] = stored(value)
        return document


def stored(value: Any) -> Any:
    """A write's value as the Firestore client takes it."""
    if value is DELETE:
        return firestore.DELETE_FIELD
    if isinstance(value, Add):
        return firestore.Increment(value.n)
    if hasattr(value, "to_document"):
        return value.to_document()
    return value


def write_as_read(
    batch: firestore.WriteBatch | NamedBatch,
    reference: firestore.DocumentReference,
    fields: dict[str, Any],
    read_at: Any | None,
) -> None:
    """Adds to `batch` a write of `fields` that lands only on the document as it was read:
    a create() when it was read absent (`read_at` None), else an update() conditioned on the
    update time it was read at. Either way a writer that came in between fails the batch."""
    if read_at is None:
        batch.create(reference, fields)
    else:
        option = firestore.Client.write_option(last_update_time=read_at)
        batch.update(reference, fields, option=option)
