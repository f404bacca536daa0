"""How the Teams stand-in signs what it sends to a bot: Bot Framework's OpenID metadata, its
key set, and the JWT in the `Authorization` header of every inbound activity.

Source: learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-
authentication, "Connector to bot" (read 2026-12-03): the bot reads the OpenID metadata
document (`https://login.botframework.com/v1/.well-known/openidconfiguration`), takes its
`jwks_uri`, finds the key by the JWT's `kid` (keys carry `endorsements`, e.g. "msteams"),
and checks RS256 (`id_token_signing_alg_values_supported`), `iss` `https://api.botframework.com`,
`aud` the bot's app id, `exp`/`nbf` (5 minutes of skew), and the `serviceurl` claim equal to
the activity's `serviceUrl`. Keys rotate: an unknown `kid` means fetch the keys again.

Token times come from the given clock; the stand-in passes the wall clock, because the bot's
validator (PyJWT) checks `exp` and `nbf` against it.
"""

from __future__ import annotations

import base64
import secrets
from datetime import timedelta
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from core.clock import Clock

ISSUER = "https://api.botframework.com"
TOKEN_LIFETIME = timedelta(hours=1)
# Past PyJWT's and the SDK's 300 s leeway, so an `expired` token is refused everywhere.
EXPIRED_BY = timedelta(minutes=10)


def _b64(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class SigningKeys:
    """RSA keys by kid: the current one signs, the published ones are in the JWKS."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._keys: dict[str, rsa.RSAPrivateKey] = {}
        self._published: list[str] = []
        self.current_kid = self.rotate()

    def rotate(self) -> str:
        """A new current key; the old one leaves the key set (and still signs, if asked by
        kid, so a test can show a retired key is refused)."""
        kid = secrets.token_hex(8)
        self._keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._published = [kid]
        self.current_kid = kid
        return kid

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid in self._published:
            numbers = self._keys[kid].public_key().public_numbers()
            keys.append(
                {
                    "kty": "RSA",
                    "use": "sig",
                    "kid": kid,
                    "n": _b64(numbers.n),
                    "e": _b64(numbers.e),
                    "endorsements": ["msteams"],
                }
            )
        return {"keys": keys}

    def openid_configuration(self, jwks_uri: str) -> dict[str, Any]:
        return {
            "issuer": ISSUER,
            "authorization_endpoint": "https://invalid.botframework.com",
            "jwks_uri": jwks_uri,
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
        }

    def sign(
        self,
        *,
        audience: str,
        service_url: str,
        expired: bool = False,
        kid: str | None = None,
    ) -> str:
        """A Bot Framework JWT. `kid`: sign with that key if it is one of ours (retired
        included), else with the current key under that (unknown) kid."""
        header_kid = kid or self.current_kid
        key = self._keys.get(header_kid, self._keys[self.current_kid])
        now = self._clock.now()
        if expired:
            now -= TOKEN_LIFETIME + EXPIRED_BY
        claims = {
            "serviceurl": service_url,
            "nbf": int(now.timestamp()),
            "exp": int((now + TOKEN_LIFETIME).timestamp()),
            "iss": ISSUER,
            "aud": audience,
        }
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": header_kid})
