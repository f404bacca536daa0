"""Who is calling: the admin token, a Google-signed OIDC ID token from an allowed trigger, or,
on the `api` target only, a person signed in to the composer page with Google.

Every HTTP target calls `authenticate` first. People are accepted only when the target's
AuthConfig carries `people` (core.http.auth_config does so for `api` alone), so a person's ID
token opens neither `tick` nor `deliver`. Failures raise `Unauthorized` with a message
that names what was wrong and never the token, and the library exception that caused it is
suppressed (`from None`): google-auth's own messages quote token segments verbatim, and a
chained traceback would carry them into the logs.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import google.auth.exceptions
import google.auth.transport
import google.auth.transport.requests
import requests
from google.oauth2 import id_token

from core.errors import Unauthorized

# Same value as google.oauth2.id_token._GOOGLE_OAUTH2_CERTS_URL (a private name, so it is
# restated here and a test pins the two together).
GOOGLE_OAUTH2_CERTS_URL = "https://www.googleapis.com/oauth2/v1/certs"

# What verify_oauth2_token accepts; restated because we call verify_token (to choose the
# certs URL) and so must check the issuer ourselves.
GOOGLE_ISSUERS = frozenset({"accounts.google.com", "https://accounts.google.com"})

# google-auth defaults to zero skew, which rejects a token minted a second "in the future"
# by a Google clock slightly ahead of ours.
_CLOCK_SKEW_SECONDS = 10

# The requests transport would otherwise wait 120 s, holding a tick far past any deadline.
_CERTS_TIMEOUT_SECONDS = 10

# Only a handful of certs URLs ever exist per process (one per config); the bound is there
# so a misconfiguration cannot grow the cache without limit.
_CERTS_CACHE_MAX_ENTRIES = 8

# Google publishes keys well before signing with them and advertises a few hours; a day caps
# the damage of a broken or hostile Cache-Control header.
_CERTS_CACHE_MAX_LIFETIME_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Principal:
    kind: Literal["admin", "service_account", "person"]
    email: str | None


@dataclass(frozen=True)
class People:
    """Who may sign in to the composer page: ID tokens minted by Google Identity Services for
    the page's OAuth client, from an allowed email (COMPOSER_USERS: lower-case emails, or
    `@domain` for every account of a Google Workspace domain)."""

    client_id: str
    users: frozenset[str]


@dataclass(frozen=True)
class AuthConfig:
    admin_token: str | None
    audience: str | None
    allowed_emails: frozenset[str]
    certs_url: str = GOOGLE_OAUTH2_CERTS_URL
    # None on every target but `api`: no person's token is accepted there.
    people: People | None = None


class _CachedResponse(google.auth.transport.Response):
    def __init__(self, data: bytes) -> None:
        self._data = data

    @property
    def status(self) -> int:
        return 200

    @property
    def headers(self) -> Mapping[str, str]:
        return {}

    @property
    def data(self) -> bytes:
        return self._data


class _CertsCache:
    """Certificate bodies by URL, kept for the response's Cache-Control max-age.

    google-auth's `verify_token` fetches the certs URL on every call and caches nothing; its
    docs leave caching to the transport (CacheControl), which is not a dependency here.
    """

    def __init__(
        self,
        max_entries: int = _CERTS_CACHE_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_entries = max_entries
        self._clock = clock
        # Functions-framework serves requests on threads; the lock guards only the dict, so
        # two concurrent misses may both fetch, which is cheaper than serialising the fetch.
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[float, bytes]] = OrderedDict()

    def fetch(
        self, request: google.auth.transport.Request, certs_url: str
    ) -> google.auth.transport.Response:
        now = self._clock()
        with self._lock:
            entry = self._entries.get(certs_url)
            if entry is not None:
                expires_at, cached = entry
                if now < expires_at:
                    return _CachedResponse(cached)
                del self._entries[certs_url]

        response: google.auth.transport.Response = request(
            certs_url, method="GET", timeout=_CERTS_TIMEOUT_SECONDS
        )
        if response.status != 200:
            # verify_token turns a non-200 into a TransportError; nothing worth keeping.
            return response
        data: bytes = response.data
        _require_pem_mapping(data, certs_url)

        lifetime = min(_fresh_lifetime(response.headers), _CERTS_CACHE_MAX_LIFETIME_SECONDS)
        if lifetime > 0:
            with self._lock:
                self._entries[certs_url] = (now + lifetime, data)
                self._entries.move_to_end(certs_url)
                while len(self._entries) > self._max_entries:
                    self._entries.popitem(last=False)
        return response

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


class _CachedCertsRequest(google.auth.transport.Request):
    """The transport handed to verify_token: its certs GET goes through the cache."""

    def __init__(
        self, inner: google.auth.transport.Request, cache: _CertsCache, certs_url: str
    ) -> None:
        self._inner = inner
        self._cache = cache
        self._certs_url = certs_url

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> google.auth.transport.Response:
        if method == "GET" and url == self._certs_url and body is None and not kwargs:
            return self._cache.fetch(self._inner, url)
        response: google.auth.transport.Response = self._inner(
            url, method=method, body=body, headers=headers, timeout=timeout, **kwargs
        )
        return response


def _fresh_lifetime(headers: Mapping[str, str]) -> int:
    """Seconds the response may still be reused: max-age minus Age, 0 when uncacheable."""
    lowered = {name.lower(): value for name, value in headers.items()}
    max_age: int | None = None
    for directive in lowered.get("cache-control", "").split(","):
        name, _, value = directive.strip().partition("=")
        name = name.strip().lower()
        if name in ("no-store", "no-cache", "private"):
            return 0
        if name == "max-age":
            try:
                max_age = int(value.strip().strip('"'))
            except ValueError:
                return 0
    if max_age is None:
        return 0
    # A shared cache in front of Google may hand us a copy that is already hours old.
    try:
        age = int(lowered.get("age", "0").strip())
    except ValueError:
        age = 0
    return max(0, max_age - max(0, age))


def _require_pem_mapping(data: bytes, certs_url: str) -> None:
    # verify_token sends a JWK set ({"keys": [...]}) down a PyJWT path that is not installed,
    # ignores our clock skew and raises outside google.auth's exception types; only the
    # {kid: PEM certificate} shape that google.auth.jwt.decode handles is accepted.
    try:
        certs = json.loads(data.decode("utf-8"))
    except ValueError:
        certs = None
    if (
        not isinstance(certs, dict)
        or "keys" in certs
        or not all(isinstance(v, str) for v in certs.values())
    ):
        # google-auth's exception constructors are unannotated.
        raise google.auth.exceptions.TransportError(  # type: ignore[no-untyped-call]
            f"{certs_url} did not return a {{key id: PEM certificate}} mapping"
        )


_CERTS_CACHE = _CertsCache()

# One session for the process so connections to the certs endpoint are pooled and reused.
_DEFAULT_REQUEST = google.auth.transport.requests.Request(session=requests.Session())


def authenticate(
    authorization: str | None,
    config: AuthConfig,
    http_request: google.auth.transport.Request | None = None,
) -> Principal:
    token = _bearer_token(authorization)

    if config.admin_token and _constant_time_equal(token, config.admin_token):
        return Principal(kind="admin", email=None)

    # Anything that cannot be a JWT is a wrong admin token; checking first keeps garbage
    # from costing a certs fetch.
    parts = token.split(".")
    if len(parts) != 3 or not all(parts):
        raise Unauthorized("invalid bearer token")
    if config.audience is None and config.people is None:
        raise Unauthorized("ID token cannot be verified: TICK_AUDIENCE is not configured")

    claims = _verify_id_token(token, config, http_request or _DEFAULT_REQUEST)

    if claims.get("iss") not in GOOGLE_ISSUERS:
        raise Unauthorized("ID token was not issued by Google")
    # Checked here rather than by passing audience= to verify_token, whose failure cannot be
    # told apart from a bad signature; the test is the same exact string match it performs.
    # The audience alone tells a person's token from a trigger's: each is held to its own list.
    audience = claims.get("aud")
    if config.people is not None and audience == config.people.client_id:
        return _person(claims, config.people)
    if config.audience is None or audience != config.audience:
        expected = (
            "TICK_AUDIENCE" if config.people is None else "TICK_AUDIENCE or COMPOSER_CLIENT_ID"
        )
        raise Unauthorized(f"ID token audience does not match {expected}")
    email = _verified_email(claims)
    # Google reports service-account emails in lower case; TRIGGER_SERVICE_ACCOUNTS is typed
    # by people, so case must not decide.
    if email.lower() not in {allowed.lower() for allowed in config.allowed_emails}:
        raise Unauthorized("ID token email is not in TRIGGER_SERVICE_ACCOUNTS")
    return Principal(kind="service_account", email=email)


def _person(claims: Mapping[str, Any], people: People) -> Principal:
    email = _verified_email(claims)
    if email.lower() in people.users:
        return Principal(kind="person", email=email)
    domain = email.rpartition("@")[2].lower()
    if f"@{domain}" not in people.users:
        raise Unauthorized("ID token email is not in COMPOSER_USERS")
    # Anyone can make a Google account for an address at any domain; only `hd` says the
    # account belongs to that domain's Google Workspace (Google's advice for domain sign-in).
    hosted = claims.get("hd")
    if not isinstance(hosted, str) or hosted.lower() != domain:
        raise Unauthorized("ID token hd claim does not match the COMPOSER_USERS domain")
    return Principal(kind="person", email=email)


def _verified_email(claims: Mapping[str, Any]) -> str:
    email = claims.get("email")
    if not isinstance(email, str) or not email:
        raise Unauthorized("ID token has no email claim")
    # A JSON true only: a string "false" is truthy.
    if claims.get("email_verified") is not True:
        raise Unauthorized("ID token email is not verified")
    return email


def _bearer_token(authorization: str | None) -> str:
    if not authorization or not authorization.strip():
        raise Unauthorized("missing bearer token")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise Unauthorized("Authorization scheme must be Bearer")
    token = token.strip()
    if not token:
        raise Unauthorized("missing bearer token")
    return token


def _constant_time_equal(given: str, expected: str) -> bool:
    # Hashing first keeps compare_digest from leaking the admin token's length and lets it
    # take non-ASCII text (it refuses non-ASCII str); surrogatepass because os.environ
    # smuggles undecodable bytes in as lone surrogates.
    return hmac.compare_digest(
        hashlib.sha256(given.encode("utf-8", "surrogatepass")).digest(),
        hashlib.sha256(expected.encode("utf-8", "surrogatepass")).digest(),
    )


def _verify_id_token(
    token: str, config: AuthConfig, http_request: google.auth.transport.Request
) -> Mapping[str, Any]:
    # verify_token rather than verify_oauth2_token: the latter hard-codes Google's certs URL,
    # and AuthConfig.certs_url must be honoured (the emulator and tests serve their own).
    request = _CachedCertsRequest(http_request, _CERTS_CACHE, config.certs_url)
    try:
        return id_token.verify_token(
            token,
            request,
            audience=None,
            certs_url=config.certs_url,
            clock_skew_in_seconds=_CLOCK_SKEW_SECONDS,
        )
    except google.auth.exceptions.TransportError:
        raise Unauthorized("ID token cannot be verified: Google certificates unavailable") from None
    except (google.auth.exceptions.GoogleAuthError, ValueError):
        # Expired, bad signature, unknown key id and malformed all land here; the library's
        # message would tell which, but it quotes the token, so only the verdict is kept.
        raise Unauthorized("invalid ID token") from None
