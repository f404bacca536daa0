"""Slack over HTTPS, as in production: the transport verifies Slack's certificate with one
TLS context built with the transport (one per instance), not one per call: each default
context loads the system's CA bundle again, about 20 ms of CPU per post."""

from __future__ import annotations

import shutil
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from core.platform import Outcome
from core.slack import SlackTransport
from emulator.http_reply import Reply, json_reply
from emulator.teams_http import BackgroundServer, Request
from emulator.teams_tls import Certificates, make_certificates


@dataclass
class HttpsSlack:
    """A Slack Web API over TLS that accepts every chat.postMessage."""

    certificates: Certificates
    server: BackgroundServer
    posts: list[Request]

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server.port}/api/"


@pytest.fixture
def https_slack() -> Iterator[HttpsSlack]:
    certificates = make_certificates()
    posts: list[Request] = []

    def answer(request: Request) -> Reply:
        posts.append(request)
        return json_reply({"ok": True, "channel": "C0123ABCD", "ts": f"{len(posts)}.000100"})

    server = BackgroundServer(
        "127.0.0.1", 0, answer, time.sleep, tls=certificates.server_context(), name="slack-tls"
    )
    yield HttpsSlack(certificates, server, posts)
    server.stop()
    shutil.rmtree(certificates.directory, ignore_errors=True)


@pytest.fixture
def ca_bundle_loads(monkeypatch: pytest.MonkeyPatch) -> list[ssl.SSLContext]:
    """Every TLS context that loads the default CA bundle, as it loads it (the real load)."""
    loads: list[ssl.SSLContext] = []
    load = ssl.SSLContext.load_default_certs

    def counted(context: ssl.SSLContext, *args: object, **kwargs: object) -> None:
        loads.append(context)
        load(context, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl.SSLContext, "load_default_certs", counted)
    return loads


def test_posts_over_https_share_the_transports_one_tls_context(
    https_slack: HttpsSlack, ca_bundle_loads: list[ssl.SSLContext], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The default CA bundle, for this test: the stand-in's CA alone.
    monkeypatch.setenv("SSL_CERT_FILE", str(https_slack.certificates.ca_path))
    transport = SlackTransport("xoxb-test", https_slack.url, timeout_seconds=5)
    built = list(ca_bundle_loads)

    results = [transport.post("C0123ABCD", "hi", f"d{n}") for n in range(3)]

    assert [r.outcome for r in results] == [Outcome.DELIVERED] * 3
    assert len(https_slack.posts) == 3
    assert len(built) == 1  # built with the transport
    assert ca_bundle_loads == built  # and no bundle loaded again for the posts


def test_the_shared_context_still_refuses_a_certificate_it_does_not_trust(
    https_slack: HttpsSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The system's own CA bundle: the stand-in's throwaway CA is not in it.
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    transport = SlackTransport("xoxb-test", https_slack.url, timeout_seconds=5)

    result = transport.post("C0123ABCD", "hi", "d1")

    assert result.outcome is not Outcome.DELIVERED
    assert https_slack.posts == []


def test_each_transport_reads_the_ca_bundle_as_it_is_when_built(
    https_slack: HttpsSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One context per transport (per instance), none for the whole process: a transport
    # built after the bundle changed trusts what it now says.
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    before = SlackTransport("xoxb-test", https_slack.url, timeout_seconds=5)
    monkeypatch.setenv("SSL_CERT_FILE", str(https_slack.certificates.ca_path))
    after = SlackTransport("xoxb-test", https_slack.url, timeout_seconds=5)

    assert before.post("C0123ABCD", "hi", "d1").outcome is not Outcome.DELIVERED
    assert after.post("C0123ABCD", "hi", "d2").outcome is Outcome.DELIVERED
    assert len(https_slack.posts) == 1
