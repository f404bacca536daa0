"""authenticate() against real RS256 ID tokens and a certs endpoint on 127.0.0.1: the full
google-auth verification path runs, and nothing leaves the machine."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

import google.auth.transport
import google.auth.transport.requests
import pytest
import requests
from google.auth import _helpers
from google.oauth2 import id_token

from core import auth
from core.auth import AuthConfig, People, Principal, authenticate
from core.errors import Unauthorized
from tests.fixtures.oidc import (
    AUDIENCE,
    CLIENT_ID,
    KID,
    PERSON,
    TRIGGER,
    CertsServer,
    mint,
    mint_person,
)
from tests.fixtures.oidc import DROP as _DROP

ADMIN = "s3cret-admin-token"

pytestmark = pytest.mark.usefixtures("fresh_certs_cache")


# --- helpers ----------------------------------------------------------------------------


@pytest.fixture
def transport() -> Iterator[google.auth.transport.requests.Request]:
    session = requests.Session()
    # A developer's HTTP(S)_PROXY must not capture the 127.0.0.1 certs fetch.
    session.trust_env = False
    yield google.auth.transport.requests.Request(session=session)
    session.close()


def config(server: CertsServer, **overrides: Any) -> AuthConfig:
    values: dict[str, Any] = {
        "admin_token": ADMIN,
        "audience": AUDIENCE,
        "allowed_emails": frozenset({TRIGGER}),
        "certs_url": server.url,
    }
    values.update(overrides)
    return AuthConfig(**values)


def rejected(
    header: str | None,
    cfg: AuthConfig,
    http: google.auth.transport.Request | None,
) -> Unauthorized:
    with pytest.raises(Unauthorized) as caught:
        authenticate(header, cfg, http)
    return caught.value


# --- admin token --------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_admin_token_is_accepted_with_any_case_of_scheme(certs_server, transport, scheme):
    principal = authenticate(f"{scheme} {ADMIN}", config(certs_server), transport)
    assert principal == Principal(kind="admin", email=None)
    assert certs_server.hits == 0


@pytest.mark.parametrize("header", [None, "", "   ", "Bearer", "Bearer ", "Bearer    "])
def test_missing_token_is_rejected(certs_server, transport, header):
    err = rejected(header, config(certs_server), transport)
    assert err.message == "missing bearer token"
    assert err.status == 401
    assert err.code == "unauthorized"


@pytest.mark.parametrize("header", [f"Basic {ADMIN}", f"Token {ADMIN}", ADMIN])
def test_non_bearer_scheme_is_rejected(certs_server, transport, header):
    err = rejected(header, config(certs_server), transport)
    assert err.message == "Authorization scheme must be Bearer"


@pytest.mark.parametrize("token", ["wrong", ADMIN + "x", ADMIN[:-1], ADMIN.upper(), "é" * 8])
def test_wrong_admin_token_is_rejected(certs_server, transport, token):
    err = rejected(f"Bearer {token}", config(certs_server), transport)
    assert err.message == "invalid bearer token"
    assert certs_server.hits == 0


@pytest.mark.parametrize("admin_token", ["", None])
@pytest.mark.parametrize("header", ["Bearer ", "Bearer", 'Bearer ""'])
def test_unset_admin_token_never_matches_an_empty_bearer(
    certs_server, transport, admin_token, header
):
    err = rejected(header, config(certs_server, admin_token=admin_token), transport)
    assert err.status == 401


def test_admin_token_disabled_when_unset(certs_server, transport):
    err = rejected(f"Bearer {ADMIN}", config(certs_server, admin_token=None), transport)
    assert err.message == "invalid bearer token"


# --- OIDC ID tokens -----------------------------------------------------------------------


def test_valid_id_token_from_allowed_email_is_accepted(certs_server, transport, signing_key):
    principal = authenticate(f"Bearer {mint(signing_key)}", config(certs_server), transport)
    assert principal == Principal(kind="service_account", email=TRIGGER)


def test_valid_id_token_accepted_without_admin_token(certs_server, transport, signing_key):
    cfg = config(certs_server, admin_token=None)
    principal = authenticate(f"Bearer {mint(signing_key)}", cfg, transport)
    assert principal.kind == "service_account"


def test_bare_issuer_form_is_accepted(certs_server, transport, signing_key):
    token = mint(signing_key, iss="accounts.google.com")
    assert authenticate(f"Bearer {token}", config(certs_server), transport).email == TRIGGER


def test_allow_list_match_ignores_case(certs_server, transport, signing_key):
    cfg = config(certs_server, allowed_emails=frozenset({TRIGGER.upper()}))
    assert authenticate(f"Bearer {mint(signing_key)}", cfg, transport).email == TRIGGER


def test_small_clock_skew_is_tolerated(certs_server, transport, signing_key):
    token = mint(signing_key, now=time.time() + 5)
    assert authenticate(f"Bearer {token}", config(certs_server), transport).kind == (
        "service_account"
    )


def test_wrong_audience_is_rejected(certs_server, transport, signing_key):
    token = mint(signing_key, aud="https://elsewhere.example.test/")
    err = rejected(f"Bearer {token}", config(certs_server), transport)
    assert err.message == "ID token audience does not match TICK_AUDIENCE"


def test_list_audience_is_rejected(certs_server, transport, signing_key):
    # google-auth's own check is an exact string match too; a list never equals it.
    token = mint(signing_key, aud=[AUDIENCE])
    err = rejected(f"Bearer {token}", config(certs_server), transport)
    assert err.message == "ID token audience does not match TICK_AUDIENCE"


def test_email_not_in_allow_list_is_rejected(certs_server, transport, signing_key):
    token = mint(signing_key, email="intruder@other-project.iam.gserviceaccount.com")
    err = rejected(f"Bearer {token}", config(certs_server), transport)
    assert err.message == "ID token email is not in TRIGGER_SERVICE_ACCOUNTS"


def test_empty_allow_list_rejects_every_id_token(certs_server, transport, signing_key):
    cfg = config(certs_server, allowed_emails=frozenset())
    err = rejected(f"Bearer {mint(signing_key)}", cfg, transport)
    assert err.message == "ID token email is not in TRIGGER_SERVICE_ACCOUNTS"


@pytest.mark.parametrize("verified", [False, "true", 1, _DROP])
def test_unverified_email_is_rejected(certs_server, transport, signing_key, verified):
    token = mint(signing_key, email_verified=verified)
    err = rejected(f"Bearer {token}", config(certs_server), transport)
    assert err.message == "ID token email is not verified"


@pytest.mark.parametrize("email", [_DROP, "", 42])
def test_missing_email_is_rejected(certs_server, transport, signing_key, email):
    err = rejected(f"Bearer {mint(signing_key, email=email)}", config(certs_server), transport)
    assert err.message == "ID token has no email claim"


def test_expired_token_is_rejected(certs_server, transport, signing_key):
    token = mint(signing_key, now=time.time() - 7200, lifetime=3600)
    err = rejected(f"Bearer {token}", config(certs_server), transport)
    assert err.message == "invalid ID token"


def test_token_from_the_future_is_rejected(certs_server, transport, signing_key):
    token = mint(signing_key, now=time.time() + 600)
    err = rejected(f"Bearer {token}", config(certs_server), transport)
    assert err.message == "invalid ID token"


def test_token_signed_by_another_key_with_same_kid_is_rejected(certs_server, transport, other_key):
    err = rejected(f"Bearer {mint(other_key)}", config(certs_server), transport)
    assert err.message == "invalid ID token"


def test_unknown_kid_is_rejected(certs_server, transport, signing_key):
    token = mint(signing_key, kid="rotated-away")
    err = rejected(f"Bearer {token}", config(certs_server), transport)
    assert err.message == "invalid ID token"


@pytest.mark.parametrize(
    "iss", ["https://evil.example.test", "https://securetoken.google.com/demo", _DROP]
)
def test_wrong_issuer_is_rejected(certs_server, transport, signing_key, iss):
    err = rejected(f"Bearer {mint(signing_key, iss=iss)}", config(certs_server), transport)
    assert err.message == "ID token was not issued by Google"


def test_tampered_payload_is_rejected(certs_server, transport, signing_key):
    header, _, signature = mint(signing_key).split(".")
    forged_claims = mint(signing_key, email="intruder@evil.test").split(".")[1]
    err = rejected(f"Bearer {header}.{forged_claims}.{signature}", config(certs_server), transport)
    assert err.message == "invalid ID token"


def test_unsigned_alg_none_token_is_rejected(certs_server, transport, signing_key):
    real = mint(signing_key).split(".")
    none_header = _helpers.unpadded_urlsafe_b64encode(
        json.dumps({"alg": "none", "typ": "JWT", "kid": KID}).encode()
    ).decode()
    err = rejected(f"Bearer {none_header}.{real[1]}.{real[2]}", config(certs_server), transport)
    assert err.message == "invalid ID token"


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("not-a-jwt", "invalid bearer token"),
        ("a.b", "invalid bearer token"),
        ("a..c", "invalid bearer token"),
        ("a.b.c.d", "invalid bearer token"),
        ("aaaa.bbbb.cccc", "invalid ID token"),
        ("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.!!!!", "invalid ID token"),
        ("W10.W10.AAAA", "invalid ID token"),  # header and payload are JSON lists
    ],
)
def test_garbage_token_is_rejected(certs_server, transport, token, message):
    err = rejected(f"Bearer {token}", config(certs_server), transport)
    assert err.message == message


def test_id_token_rejected_when_audience_not_configured(certs_server, transport, signing_key):
    err = rejected(f"Bearer {mint(signing_key)}", config(certs_server, audience=None), transport)
    assert err.message == "ID token cannot be verified: TICK_AUDIENCE is not configured"
    assert certs_server.hits == 0


# --- people signed in to the composer page (the api target's config only) -------------------


def api_config(server: CertsServer, users: frozenset[str], **overrides: Any) -> AuthConfig:
    """The `api` target's config: triggers as on `tick`, and people for CLIENT_ID."""
    return config(server, people=People(CLIENT_ID, users), **overrides)


def test_a_listed_person_is_accepted(certs_server, transport, signing_key):
    cfg = api_config(certs_server, frozenset({"ben@example.test", PERSON}))
    principal = authenticate(f"Bearer {mint_person(signing_key)}", cfg, transport)
    assert principal == Principal(kind="person", email=PERSON)


def test_a_person_is_accepted_without_tick_audience(certs_server, transport, signing_key):
    cfg = api_config(certs_server, frozenset({PERSON}), audience=None)
    assert authenticate(f"Bearer {mint_person(signing_key)}", cfg, transport).kind == "person"


def test_a_persons_email_is_matched_whatever_its_case(certs_server, transport, signing_key):
    token = mint_person(signing_key, email="Ana@Example.TEST")
    cfg = api_config(certs_server, frozenset({PERSON}))
    assert authenticate(f"Bearer {token}", cfg, transport).email == "Ana@Example.TEST"


def test_a_domain_entry_admits_its_workspace_accounts(certs_server, transport, signing_key):
    token = mint_person(signing_key, email="cem@corp.example.test", hd="corp.example.test")
    cfg = api_config(certs_server, frozenset({"@corp.example.test"}))
    assert authenticate(f"Bearer {token}", cfg, transport) == Principal(
        kind="person", email="cem@corp.example.test"
    )


@pytest.mark.parametrize("hd", [_DROP, "other.example.test", "", 7])
def test_a_domain_entry_needs_the_hd_claim_of_that_domain(certs_server, transport, signing_key, hd):
    # A consumer Google account can be made for any address; only `hd` proves the domain.
    token = mint_person(signing_key, email="cem@corp.example.test", hd=hd)
    err = rejected(
        f"Bearer {token}", api_config(certs_server, frozenset({"@corp.example.test"})), transport
    )
    assert err.message == "ID token hd claim does not match the COMPOSER_USERS domain"


@pytest.mark.parametrize(
    "email", ["eve@example.test", "ana@sub.example.test", "ana@example.test.evil.test"]
)
def test_a_person_not_listed_is_rejected(certs_server, transport, signing_key, email):
    cfg = api_config(certs_server, frozenset({PERSON, "@corp.example.test"}))
    err = rejected(f"Bearer {mint_person(signing_key, email=email)}", cfg, transport)
    assert err.message == "ID token email is not in COMPOSER_USERS"


def test_no_one_signs_in_with_an_empty_list(certs_server, transport, signing_key):
    err = rejected(
        f"Bearer {mint_person(signing_key)}", api_config(certs_server, frozenset()), transport
    )
    assert err.message == "ID token email is not in COMPOSER_USERS"


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        ({"email_verified": False}, "ID token email is not verified"),
        ({"email": _DROP}, "ID token has no email claim"),
        ({"iss": "https://evil.example.test"}, "ID token was not issued by Google"),
        (
            {"aud": "987-other-page.apps.googleusercontent.com"},
            "ID token audience does not match TICK_AUDIENCE or COMPOSER_CLIENT_ID",
        ),
        ({"now": time.time() - 7200}, "invalid ID token"),
    ],
)
def test_a_listed_persons_bad_token_is_rejected(
    certs_server, transport, signing_key, claims, message
):
    cfg = api_config(certs_server, frozenset({PERSON}))
    err = rejected(f"Bearer {mint_person(signing_key, **claims)}", cfg, transport)
    assert err.message == message


def test_a_person_is_never_accepted_where_people_are_not(certs_server, transport, signing_key):
    # The tick's and deliver's config: no people, even with the person listed as a trigger.
    cfg = config(certs_server, allowed_emails=frozenset({TRIGGER, PERSON}))
    err = rejected(f"Bearer {mint_person(signing_key)}", cfg, transport)
    assert err.message == "ID token audience does not match TICK_AUDIENCE"


def test_a_trigger_is_still_accepted_where_people_are(certs_server, transport, signing_key):
    cfg = api_config(certs_server, frozenset({PERSON}))
    principal = authenticate(f"Bearer {mint(signing_key)}", cfg, transport)
    assert principal == Principal(kind="service_account", email=TRIGGER)


def test_a_person_cannot_pass_as_a_trigger_nor_a_trigger_as_a_person(
    certs_server, transport, signing_key
):
    # Each audience is held to its own list: a listed person's token minted for the trigger
    # audience, and a trigger's token minted for the page, are both refused.
    cfg = api_config(certs_server, frozenset({PERSON}))
    as_trigger = rejected(f"Bearer {mint(signing_key, email=PERSON)}", cfg, transport)
    assert as_trigger.message == "ID token email is not in TRIGGER_SERVICE_ACCOUNTS"
    as_person = rejected(f"Bearer {mint_person(signing_key, email=TRIGGER)}", cfg, transport)
    assert as_person.message == "ID token email is not in COMPOSER_USERS"


# --- secrecy of the token ---------------------------------------------------------------


def _failing_tokens(signing_key, other_key) -> list[str]:
    return [
        "wrong-admin-token-value",
        "aaaa.bbbb.cccc",
        "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.!!!!",
        mint(signing_key, aud="https://elsewhere.example.test/"),
        mint(signing_key, email="intruder@evil.test"),
        mint(signing_key, email_verified=False),
        mint(signing_key, now=time.time() - 7200),
        mint(signing_key, iss="https://evil.example.test"),
        mint(other_key),
        mint(signing_key, kid="unknown"),
    ]


def _failing_person_tokens(signing_key, other_key) -> list[str]:
    return [
        mint_person(signing_key, email="eve@example.test"),
        mint_person(signing_key, email="cem@corp.example.test", hd="elsewhere.test"),
        mint_person(signing_key, email_verified=False),
        mint_person(signing_key, aud="987-other-page.apps.googleusercontent.com"),
        mint_person(other_key),
    ]


def test_token_never_appears_in_the_error(certs_server, transport, signing_key, other_key):
    api = api_config(certs_server, frozenset({PERSON, "@corp.example.test"}))
    failing = [(t, config(certs_server)) for t in _failing_tokens(signing_key, other_key)]
    failing += [(t, api) for t in _failing_person_tokens(signing_key, other_key)]
    for token, cfg in failing:
        err = rejected(f"Bearer {token}", cfg, transport)
        rendered = " ".join([str(err), err.message, json.dumps(err.body()), repr(err)])
        for piece in [token, *(p for p in token.split(".") if len(p) > 3)]:
            assert piece not in rendered
        # The library exception quotes the token; it must not ride along into a traceback.
        assert err.__cause__ is None
        assert err.__context__ is None or err.__suppress_context__


# --- certs fetching and caching -----------------------------------------------------------


def test_default_certs_url_matches_google_auth():
    assert AuthConfig(None, None, frozenset()).certs_url == id_token._GOOGLE_OAUTH2_CERTS_URL
    assert frozenset(id_token._GOOGLE_ISSUERS) == auth.GOOGLE_ISSUERS


def test_module_default_transport_is_used_when_none_given(
    certs_server, transport, signing_key, monkeypatch
):
    assert isinstance(auth._DEFAULT_REQUEST, google.auth.transport.requests.Request)
    monkeypatch.setattr(auth, "_DEFAULT_REQUEST", transport)
    assert authenticate(f"Bearer {mint(signing_key)}", config(certs_server)).email == TRIGGER
    assert certs_server.hits == 1


def test_certs_are_fetched_once_within_max_age(certs_server, transport, signing_key):
    cfg = config(certs_server)
    for _ in range(3):
        authenticate(f"Bearer {mint(signing_key)}", cfg, transport)
    assert certs_server.hits == 1


@pytest.mark.parametrize(
    "cache_control",
    ["no-store", "no-cache, max-age=300", "private, max-age=300", "max-age=0", "max-age=x", ""],
)
def test_uncacheable_certs_are_fetched_every_time(
    certs_server, transport, signing_key, cache_control
):
    certs_server.headers = {"Cache-Control": cache_control} if cache_control else {}
    cfg = config(certs_server)
    for _ in range(2):
        authenticate(f"Bearer {mint(signing_key)}", cfg, transport)
    assert certs_server.hits == 2


def test_age_header_eats_into_max_age(certs_server, transport, signing_key):
    certs_server.headers = {"Cache-Control": "max-age=300", "Age": "300"}
    cfg = config(certs_server)
    for _ in range(2):
        authenticate(f"Bearer {mint(signing_key)}", cfg, transport)
    assert certs_server.hits == 2


def test_certs_fetch_failure_is_unauthorized_and_not_cached(certs_server, transport, signing_key):
    certs_server.status = 503
    certs_server.body = b'{"error": "unavailable"}'
    err = rejected(f"Bearer {mint(signing_key)}", config(certs_server), transport)
    assert err.message == "ID token cannot be verified: Google certificates unavailable"
    assert len(auth._CERTS_CACHE) == 0


def test_unreachable_certs_endpoint_is_unauthorized(certs_server, transport, signing_key):
    cfg = config(certs_server, certs_url="http://127.0.0.1:9/certs")
    err = rejected(f"Bearer {mint(signing_key)}", cfg, transport)
    assert err.message == "ID token cannot be verified: Google certificates unavailable"


@pytest.mark.parametrize("body", [b'{"keys": []}', b"[]", b"not json", b'{"k": 1}', b"\xff\xfe"])
def test_certs_body_of_the_wrong_shape_is_refused(certs_server, transport, signing_key, body):
    certs_server.body = body
    err = rejected(f"Bearer {mint(signing_key)}", config(certs_server), transport)
    assert err.message == "ID token cannot be verified: Google certificates unavailable"
    assert len(auth._CERTS_CACHE) == 0


class _FakeResponse(google.auth.transport.Response):
    def __init__(self, headers: Mapping[str, str]) -> None:
        self._headers = dict(headers)

    @property
    def status(self) -> int:
        return 200

    @property
    def headers(self) -> Mapping[str, str]:
        return self._headers

    @property
    def data(self) -> bytes:
        return b'{"kid": "-----BEGIN CERTIFICATE-----"}'


class _CountingRequest(google.auth.transport.Request):
    def __init__(self, headers: Mapping[str, str]) -> None:
        self.headers = headers
        self.urls: list[str] = []

    def __call__(self, url, method="GET", body=None, headers=None, timeout=None, **kwargs):
        self.urls.append(url)
        assert timeout is not None  # the 120 s transport default must never apply
        return _FakeResponse(self.headers)


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_cache_entry_expires_after_max_age():
    clock = _Clock()
    cache = auth._CertsCache(clock=clock)
    inner = _CountingRequest({"cache-control": "public, max-age=60"})
    cache.fetch(inner, "https://certs.test/a")
    clock.now += 59
    cache.fetch(inner, "https://certs.test/a")
    assert len(inner.urls) == 1
    clock.now += 1
    cache.fetch(inner, "https://certs.test/a")
    assert len(inner.urls) == 2


def test_cache_lifetime_is_capped():
    clock = _Clock()
    cache = auth._CertsCache(clock=clock)
    inner = _CountingRequest({"Cache-Control": "max-age=999999999"})
    cache.fetch(inner, "https://certs.test/a")
    clock.now += auth._CERTS_CACHE_MAX_LIFETIME_SECONDS
    cache.fetch(inner, "https://certs.test/a")
    assert len(inner.urls) == 2


def test_cache_is_bounded_and_evicts_the_oldest():
    cache = auth._CertsCache(max_entries=2, clock=_Clock())
    inner = _CountingRequest({"Cache-Control": "max-age=300"})
    for url in ["https://certs.test/a", "https://certs.test/b", "https://certs.test/c"]:
        cache.fetch(inner, url)
    assert len(cache) == 2
    cache.fetch(inner, "https://certs.test/c")
    cache.fetch(inner, "https://certs.test/b")
    assert len(inner.urls) == 3
    cache.fetch(inner, "https://certs.test/a")
    assert inner.urls[-1] == "https://certs.test/a"
    assert len(inner.urls) == 4


def test_cache_is_keyed_by_certs_url(certs_server, transport, signing_key):
    token = mint(signing_key)
    authenticate(f"Bearer {token}", config(certs_server), transport)
    other = config(certs_server, certs_url=certs_server.url + "?v=2")
    authenticate(f"Bearer {token}", other, transport)
    authenticate(f"Bearer {token}", other, transport)
    assert certs_server.hits == 2
