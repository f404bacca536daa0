"""Slack's request signature: valid, fresh, and not seen before.

slack_sdk's SignatureVerifier checks the HMAC over `v0:{timestamp}:{raw body}` and that the
timestamp is within 5 minutes of now (the injected clock's). A signature taken once is
remembered in `interaction_signatures/{sha256}` by a create(), so a replay within the window
fails on any instance; past the window the timestamp alone refuses it, and Firestore's TTL
policy on `expires_at` deletes the record."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from google.api_core.exceptions import AlreadyExists
from slack_sdk.signature import Clock, SignatureVerifier

from core.documents.responses import SeenSignatureField
from core.runtime import Runtime
from core.store import INTERACTION_SIGNATURES

WINDOW = timedelta(minutes=5)


class _At(Clock):
    def __init__(self, now: datetime) -> None:
        self._now = now

    def now(self) -> float:
        return self._now.timestamp()


def refusal(rt: Runtime, body: bytes, headers: Mapping[str, str]) -> str | None:
    """Why the request is not Slack's, signed within the window (None: it is). Reads and
    writes nothing, so it is answered at once whatever Firestore's latency; whether it is
    Slack's first delivery of the request is `replayed`'s."""
    secret = rt.settings.slack_signing_secret
    if not secret:
        return "no_signing_secret"
    lowered = {name.lower(): value for name, value in headers.items()}
    timestamp = lowered.get("x-slack-request-timestamp")
    signature = lowered.get("x-slack-signature")
    if not timestamp or not signature:
        return "unsigned"
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        return "bad_timestamp"
    now = rt.clock.now()
    verifier = SignatureVerifier(secret, clock=_At(now))
    try:
        valid = verifier.is_valid(body, timestamp, signature)
    except UnicodeDecodeError:
        return "bad_body"
    if not valid:
        return "stale" if abs(now.timestamp() - int(timestamp)) > WINDOW.seconds else "forged"
    return None


def replayed(rt: Runtime, headers: Mapping[str, str]) -> str | None:
    """`replayed` when a request `refusal` let through was taken before (its signature's
    create() in Firestore fails), None on its first sight."""
    lowered = {name.lower(): value for name, value in headers.items()}
    signature, timestamp = lowered["x-slack-signature"], int(lowered["x-slack-request-timestamp"])
    key = hashlib.sha256(signature.encode()).hexdigest()
    expires_at = datetime.fromtimestamp(timestamp, UTC) + WINDOW
    try:
        rt.db.collection(INTERACTION_SIGNATURES).document(key).create(
            {SeenSignatureField.EXPIRES_AT.value: expires_at}
        )
    except AlreadyExists:
        return "replayed"
    return None
