"""`idempotency_keys/{sha256 of key}`: what one `Idempotency-Key` created (composer.idempotency).
A TTL policy on `expires_at` deletes a key a day after its use."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from core.documents.write import Write


class KeyField(enum.StrEnum):
    ROUTE = "route"
    BODY_SHA256 = "body_sha256"
    TARGET_ID = "target_id"  # the id of the record the first request created
    CREATED_AT = "created_at"
    EXPIRES_AT = "expires_at"


@dataclass(frozen=True, kw_only=True)
class KeyWrite(Write):
    """A key as its first use writes it (whole)."""

    route: str
    body_sha256: str
    target_id: str
    created_at: datetime
    expires_at: datetime
