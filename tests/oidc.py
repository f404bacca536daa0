"""Google-style OIDC ID tokens for tests, with nothing leaving the machine: RSA signing keys,
self-signed certificates, a certs endpoint on 127.0.0.1 that answers like Google's
({key id: PEM certificate}), and a function that mints RS256 ID tokens.

The fixtures are registered for every test module through tests/conftest.py; the
module-scoped ones (`signing_key`, `other_key`, `certs_endpoint`) give each test module its
own keys and endpoint.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import google.auth.crypt
import google.auth.jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from core import auth

KID = "test-key-1"
AUDIENCE = "https://scheduler.example.test/tick"
TRIGGER = "scheduler-invoker@demo-project.iam.gserviceaccount.com"
# Marks a claim to leave out of a minted token.
DROP = object()


# --- keys and certificates ----------------------------------------------------------------


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def private_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def self_signed_cert_pem(key: rsa.RSAPrivateKey) -> str:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-oidc-signer")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM).decode("ascii")


@pytest.fixture(scope="module")
def signing_key() -> rsa.RSAPrivateKey:
    return rsa_key()


@pytest.fixture(scope="module")
def other_key() -> rsa.RSAPrivateKey:
    return rsa_key()


# --- the certs endpoint -------------------------------------------------------------------


@dataclass
class CertsServer:
    """What the endpoint answers; tests change it between requests."""

    url: str = ""
    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=dict)
    hits: int = 0


@pytest.fixture(scope="module")
def certs_endpoint() -> Iterator[CertsServer]:
    state = CertsServer()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.hits += 1
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(state.body)))
            for name, value in state.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(state.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/oauth2/v1/certs"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def certs_server(certs_endpoint: CertsServer, signing_key: rsa.RSAPrivateKey) -> CertsServer:
    """The shared endpoint, reset to Google's shape: {kid: PEM}, cacheable for 5 minutes."""
    certs_endpoint.status = 200
    certs_endpoint.body = json.dumps({KID: self_signed_cert_pem(signing_key)}).encode()
    certs_endpoint.headers = {"Cache-Control": "public, max-age=300, must-revalidate, no-transform"}
    certs_endpoint.hits = 0
    return certs_endpoint


@pytest.fixture
def fresh_certs_cache() -> Iterator[None]:
    """The process-wide certs cache, empty before and after the test. Not autouse: a module
    that verifies tokens opts in with `pytestmark = pytest.mark.usefixtures(...)`."""
    auth._CERTS_CACHE.clear()
    yield
    auth._CERTS_CACHE.clear()


# --- tokens -------------------------------------------------------------------------------


def mint(
    key: rsa.RSAPrivateKey,
    *,
    kid: str = KID,
    now: float | None = None,
    lifetime: int = 3600,
    **overrides: Any,
) -> str:
    """An RS256 ID token as Google would sign it for TRIGGER with audience AUDIENCE; a claim
    given as DROP is left out."""
    issued = int(time.time() if now is None else now)
    claims: dict[str, Any] = {
        "iss": "https://accounts.google.com",
        "aud": AUDIENCE,
        "azp": "112233445566778899000",
        "sub": "112233445566778899000",
        "email": TRIGGER,
        "email_verified": True,
        "iat": issued,
        "exp": issued + lifetime,
    }
    claims.update(overrides)
    claims = {k: v for k, v in claims.items() if v is not DROP}
    signer = google.auth.crypt.RSASigner.from_string(private_pem(key), key_id=kid)
    encoded: bytes = google.auth.jwt.encode(signer, claims)
    return encoded.decode("ascii")
