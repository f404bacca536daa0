"""The Teams stand-in's inbound side: what it sends a bot is signed as Bot Framework signs it
(checked by the Teams SDK's own TokenValidator, fed the JWKS named by the OpenID document) and
shaped as Teams shapes it (parsed by the SDK's activity models)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import jwt
import pytest
from microsoft_teams.api.activities import ActivityTypeAdapter
from microsoft_teams.apps.auth.token_validator import JwtValidationOptions, TokenValidator

from core.clock import FixedClock
from emulator.teams_signer import ISSUER
from emulator.teams_standin import TeamsStandIn

T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
CHANNEL = "19:general0001@thread.tacv2"
AAD_GROUP = "5a6b7c8d-0000-4000-8000-00000000a001"


@pytest.fixture
def teams() -> Iterator[TeamsStandIn]:
    with TeamsStandIn(clock=FixedClock(T0)) as running:
        running.channel(CHANNEL, name="General", team_name="Platform")
        yield running


def validator(teams: TeamsStandIn) -> TokenValidator:
    """The bot's check, as docs/teams.md sets it up: jwks_uri from the OpenID document."""
    metadata = httpx.get(teams.openid_metadata_url, timeout=5).json()
    return TokenValidator(
        JwtValidationOptions(
            valid_issuers=[metadata["issuer"]],
            valid_audiences=[teams.app_id],
            jwks_uri=metadata["jwks_uri"],
        )
    )


def validate(teams: TeamsStandIn, token: str, service_url: str) -> dict[str, Any]:
    return asyncio.run(validator(teams).validate_token(token, service_url=service_url))


class _Bot(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append((self.headers["Authorization"], json.loads(body)))  # type: ignore[attr-defined]
        answer = json.dumps({"seen": True}).encode()
        self.send_response(self.server.status)  # type: ignore[attr-defined]
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def bot() -> Iterator[ThreadingHTTPServer]:
    """A stand-in bot endpoint that records what it was sent."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Bot)
    server.received = []  # type: ignore[attr-defined]
    server.status = 200  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_port}/teams"


# -- OpenID metadata, keys, JWT -------------------------------------------------------------


def test_the_openid_document_names_the_jwks_and_rs256(teams):
    metadata = httpx.get(teams.openid_metadata_url, timeout=5).json()
    keys = httpx.get(metadata["jwks_uri"], timeout=5).json()["keys"]

    assert metadata["issuer"] == ISSUER == "https://api.botframework.com"
    assert metadata["id_token_signing_alg_values_supported"] == ["RS256"]
    assert [k["kid"] for k in keys] == [teams.current_kid]
    assert keys[0]["kty"] == "RSA" and "msteams" in keys[0]["endorsements"]
    assert teams.env()["TEAMS_OPENID_METADATA_URL"] == teams.openid_metadata_url


def test_the_sdks_validator_accepts_a_signed_activity(teams):
    [install, _] = teams.install_activity(CHANNEL)

    claims = validate(teams, teams.sign(install), install["serviceUrl"])

    assert claims["iss"] == ISSUER and claims["aud"] == teams.app_id
    assert claims["serviceurl"] == teams.service_url
    assert claims["nbf"] < claims["exp"]


@pytest.mark.parametrize(
    ("options", "raises"),
    [
        ({"expired": True}, jwt.ExpiredSignatureError),
        ({"audience": "someone-else"}, jwt.InvalidAudienceError),
        ({"service_url": "https://smba.trafficmanager.net/evil/"}, jwt.InvalidTokenError),
        ({"kid": "not-a-published-kid"}, jwt.PyJWKClientError),
    ],
)
def test_the_sdks_validator_refuses_a_bad_token(teams, options, raises):
    [install, _] = teams.install_activity(CHANNEL)

    with pytest.raises(raises):
        validate(teams, teams.sign(install, **options), install["serviceUrl"])


def test_rotated_keys_sign_with_a_new_kid_and_retire_the_old(teams):
    [install, _] = teams.install_activity(CHANNEL)
    old_kid = teams.current_kid

    new_kid = teams.rotate_keys()

    assert new_kid != old_kid
    assert jwt.get_unverified_header(teams.sign(install))["kid"] == new_kid
    validate(teams, teams.sign(install), install["serviceUrl"])
    with pytest.raises(jwt.PyJWKClientError):  # the retired key is no longer published
        validate(teams, teams.sign(install, kid=old_kid), install["serviceUrl"])


def test_key_fetches_are_counted(teams):
    [install, _] = teams.install_activity(CHANNEL)

    validate(teams, teams.sign(install), install["serviceUrl"])

    assert teams.calls("openid") == 1 and teams.calls("keys") == 1


# -- what Teams sends -----------------------------------------------------------------------


def test_install_in_a_team_is_installation_update_then_members_added(teams):
    install, members = teams.install_activity(CHANNEL)

    assert install["type"] == "installationUpdate" and install["action"] == "add"
    assert members["type"] == "conversationUpdate"
    assert members["membersAdded"] == [{"id": f"28:{teams.app_id}"}]
    assert members["channelData"]["eventType"] == "teamMemberAdded"
    for activity in (install, members):
        assert activity["serviceUrl"] == teams.service_url
        assert activity["recipient"]["id"] == f"28:{teams.app_id}"
        assert activity["conversation"] == {
            "id": CHANNEL,
            "conversationType": "channel",
            "tenantId": teams.tenant_id,
            "isGroup": True,
            "name": "General",
        }
        assert activity["channelData"]["team"] == {
            "id": CHANNEL,
            "name": "Platform",
            "aadGroupId": AAD_GROUP,
        }
        assert activity["channelData"]["channel"] == {"id": CHANNEL, "name": "General"}
        assert activity["channelData"]["tenant"] == {"id": teams.tenant_id}
        ActivityTypeAdapter.validate_python(activity)  # the SDK reads it as Teams' own


def test_remove_is_installation_update_remove_then_members_removed(teams):
    remove, members = teams.remove_activity(CHANNEL)

    assert remove["type"] == "installationUpdate" and remove["action"] == "remove"
    assert members["membersRemoved"] == [{"id": f"28:{teams.app_id}"}]
    assert members["channelData"]["eventType"] == "teamMemberRemoved"
    for activity in (remove, members):
        ActivityTypeAdapter.validate_python(activity)


def test_install_in_a_personal_chat_comes_from_the_person(teams):
    personal = teams.personal("29:1alex", user_aad_id="aad-alex")

    install, members = teams.install_activity(personal.id)

    assert install["conversation"]["conversationType"] == "personal"
    assert install["from"] == {"id": "29:1alex", "aadObjectId": "aad-alex"}
    assert "team" not in install["channelData"] and "eventType" not in members["channelData"]


def test_invoke_action_is_an_adaptive_card_action_on_the_thread(teams):
    posted = post(teams)

    invoke = teams.invoke_action(posted, "done", {"occurrence": "d-1"}, "29:1alex", name="Alex")

    assert invoke["type"] == "invoke" and invoke["name"] == "adaptiveCard/action"
    assert invoke["value"] == {
        "action": {"type": "Action.Execute", "verb": "done", "data": {"occurrence": "d-1"}},
        "trigger": "manual",
    }
    assert invoke["replyToId"] == posted
    assert invoke["conversation"]["id"] == f"{CHANNEL};messageid={posted}"
    assert invoke["from"] == {"id": "29:1alex", "name": "Alex"}
    parsed = ActivityTypeAdapter.validate_python(invoke)
    assert parsed.value.action.verb == "done"  # type: ignore[union-attr]


def test_invoke_on_an_activity_never_posted_is_refused(teams):
    with pytest.raises(KeyError):
        teams.invoke_action("999", "done", {}, "29:1alex")


# -- delivery to the bot --------------------------------------------------------------------


def test_deliver_posts_the_activity_signed_and_returns_the_answer(teams, bot):
    activity = teams.install_activity(CHANNEL)[0]

    delivered = teams.deliver(url(bot), activity)

    assert (delivered.status, delivered.body) == (200, {"seen": True})
    [(authorization, body)] = bot.received
    assert body == activity
    validate(teams, authorization.removeprefix("Bearer "), body["serviceUrl"])


def test_deliver_returns_the_bots_refusal(teams, bot):
    bot.status = 401

    delivered = teams.deliver(url(bot), teams.install_activity(CHANNEL)[0], expired=True)

    assert delivered.status == 401


def test_install_and_remove_move_the_roster_and_tell_the_bot(teams, bot):
    teams.set_roster(CHANNEL, installed=False)

    assert [d.status for d in teams.install(CHANNEL, url(bot))] == [200, 200]
    assert teams.conversation(CHANNEL).installed
    teams.remove(CHANNEL, url(bot))

    assert not teams.conversation(CHANNEL).installed
    assert [b["type"] for _, b in bot.received] == ["installationUpdate", "conversationUpdate"] * 2


def post(teams: TeamsStandIn) -> str:
    response = httpx.post(
        f"{teams.service_url}v3/conversations/{CHANNEL}/activities",
        json={"type": "message", "text": "Standup"},
        headers={"Authorization": f"Bearer {teams.issue_token()}"},
        timeout=5,
    )
    return str(response.json()["id"])
