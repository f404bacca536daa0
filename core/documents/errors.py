"""The stored error map (`last_error` on a subject, `error` on a ledger entry)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any


class ErrorField(enum.StrEnum):
    CODE = "code"
    MESSAGE = "message"
    AT = "at"


@dataclass(frozen=True)
class StoredError:
    """Why a send or a document failed: a machine-readable `code`, a `message` for people,
    and when (`at`; absent on errors found while computing a series' next occurrence)."""

    code: str | None
    message: str | None
    at: datetime | None = None

    def to_document(self) -> dict[str, Any]:
        document: dict[str, Any] = {ErrorField.CODE: self.code, ErrorField.MESSAGE: self.message}
        if self.at is not None:
            document[ErrorField.AT] = self.at
        return document
