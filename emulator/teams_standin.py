"""A local stand-in for Microsoft's side of a Teams bot, faithful enough that the real Teams SDK
(`microsoft_teams.api.ApiClient(service_url, token_provider=…)`), MSAL and PyJWT talk to it
unchanged. Tests run it in-process on background threads; `make run` runs it as a process:

    python -m emulator.teams_standin --port 8775 --app-id … --app-password …

Each rule names its Microsoft source in the module that enforces it: emulator/teams_tokens.py
(Entra ID), teams_conversations.py (rosters), teams_connector.py (Bot Connector v3).

Two servers:
- HTTPS (`token_base_url`, certificate from emulator/teams_tls.py, trusted through `ca_path`):
  Entra ID. `authority(tenant)` is what MSAL takes (`instance_discovery=False`);
  `token_url(tenant)` the client-credentials grant.
- HTTP (`service_url` for the connector, `control_url`): the Bot Connector under `/teams/`
  (`POST /teams/v3/conversations/{id}/activities`, `PUT …/activities/{activityId}`,
  `POST /teams/v3/conversations`). Every call needs a live token for
  `https://api.botframework.com/.default` (else 401 `Unauthorized`).

Inspection and control (in-process):
- TeamsStandIn(host="127.0.0.1", port=0, token_port=0, clock=None, app_id=…,
  app_password=…, tenant_id=…): start(), stop(), context manager.
- add_conversation(Conversation) / channel(...) / group_chat(...) / personal(...): a
  conversation with our bot installed; set_roster(id, installed=…, blocked=…).
- activities() / activities(conversation) -> [RecordedActivity] as they stand now;
  updates() -> every update taken, as the activity stood after it; delivery_ids();
  calls(operation=None, conversation=None) -> how many authenticated calls came in
  ("send", "update", "create_conversation"), whatever the answer; token_grants();
  reset() (no activities, calls, tokens; conversations kept).
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from core import logs
from core.clock import Clock, SystemClock
from emulator.service import Service
from emulator.teams_connector import Activities, RecordedActivity, check_activity
from emulator.teams_conversations import (
    DEFAULT_TENANT,
    Conversation,
    Rosters,
    personal_conversation_id,
)
from emulator.teams_http import (
    BackgroundServer,
    Reply,
    Request,
    ServiceError,
    error_reply,
    json_reply,
)
from emulator.teams_tls import Certificates, make_certificates
from emulator.teams_tokens import BOT_SCOPE, TokenIssuer

DEFAULT_APP_ID = "00000000-0000-0000-0000-0000000a11ce"
DEFAULT_APP_PASSWORD = "standin-secret"  # noqa: S105  # the stand-in's own test secret
BOT_NAME = "scheduler-bot"
CONNECTOR_PREFIX = "/teams"


@dataclass(frozen=True)
class _Call:
    operation: str
    conversation: str | None


class TeamsStandIn(Service):
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        token_port: int = 0,
        clock: Clock | None = None,
        app_id: str = DEFAULT_APP_ID,
        app_password: str = DEFAULT_APP_PASSWORD,
        tenant_id: str = DEFAULT_TENANT,
    ) -> None:
        self._host = host
        self._port = port
        self._token_port = token_port
        self._clock = clock or SystemClock()
        self.app_id = app_id
        self.tenant_id = tenant_id
        self._lock = threading.RLock()
        self._tokens = TokenIssuer(app_id, app_password)
        self._rosters = Rosters()
        self._activities = Activities()
        self._calls: list[_Call] = []
        self._http: BackgroundServer | None = None
        self._https: BackgroundServer | None = None
        self._certificates: Certificates | None = None
        self._stopping = threading.Event()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> TeamsStandIn:
        if self._http is not None:
            raise RuntimeError("the Teams stand-in is already running")
        self._stopping.clear()
        self._certificates = make_certificates()
        self._http = BackgroundServer(
            self._host, self._port, self._handle, self._linger, name="teams-standin"
        )
        self._https = BackgroundServer(
            self._host,
            self._token_port,
            self._handle_entra,
            self._linger,
            tls=self._certificates.server_context(),
            name="teams-standin-entra",
        )
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers waiting in a timeout fault
        for server in (self._http, self._https):
            if server is not None:
                server.stop()
        self._http = self._https = None
        if self._certificates is not None:
            shutil.rmtree(self._certificates.directory, ignore_errors=True)
            self._certificates = None

    def _linger(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    # -- addresses -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._running(self._http).port

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def service_url(self) -> str:
        """The `serviceUrl` of every conversation: the Bot Connector's base."""
        return f"{self.base_url}{CONNECTOR_PREFIX}/"

    @property
    def control_url(self) -> str:
        return f"{self.base_url}/_control/"

    @property
    def token_base_url(self) -> str:
        return f"https://{self._host}:{self._running(self._https).port}"

    def authority(self, tenant: str | None = None) -> str:
        return f"{self.token_base_url}/{tenant or self.tenant_id}"

    def token_url(self, tenant: str | None = None) -> str:
        return f"{self.authority(tenant)}/oauth2/v2.0/token"

    @property
    def ca_path(self) -> str:
        """The PEM file of the CA that signed the HTTPS certificate: trust it to reach Entra."""
        if self._certificates is None:
            raise RuntimeError("the Teams stand-in is not running; call start() first")
        return str(self._certificates.ca_path)

    def env(self) -> dict[str, str]:
        """The settings that point the processor at this stand-in (core/settings.py)."""
        return {
            "TEAMS_APP_ID": self.app_id,
            "TEAMS_APP_PASSWORD": self._tokens.app_password,
            "TEAMS_TENANT_ID": self.tenant_id,
            "TEAMS_TOKEN_URL": self.token_url(),
            "TEAMS_CA_BUNDLE": self.ca_path,
        }

    def _running(self, server: BackgroundServer | None) -> BackgroundServer:
        if server is None:
            raise RuntimeError("the Teams stand-in is not running; call start() first")
        return server

    # -- conversations ---------------------------------------------------------------------

    def add_conversation(self, conversation: Conversation) -> Conversation:
        with self._lock:
            return self._rosters.add(conversation)

    def channel(
        self,
        conversation_id: str = "19:general0001@thread.tacv2",
        *,
        name: str = "General",
        team_id: str | None = None,
        team_name: str = "Scheduler Team",
        aad_group_id: str = "5a6b7c8d-0000-4000-8000-00000000a001",
    ) -> Conversation:
        """A team's channel with our bot installed (the team's id defaults to General's)."""
        return self.add_conversation(
            Conversation(
                conversation_id,
                "channel",
                self.tenant_id,
                name=name,
                team_id=team_id or conversation_id,
                team_name=team_name,
                aad_group_id=aad_group_id,
            )
        )

    def group_chat(
        self, conversation_id: str = "19:groupchat0001@thread.v2", *, name: str | None = None
    ) -> Conversation:
        return self.add_conversation(
            Conversation(conversation_id, "groupChat", self.tenant_id, name=name)
        )

    def personal(
        self, user_id: str = "29:1person", *, user_aad_id: str | None = None
    ) -> Conversation:
        """The personal chat between our bot and `user_id`, with the bot installed."""
        return self.add_conversation(
            Conversation(
                personal_conversation_id(user_id, self.tenant_id),
                "personal",
                self.tenant_id,
                user_id=user_id,
                user_aad_id=user_aad_id,
            )
        )

    def set_roster(
        self, conversation_id: str, *, installed: bool | None = None, blocked: bool | None = None
    ) -> None:
        with self._lock:
            conversation = self._rosters.get(conversation_id)
            if conversation is None:
                raise KeyError(f"no conversation {conversation_id!r}; add it first")
            if installed is not None:
                conversation.installed = installed
            if blocked is not None:
                conversation.blocked = blocked

    def conversation(self, conversation_id: str) -> Conversation:
        with self._lock:
            conversation = self._rosters.get(conversation_id)
        if conversation is None:
            raise KeyError(f"no conversation {conversation_id!r}")
        return conversation

    # -- inspection ------------------------------------------------------------------------

    def activities(self, conversation_id: str | None = None) -> list[RecordedActivity]:
        with self._lock:
            every = self._activities.all()
        if conversation_id is None:
            return every
        base = conversation_id.split(";", 1)[0]
        return [a for a in every if a.conversation_id.split(";", 1)[0] == base]

    def updates(self) -> list[RecordedActivity]:
        with self._lock:
            return self._activities.updates()

    def delivery_ids(self) -> list[str | None]:
        return [a.delivery_id for a in self.activities()]

    def calls(self, operation: str | None = None, conversation: str | None = None) -> int:
        with self._lock:
            return sum(
                1
                for c in self._calls
                if operation in (None, c.operation) and conversation in (None, c.conversation)
            )

    def token_grants(self) -> int:
        with self._lock:
            return self._tokens.grants

    def issue_token(self, scope: str = BOT_SCOPE) -> str:
        """A live token without the grant, for tests that are not about Entra."""
        with self._lock:
            return self._tokens.issue(scope, self._clock.now())

    def reset(self) -> None:
        with self._lock:
            self._activities.clear()
            self._calls.clear()
            self._tokens.reset()

    # -- Entra (HTTPS) ---------------------------------------------------------------------

    def _handle_entra(self, request: Request) -> Reply:
        parts = request.path.strip("/").split("/")
        if request.method == "GET" and parts[1:] == ["v2.0", ".well-known", "openid-configuration"]:
            return json_reply(self._tokens.openid_configuration(self.token_base_url, parts[0]))
        if request.method == "POST" and parts[1:] == ["oauth2", "v2.0", "token"]:
            with self._lock:
                return self._tokens.grant(request, self._clock.now())
        return error_reply(404, "NotFound", f"no {request.method} {request.path}")

    # -- connector and the rest (HTTP) -----------------------------------------------------

    def _handle(self, request: Request) -> Reply:
        if request.path.startswith(CONNECTOR_PREFIX + "/v3/"):
            return self._connector(request)
        return error_reply(404, "NotFound", f"no {request.method} {request.path}")

    def _connector(self, request: Request) -> Reply:
        parts = request.path.removeprefix(CONNECTOR_PREFIX + "/v3/").split("/")
        route = self._connector_route(request.method, parts)
        if route is None:
            return error_reply(404, "NotFound", f"no {request.method} {request.path}")
        operation, conversation_id, action = route
        with self._lock:
            if not self._tokens.allows(request.authorization, BOT_SCOPE, self._clock.now()):
                return error_reply(
                    401, "Unauthorized", "Authorization has been denied for this request."
                )
            self._calls.append(_Call(operation, conversation_id))
        try:
            body = request.json()
        except ValueError:
            return error_reply(400, "BadArgument", "The request body is not JSON.")
        try:
            with self._lock:
                return action(body)
        except ServiceError as error:
            return error.reply()

    def _connector_route(
        self, method: str, parts: list[str]
    ) -> tuple[str, str | None, Callable[[Any], Reply]] | None:
        if method == "POST" and parts == ["conversations"]:
            return "create_conversation", None, self._create_conversation
        if len(parts) >= 3 and parts[0] == "conversations" and parts[2] == "activities":
            conversation_id = parts[1]
            if method == "POST" and len(parts) == 3:
                return "send", conversation_id, lambda body: self._send(conversation_id, body)
            if method == "PUT" and len(parts) == 4:
                activity_id = parts[3]
                return (
                    "update",
                    conversation_id,
                    lambda body: self._update(conversation_id, activity_id, body),
                )
        return None

    def _bot_account(self) -> dict[str, Any]:
        return {"id": f"28:{self.app_id}", "name": BOT_NAME}

    def _send(self, conversation_id: str, body: Any) -> Reply:
        conversation = self._rosters.postable(conversation_id)
        activity = check_activity(body)
        recorded = self._activities.record(
            conversation, activity, self._clock.now(), self._bot_account(), self.app_id
        )
        return json_reply({"id": recorded.id}, 201)

    def _update(self, conversation_id: str, activity_id: str, body: Any) -> Reply:
        conversation = self._rosters.postable(conversation_id)
        activity = check_activity(body)
        updated = self._activities.update(conversation, activity_id, activity, self._clock.now())
        return json_reply({"id": updated.id})

    def _create_conversation(self, body: Any) -> Reply:
        """Only what a proactive DM needs: one member, not a group (personal)."""
        if not isinstance(body, dict):
            raise ServiceError(400, "BadArgument", "The request body must be a JSON object.")
        members = body.get("members")
        if not isinstance(members, list) or len(members) != 1 or not isinstance(members[0], dict):
            raise ServiceError(400, "BadArgument", "members must hold exactly one member.")
        if body.get("isGroup"):
            raise ServiceError(400, "BadArgument", "Only personal conversations can be created.")
        user_id = members[0].get("id")
        if not isinstance(user_id, str) or not user_id.startswith("29:"):
            raise ServiceError(400, "BadArgument", "members[0].id must be a user id (29:…).")
        tenant = body.get("tenantId") or (body.get("channelData") or {}).get("tenant", {}).get("id")
        conversation_id = personal_conversation_id(user_id, tenant or self.tenant_id)
        conversation = self._rosters.get(conversation_id)
        if conversation is None:
            # Teams opens a personal chat only with someone who has the app.
            raise ServiceError(
                403, "BotNotInConversationRoster", "The bot is not installed for this user."
            )
        self._rosters.postable(conversation_id)
        return json_reply({"id": conversation_id, "serviceUrl": self.service_url}, 201)


# -- process ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Local stand-in for Microsoft Teams' bot APIs.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8775, help="0 picks a free port")
    parser.add_argument("--token-port", type=int, default=0, help="HTTPS Entra port; 0: free")
    parser.add_argument("--app-id", default=DEFAULT_APP_ID)
    parser.add_argument("--app-password", default=DEFAULT_APP_PASSWORD)
    parser.add_argument("--tenant-id", default=DEFAULT_TENANT)
    args = parser.parse_args(argv)

    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    standin = TeamsStandIn(
        host=args.host,
        port=args.port,
        token_port=args.token_port,
        app_id=args.app_id,
        app_password=args.app_password,
        tenant_id=args.tenant_id,
    ).start()
    logs.info(
        "teams stand-in listening",
        service_url=standin.service_url,
        control_url=standin.control_url,
        ca_path=standin.ca_path,
        env=json.dumps(standin.env()),
    )
    try:
        done.wait()
    finally:
        standin.stop()


if __name__ == "__main__":
    main()
