"""Bot Framework's JWT on inbound Teams activities (the `teams` target), checked by the Teams
SDK's TokenValidator: RS256, issuer `https://api.botframework.com`, audience TEAMS_APP_ID,
`exp`/`nbf`/`iat` (the SDK allows 300 s of clock skew), a key of the Bot Framework key set,
and the `serviceurl` claim equal to the activity's `serviceUrl`.

The key set's URL is the `jwks_uri` of the OpenID metadata document at
TEAMS_OPENID_METADATA_URL, read by us (the SDK would guess it from the URL's shape) and read
again after a day, as Microsoft's own SDKs do. The keys are PyJWT's `PyJWKClient`'s: the set
is kept 5 minutes, and a token whose `kid` is not in it makes one fetch of the set, at most
once per KEY_REFRESH_COOLDOWN_SECONDS (PyJWT's 30 s). So a flood of tokens naming made-up
keys costs one fetch per 30 s per instance, not one per request; the price is that a key
first used within 30 s of our last fetch, and not yet published then, is refused until the
cooldown has passed (Microsoft publishes its keys well before signing with them).

One validator per process and settings (`inbound_validator`): it owns the key cache.
Failures raise `Unauthorized` whose message says what was wrong, never the token: PyJWT's
messages do not quote it, and none is chained (`from None`)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import jwt
import requests
from microsoft_teams.apps.auth import token_validator
from microsoft_teams.apps.auth.token_validator import JwtValidationOptions, TokenValidator

from core.errors import Unauthorized

BOT_FRAMEWORK_ISSUER = "https://api.botframework.com"
# PyJWT's own default, restated: at most one refetch of the key set per this many seconds
# for a `kid` it does not hold.
KEY_REFRESH_COOLDOWN_SECONDS = 30.0
# Microsoft's SDKs read the metadata document again after 24 hours.
METADATA_LIFETIME_SECONDS = 24 * 3600
# Teams gives a bot 15 s to answer an activity; a key fetch must not take them all.
_FETCH_TIMEOUT_SECONDS = 5

# The SDK logs each refusal as a plain-text ERROR line; ours are JSON (core.logs), one WARNING
# per refused request (targets.teams), so a stranger's bad token does not page anyone.
logging.getLogger(token_validator.__name__).disabled = True


class KeySetUnavailable(Exception):
    """The metadata document or the key set could not be read."""


class InboundValidator:
    """Validates the bearer tokens of inbound activities for one app id and metadata URL."""

    def __init__(
        self,
        app_id: str,
        metadata_url: str,
        *,
        cooldown_seconds: float = KEY_REFRESH_COOLDOWN_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._app_id = app_id
        self._metadata_url = metadata_url
        self._cooldown = cooldown_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._validator: TokenValidator | None = None
        self._read_at = 0.0

    def claims(self, authorization: str | None, service_url: str | None) -> dict[str, Any]:
        """The token's claims, once it is Bot Framework's, for our app, current, and (when
        `service_url` is given) issued for that service URL; else `Unauthorized`."""
        token = _bearer_token(authorization)
        # Anything that cannot be a JWT is refused before it can cost a fetch.
        parts = token.split(".")
        if len(parts) != 3 or not all(parts):
            raise Unauthorized("invalid bearer token")
        try:
            validator = self._current()
            return asyncio.run(validator.validate_token(token, service_url=service_url))
        except KeySetUnavailable:
            raise Unauthorized(
                "token cannot be verified: Bot Framework signing keys unavailable"
            ) from None
        except jwt.PyJWKClientConnectionError:
            raise Unauthorized(
                "token cannot be verified: Bot Framework signing keys unavailable"
            ) from None
        except jwt.PyJWKClientError:
            raise Unauthorized("token signed by an unknown key") from None
        except jwt.PyJWTError as exc:
            raise Unauthorized(f"invalid token: {_reason(exc)}") from None

    def _current(self) -> TokenValidator:
        """The SDK's validator over the key set the metadata document names, built on first
        use and again once the document is a day old (the one in hand is kept while the
        document cannot be read again)."""
        with self._lock:
            now = self._clock()
            if self._validator is None or now - self._read_at >= METADATA_LIFETIME_SECONDS:
                try:
                    jwks_uri = _jwks_uri(self._metadata_url)
                except KeySetUnavailable:
                    if self._validator is None:
                        raise
                    return self._validator
                options = JwtValidationOptions(
                    valid_issuers=[BOT_FRAMEWORK_ISSUER],
                    valid_audiences=[self._app_id],
                    jwks_uri=jwks_uri,
                )
                validator = TokenValidator(options)
                # The SDK builds its PyJWKClient with PyJWT's defaults (a 30 s fetch timeout);
                # ours answers within Teams' time and states the cooldown it documents.
                validator._jwks_client = jwt.PyJWKClient(
                    jwks_uri,
                    timeout=_FETCH_TIMEOUT_SECONDS,
                    cooldown_duration=self._cooldown,
                )
                self._validator, self._read_at = validator, now
            return self._validator


def _jwks_uri(metadata_url: str) -> str:
    try:
        answer = requests.get(metadata_url, timeout=_FETCH_TIMEOUT_SECONDS)
        answer.raise_for_status()
        document = answer.json()
    except (requests.RequestException, ValueError):
        raise KeySetUnavailable(f"{metadata_url} could not be read") from None
    uri = document.get("jwks_uri") if isinstance(document, dict) else None
    if not isinstance(uri, str) or not uri.startswith(("https://", "http://")):
        raise KeySetUnavailable(f"{metadata_url} names no jwks_uri")
    return uri


def _reason(exc: jwt.PyJWTError) -> str:
    """What was wrong, in words of ours (PyJWT's do not quote the token, but stay terse)."""
    reasons: tuple[tuple[type[jwt.PyJWTError], str], ...] = (
        (jwt.ExpiredSignatureError, "expired"),
        (jwt.ImmatureSignatureError, "not valid yet"),
        (jwt.InvalidAudienceError, "audience is not TEAMS_APP_ID"),
        (jwt.InvalidIssuerError, "issuer is not Bot Framework"),
        (jwt.InvalidSignatureError, "bad signature"),
        (jwt.MissingRequiredClaimError, "a required claim is missing"),
        (jwt.InvalidAlgorithmError, "not signed with RS256"),
        (jwt.DecodeError, "malformed"),
    )
    for kind, reason in reasons:
        if isinstance(exc, kind):
            return reason
    if "serviceurl" in str(exc).lower() or "service url" in str(exc).lower():
        return "serviceurl claim does not match the activity's serviceUrl"
    return "rejected"


def _bearer_token(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("missing bearer token")
    return token.strip()


_VALIDATORS: dict[tuple[str, str], InboundValidator] = {}
_VALIDATORS_LOCK = threading.Lock()


def inbound_validator(app_id: str, metadata_url: str) -> InboundValidator:
    """This process's validator for `app_id` and `metadata_url` (one: it owns the keys)."""
    with _VALIDATORS_LOCK:
        found = _VALIDATORS.get((app_id, metadata_url))
        if found is None:
            found = InboundValidator(
                app_id, metadata_url, cooldown_seconds=KEY_REFRESH_COOLDOWN_SECONDS
            )
            _VALIDATORS[(app_id, metadata_url)] = found
        return found


def forget_validators() -> None:
    """Drops every validator and its keys (tests: each starts from an empty cache)."""
    with _VALIDATORS_LOCK:
        _VALIDATORS.clear()
