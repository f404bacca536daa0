"""A local stand-in for Microsoft's side of a Teams bot, faithful enough that the real Teams SDK
(`microsoft_teams.api.ApiClient(service_url, token_provider=…)`), MSAL and PyJWT talk to it
unchanged. Tests run it in-process on background threads; `make run` runs it as a process,
printing the TEAMS_* settings to export (`env()`):

    python -m emulator.teams_standin --port 8775 --token-port 8776 --app-id … --app-password …

Every rule names its Microsoft source in the module that enforces it (docs/testing.md lists
them). Two servers:
- HTTPS (`authority(tenant)` for MSAL with `instance_discovery=False`, `token_url(tenant)`;
  trust `ca_path`): Entra ID's client-credentials grant (emulator/teams_tokens.py).
- HTTP: the Bot Connector v3 under `service_url` (.../teams/: send, update, create a personal
  conversation; a live token for `https://api.botframework.com/.default`, else 401), Graph
  under `graph_url` (.../v1.0/: channel and chat messages; a Graph token), Bot Framework's
  OpenID document (`openid_metadata_url`) and keys, and the control API (`control_url`,
  emulator/teams_control_http.py).

A connector call is checked in this order: token (401), the conversation's rate limit (429,
emulator/teams_rate_limits.py, Teams' own limits unless set_rate_limit), an injected fault
before the record (emulator/teams_faults.py), the roster and the activity (404/403/400), the
record, then an `after_record` fault. Calls are counted (`calls()`) once the token passes.

In-process: TeamsStandIn(host, port=0, token_port=0, clock=None, app_id, app_password,
tenant_id), a context manager. Conversations, rosters, grants, faults, rate limits, someone
else's messages and inspection: emulator/teams_controls.py. Signing and delivering to the bot
(install, remove, invoke): emulator/teams_delivery.py.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import threading
from datetime import datetime

from core import logs
from core.clock import Clock, SystemClock
from emulator.http_reply import Reply, json_reply
from emulator.service import Service, run_until_signalled
from emulator.teams_connector import Activities
from emulator.teams_connector_api import ConnectorApi
from emulator.teams_control_http import control
from emulator.teams_controls import Call, StandInControls
from emulator.teams_conversations import DEFAULT_TENANT, Rosters
from emulator.teams_delivery import BOT_NAME, BotDeliveries
from emulator.teams_faults import Faults, after_record, before_record
from emulator.teams_graph import Graph
from emulator.teams_http import BackgroundServer, Request, ServiceError, error_reply
from emulator.teams_rate_limits import RateLimits
from emulator.teams_signer import SigningKeys
from emulator.teams_tls import Certificates, make_certificates
from emulator.teams_tokens import BOT_SCOPE, GRAPH_SCOPE, TokenIssuer

DEFAULT_APP_ID = "00000000-0000-0000-0000-0000000a11ce"
DEFAULT_APP_PASSWORD = "standin-secret"  # noqa: S105  # the stand-in's own test secret
CONNECTOR_PREFIX = "/teams"


class TeamsStandIn(StandInControls, BotDeliveries, Service):
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
        self._connector_api = ConnectorApi(
            self._rosters,
            self._activities,
            self._clock,
            app_id,
            BOT_NAME,
            tenant_id,
            lambda: self.service_url,
        )
        self._calls: list[Call] = []
        self._faults = Faults()
        self._limits = RateLimits()
        self._graph = Graph(self._rosters, self._activities, app_id, lambda: self.base_url)
        # The wall clock, not `clock`: the bot's JWT validator (PyJWT) checks exp/nbf by it.
        self._keys = SigningKeys(SystemClock())
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
            "TEAMS_OPENID_METADATA_URL": self.openid_metadata_url,
            "TEAMS_CA_BUNDLE": self.ca_path,
            "GRAPH_API_URL": self.graph_url,
        }

    @property
    def openid_metadata_url(self) -> str:
        """TEAMS_OPENID_METADATA_URL: Bot Framework's OpenID document, naming the JWKS."""
        return f"{self.base_url}/v1/.well-known/openidconfiguration"

    @property
    def graph_url(self) -> str:
        """GRAPH_API_URL: Microsoft Graph v1.0's base."""
        return f"{self.base_url}/v1.0/"

    @property
    def jwks_url(self) -> str:
        return f"{self.base_url}/v1/.well-known/keys"

    def _running(self, server: BackgroundServer | None) -> BackgroundServer:
        if server is None:
            raise RuntimeError("the Teams stand-in is not running; call start() first")
        return server

    # -- Entra (HTTPS) ---------------------------------------------------------------------

    def _handle_entra(self, request: Request) -> Reply:
        with self._lock:
            return self._tokens.handle(request, self.token_base_url, self._clock.now())

    # -- connector and the rest (HTTP) -----------------------------------------------------

    def _handle(self, request: Request) -> Reply:
        if request.path.startswith(CONNECTOR_PREFIX + "/v3/"):
            return self._connector(request)
        if request.path.startswith("/v1.0/"):
            return self._graph_read(request)
        if request.path.startswith("/_control/"):
            return control(self, request)
        if request.method == "GET" and request.path == "/v1/.well-known/openidconfiguration":
            with self._lock:
                self._calls.append(Call("openid", None))
                return json_reply(self._keys.openid_configuration(self.jwks_url))
        if request.method == "GET" and request.path == "/v1/.well-known/keys":
            with self._lock:
                self._calls.append(Call("keys", None))
                return json_reply(self._keys.jwks())
        return error_reply(404, "NotFound", f"no {request.method} {request.path}")

    def _connector(self, request: Request) -> Reply:
        """Token, then the conversation's rate limit, then faults, then the call itself."""
        parts = request.path.removeprefix(CONNECTOR_PREFIX + "/v3/").split("/")
        route = self._connector_api.route(request.method, parts)
        if route is None:
            return error_reply(404, "NotFound", f"no {request.method} {request.path}")
        operation, conversation_id, action = route
        with self._lock:
            now = self._clock.now()
            if not self._tokens.allows(request.authorization, BOT_SCOPE, now):
                return error_reply(
                    401, "Unauthorized", "Authorization has been denied for this request."
                )
            self._calls.append(Call(operation, conversation_id))
            wait = None if conversation_id is None else self._admit(conversation_id, now)
            if wait is not None:
                return error_reply(
                    429, "TooManyRequests", "Too many requests.", (("Retry-After", str(wait)),)
                )
            fault = self._faults.take(operation, conversation_id)
        if fault is not None and not fault.after_record:
            return before_record(fault)
        try:
            body = request.json()
        except ValueError:
            return error_reply(400, "BadArgument", "The request body is not JSON.")
        try:
            with self._lock:
                answer = action(body)
        except ServiceError as error:
            answer = error.reply()
        return answer if fault is None else after_record(fault, answer)

    def _admit(self, conversation_id: str, now: datetime) -> int | None:
        known = self._rosters.get(conversation_id)
        tenant = self.tenant_id if known is None else known.tenant_id
        return self._limits.admit(conversation_id, tenant, now)

    def _graph_read(self, request: Request) -> Reply:
        if request.method != "GET":
            return error_reply(405, "MethodNotAllowed", f"{request.method} is not supported.")
        try:
            with self._lock:
                if not self._tokens.allows(request.authorization, GRAPH_SCOPE, self._clock.now()):
                    return error_reply(
                        401, "InvalidAuthenticationToken", "Access token validation failure."
                    )
                conversation = self._graph.resolve(request.path)
                self._calls.append(Call("graph", conversation.id))
                fault = self._faults.take("graph", conversation.id)
            if fault is not None:
                return before_record(fault)
            with self._lock:
                page = self._graph.list_messages(conversation, request.path, request.query)
            return json_reply(page)
        except ServiceError as error:
            return error.reply()


# -- process ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Local stand-in for Microsoft Teams' bot APIs.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8775, help="0 picks a free port")
    parser.add_argument("--token-port", type=int, default=8776, help="Entra's HTTPS port")
    parser.add_argument("--app-id", default=DEFAULT_APP_ID)
    parser.add_argument("--app-password", default=DEFAULT_APP_PASSWORD)
    parser.add_argument("--tenant-id", default=DEFAULT_TENANT)
    args = parser.parse_args(argv)

    standin = TeamsStandIn(
        host=args.host,
        port=args.port,
        token_port=args.token_port,
        app_id=args.app_id,
        app_password=args.app_password,
        tenant_id=args.tenant_id,
    )
    run_until_signalled(standin, _announce)


def _announce(standin: TeamsStandIn) -> None:
    logs.info(
        "teams stand-in listening",
        service_url=standin.service_url,
        graph_url=standin.graph_url,
        control_url=standin.control_url,
        ca_path=standin.ca_path,
        env=json.dumps(standin.env()),
    )
    print("Teams stand-in: set these for the processor and the teams target:", flush=True)
    for name, value in standin.env().items():
        print(f"  export {name}={shlex.quote(value)}", flush=True)


if __name__ == "__main__":
    main()
