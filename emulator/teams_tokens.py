"""The Teams stand-in's Microsoft Entra ID: the OAuth2 client-credentials grant, the OpenID
document MSAL reads under an authority, and the check every connector and Graph call makes.

Sources (read 2026-12-03):
- learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow: `POST
  /{tenant}/oauth2/v2.0/token`, form `grant_type=client_credentials`, `client_id`,
  `client_secret`, `scope` (`{resource}/.default`); the answer `{"token_type": "Bearer",
  "expires_in", "ext_expires_in", "access_token"}`; errors `{"error", "error_description",
  "error_codes", "trace_id", "correlation_id"}`: `invalid_client` (HTTP 401,
  AADSTS7000215 a wrong secret, AADSTS700016 an unknown application), `invalid_scope` (400,
  AADSTS70011), `unsupported_grant_type` (400, AADSTS70003), `invalid_request` (400,
  AADSTS900144 a missing parameter).
- learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-authentication:
  the bot asks for scope `https://api.botframework.com/.default`; a connector call without a
  valid token is refused with 401.
- learn.microsoft.com/graph/auth-v2-service: Graph takes scope
  `https://graph.microsoft.com/.default`.
- msal 1.39 `authority.py`: without instance discovery MSAL reads
  `{authority}/v2.0/.well-known/openid-configuration` and needs `authorization_endpoint` and
  `token_endpoint` from it.

Tokens are opaque random strings, remembered with their scope and expiry on the stand-in's
clock, so a test that moves the clock past `expires_in` sees them refused.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from emulator.http_reply import Reply, json_reply
from emulator.teams_http import Request

BOT_SCOPE = "https://api.botframework.com/.default"
GRAPH_SCOPE = "https://graph.microsoft.com/.default"
SCOPES = frozenset({BOT_SCOPE, GRAPH_SCOPE})
TOKEN_LIFETIME = timedelta(seconds=3599)  # what Entra answers for an app token


@dataclass(frozen=True)
class _Issued:
    scope: str
    expires_at: datetime


class TokenIssuer:
    """Issues and checks app tokens for one application (client id and secret)."""

    def __init__(self, app_id: str, app_password: str) -> None:
        self.app_id = app_id
        self.app_password = app_password
        self._issued: dict[str, _Issued] = {}
        self.grants = 0  # tokens issued: a test can show MSAL's cache spared a round trip

    def reset(self) -> None:
        self._issued.clear()
        self.grants = 0

    def handle(self, request: Request, base_url: str, now: datetime) -> Reply:
        """Entra's routes: an authority's OpenID document, and its token endpoint."""
        parts = request.path.strip("/").split("/")
        if request.method == "GET" and parts[1:] == ["v2.0", ".well-known", "openid-configuration"]:
            return json_reply(self.openid_configuration(base_url, parts[0]))
        if request.method == "POST" and parts[1:] == ["oauth2", "v2.0", "token"]:
            return self.grant(request, now)
        return _oauth_error(404, "invalid_request", 90002, f"No route {request.path}.")

    def openid_configuration(self, base_url: str, tenant: str) -> dict[str, Any]:
        authority = f"{base_url}/{tenant}"
        return {
            "token_endpoint": f"{authority}/oauth2/v2.0/token",
            "authorization_endpoint": f"{authority}/oauth2/v2.0/authorize",
            "issuer": f"{authority}/v2.0",
            "jwks_uri": f"{base_url}/{tenant}/discovery/v2.0/keys",
            "response_types_supported": ["code", "id_token", "code id_token", "token id_token"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": [
                "client_secret_post",
                "private_key_jwt",
                "client_secret_basic",
            ],
            "tenant_region_scope": "EU",
        }

    def grant(self, request: Request, now: datetime) -> Reply:
        """POST /{tenant}/oauth2/v2.0/token."""
        form = request.form()
        for name in ("grant_type", "client_id", "scope"):
            if not form.get(name):
                return _oauth_error(
                    400, "invalid_request", 900144, f"The request body must contain '{name}'."
                )
        if form["grant_type"] != "client_credentials":
            return _oauth_error(
                400,
                "unsupported_grant_type",
                70003,
                f"The app requested an unsupported grant type '{form['grant_type']}'.",
            )
        if form["client_id"] != self.app_id:
            return _oauth_error(
                401,
                "invalid_client",
                700016,
                f"Application with identifier '{form['client_id']}' was not found.",
            )
        if not secrets.compare_digest(form.get("client_secret", ""), self.app_password):
            return _oauth_error(401, "invalid_client", 7000215, "Invalid client secret provided.")
        scope = form["scope"]
        if scope not in SCOPES:
            return _oauth_error(
                400, "invalid_scope", 70011, f"The provided value '{scope}' is not valid."
            )
        token = secrets.token_urlsafe(32)
        self._issued[token] = _Issued(scope, now + TOKEN_LIFETIME)
        self.grants += 1
        seconds = int(TOKEN_LIFETIME.total_seconds())
        return json_reply(
            {
                "token_type": "Bearer",
                "expires_in": seconds,
                "ext_expires_in": seconds,
                "access_token": token,
            }
        )

    def allows(self, authorization: str | None, scope: str, now: datetime) -> bool:
        """True if `Authorization: Bearer <token>` holds a live token issued for `scope`."""
        if not authorization or not authorization.startswith("Bearer "):
            return False
        issued = self._issued.get(authorization.removeprefix("Bearer ").strip())
        return issued is not None and issued.scope == scope and now < issued.expires_at

    def issue(self, scope: str, now: datetime) -> str:
        """A token for `scope` without the grant (tests that are not about the grant)."""
        token = secrets.token_urlsafe(32)
        self._issued[token] = _Issued(scope, now + TOKEN_LIFETIME)
        return token


def _oauth_error(status: int, error: str, code: int, description: str) -> Reply:
    trace = str(uuid.uuid4())
    return json_reply(
        {
            "error": error,
            "error_description": f"AADSTS{code}: {description} Trace ID: {trace}",
            "error_codes": [code],
            "trace_id": trace,
            "correlation_id": str(uuid.uuid4()),
        },
        status,
    )
