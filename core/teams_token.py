"""The bot's tokens: MSAL's client-credentials grant, for the Bot Connector and for Graph.

The Teams SDK takes any object with `get_app_token(scope, tenant_id)`
(`TokenProviderProtocol`); its own `TokenManager` cannot be pointed at a token endpoint
other than Microsoft's (docs/teams.md), so this one builds the MSAL app itself:
`instance_discovery=False` (no call to login.microsoftonline.com to vouch for the host),
and a `requests` session that ignores the environment's proxies and CA bundle
(`trust_env=False`) and trusts TEAMS_CA_BUNDLE when set (the stand-in's certificate).
MSAL keeps each scope's token in memory until shortly before it expires: one token request
serves every call of the process meanwhile.
"""

from __future__ import annotations

import threading
from typing import Any

import msal
import requests

from core.platform import DEFAULT_RETRY_AFTER, Outcome, PostResult
from core.settings import TEAMS_TOKEN_URL, Settings

BOT_SCOPE = "https://api.botframework.com/.default"
GRAPH_SCOPE = "https://graph.microsoft.com/.default"
_TOKEN_PATH = "/oauth2/v2.0/token"  # noqa: S105 (a path, not a secret)
_MULTI_TENANT = "botframework.com"
# MSAL's error answers that a retry cannot cure: the app, its secret or its tenant is wrong.
_REFUSALS = frozenset(
    {"invalid_client", "unauthorized_client", "invalid_request", "invalid_scope", "invalid_grant"}
)


class TokenUnavailable(Exception):
    """No token: raised before any request to Teams or Graph is made, so it never leaves an
    activity half-sent. `result` says whether asking again later can help."""

    def __init__(self, result: PostResult) -> None:
        super().__init__(result.detail)
        self.result = result


def authority(settings: Settings) -> str:
    """The MSAL authority: TEAMS_TOKEN_URL without its token path. For a single-tenant bot
    (TEAMS_TENANT_ID) on Microsoft's default URL, the bot's own tenant instead of
    `botframework.com`."""
    url = settings.teams_token_url
    base = url[: -len(_TOKEN_PATH)] if url.endswith(_TOKEN_PATH) else url.rstrip("/")
    if settings.teams_tenant_id and url == TEAMS_TOKEN_URL:
        return base[: -len(_MULTI_TENANT)] + settings.teams_tenant_id
    return base


def session(ca_bundle: str | None) -> requests.Session:
    """A session that trusts only the system's roots, or TEAMS_CA_BUNDLE when set."""
    http = requests.Session()
    http.trust_env = False
    http.verify = ca_bundle or True
    return http


class MsalTokens:
    """The bot's app-only tokens (`TokenProviderProtocol`), cached by MSAL per scope."""

    def __init__(self, settings: Settings) -> None:
        if not settings.teams_app_id or not settings.teams_app_password:
            raise ValueError("TEAMS_APP_ID and TEAMS_APP_PASSWORD are required to send to Teams")
        self._settings = settings
        self._lock = threading.Lock()
        self._app: msal.ConfidentialClientApplication | None = None

    def _client(self) -> Any:
        # Built on first use: MSAL reads the authority's OpenID configuration when built.
        with self._lock:
            if self._app is None:
                self._app = msal.ConfidentialClientApplication(
                    self._settings.teams_app_id,
                    client_credential=self._settings.teams_app_password,
                    authority=authority(self._settings),
                    instance_discovery=False,
                    http_client=session(self._settings.teams_ca_bundle),
                )
            return self._app

    def get_app_token(self, scope: str, tenant_id: str | None = None) -> str:
        """A token for `scope` (MSAL's cached one while it lasts); TokenUnavailable else."""
        try:
            answer = self._client().acquire_token_for_client(scopes=[scope])
        except (requests.RequestException, ValueError) as exc:
            # The token endpoint (or its OpenID configuration) could not be read.
            raise TokenUnavailable(_unreachable(repr(exc))) from exc
        token = answer.get("access_token") if isinstance(answer, dict) else None
        if isinstance(token, str) and token:
            return token
        raise TokenUnavailable(_refused(answer if isinstance(answer, dict) else {}))


def _unreachable(detail: str) -> PostResult:
    return PostResult(
        Outcome.RETRY_LATER,
        "token_unavailable",
        retry_after=DEFAULT_RETRY_AFTER,
        detail=f"no token: {detail}",
    )


def _refused(answer: dict[str, Any]) -> PostResult:
    error = answer.get("error")
    detail = f"the token endpoint answered {error}: {answer.get('error_description', '')}"
    if error in _REFUSALS:
        return PostResult(Outcome.FAILED, "token_refused", detail=detail)
    return _unreachable(detail)
