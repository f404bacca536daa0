"""Google sign-in for the composer page, end to end over HTTP: people whose ID tokens Google
minted for COMPOSER_CLIENT_ID use the `api` target when COMPOSER_USERS allows them, and never
`tick` or `deliver`. Real RS256 tokens, checked against a certs endpoint on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.pubsub import DueOccurrence
from core.settings import Settings
from core.store import MESSAGES
from processor.publish import publish
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.messages import ONE_OFF, message, seed_message
from tests.fixtures.oidc import AUDIENCE, CLIENT_ID, PERSON, TRIGGER, CertsServer, mint_person
from tests.fixtures.pubsub import push
from tests.fixtures.runtime import make_runtime
from tests.fixtures.tick import at, tick

pytestmark = pytest.mark.usefixtures("fresh_certs_cache")


@pytest.fixture
def people(env: dict[str, str], certs_server: CertsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """One deployment's environment, as every target sees it: triggers and the page's people."""
    monkeypatch.setenv("TICK_AUDIENCE", AUDIENCE)
    monkeypatch.setenv("TRIGGER_SERVICE_ACCOUNTS", TRIGGER)
    monkeypatch.setenv("OIDC_CERTS_URL", certs_server.url)
    monkeypatch.setenv("COMPOSER_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("COMPOSER_USERS", f"{PERSON},@corp.example.test")


def signed_in(token: str) -> dict[str, Any]:
    return {"auth": False, "headers": {"Authorization": f"Bearer {token}"}}


def test_a_listed_person_lists_and_creates_messages(api, db, people, signing_key, capsys):
    token = mint_person(signing_key)

    status, page = call(api, "GET", "/messages", **signed_in(token))
    assert (status, page["messages"]) == (200, [])
    status, created = call(api, "POST", "/messages", ONE_OFF, **signed_in(token))
    assert status == 201, created

    assert message(db, created["id"])["text"] == ONE_OFF["text"]
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (by_person,) = [line for line in lines if line.get("email") == PERSON]
    assert (by_person["method"], by_person["path"], by_person["status"]) == (
        "POST",
        "/messages",
        201,
    )
    assert all(piece not in json.dumps(lines) for piece in token.split("."))


def test_a_workspace_account_of_a_listed_domain_signs_in(api, people, signing_key):
    token = mint_person(signing_key, email="cem@corp.example.test", hd="corp.example.test")
    assert call(api, "GET", "/messages", **signed_in(token))[0] == 200


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"email": "eve@example.test"}, "ID token email is not in COMPOSER_USERS"),
        ({"email": "eve@corp.example.test"}, "ID token hd claim does not match"),
        ({"email_verified": False}, "ID token email is not verified"),
    ],
)
def test_anyone_else_gets_a_401_naming_why_and_nothing_happens(
    api, db, people, signing_key, claims, reason
):
    token = mint_person(signing_key, **claims)

    status, answer = call(api, "POST", "/messages", ONE_OFF, **signed_in(token))

    assert (status, answer["error"]) == (401, "unauthorized")
    assert answer["message"].startswith(reason)
    assert all(piece not in json.dumps(answer) for piece in token.split("."))
    assert list(db.collection(MESSAGES).stream()) == []


def test_without_a_client_id_no_person_signs_in(api, people, signing_key, monkeypatch):
    monkeypatch.delenv("COMPOSER_CLIENT_ID")

    status, answer = call(api, "GET", "/messages", **signed_in(mint_person(signing_key)))

    assert (status, answer["message"]) == (401, "ID token audience does not match TICK_AUDIENCE")


def test_the_tick_never_accepts_a_person(tick_app, db, slack, people, signing_key):
    mid = seed_message(db)
    headers = {"Authorization": f"Bearer {mint_person(signing_key)}"}

    response = tick(tick_app.test_client(), headers=headers, body=at(T0))

    assert response.status_code == 401
    assert message(db, mid)["status"] == "pending"
    assert slack.posts() == []


def test_deliver_never_accepts_a_person(pubsub, deliver, db, slack, people, signing_key, clock):
    rt = make_runtime(Settings.from_env(), db, clock, "tick")
    seed_message(db, "m1")
    assert publish(rt, [DueOccurrence("message", "m1", T0, "C0123ABCD")])["published"] == 1
    (pulled,) = pubsub.pull()

    assert push(deliver, pulled, {"Authorization": f"Bearer {mint_person(signing_key)}"}) == 401

    assert slack.posts() == []
    assert message(db, "m1")["status"] == "pending"
