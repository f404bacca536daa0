"""Slack over HTTPS, as in production: the transport verifies Slack's certificate with one
TLS context built with the transport (one per instance), not one per call: each default
context loads the system's CA bundle again, about 20 ms of CPU per post. The calls a slash
command or the directory makes outside the transport (core.slack.web_client) likewise."""

from __future__ import annotations

import shutil
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

import pytest
from google.cloud import firestore

from core.clock import FixedClock
from core.directory_refresh import lookup_by_email
from core.platform import Outcome
from core.settings import Settings
from core.slack import SlackTransport
from emulator.http_reply import Reply, json_reply
from emulator.teams_http import BackgroundServer, Request
from emulator.teams_tls import Certificates, make_certificates
from interactions.slack_web import post_ephemeral
from tests.fixtures.runtime import make_runtime


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


def test_the_interactions_and_directory_calls_share_one_tls_context_each(
    https_slack: HttpsSlack,
    ca_bundle_loads: list[ssl.SSLContext],
    monkeypatch: pytest.MonkeyPatch,
    settings: Settings,
    db: firestore.Client,
    clock: FixedClock,
) -> None:
    # A slash command's ephemeral answers and the directory's look-ups, over HTTPS: each
    # built its client once for the process, not one (and a CA bundle load) per call.
    monkeypatch.setenv("SSL_CERT_FILE", str(https_slack.certificates.ca_path))
    over_https = replace(settings, slack_api_url=https_slack.url, slack_bot_token="xoxb-tls")
    rt = make_runtime(over_https, db, clock, "worker-a")
    built = len(ca_bundle_loads)  # the runtime's own transport's

    took = [post_ephemeral(rt, "C0123ABCD", "U0123ABCD", f"hi {n}") for n in range(3)]
    for n in range(3):
        lookup_by_email(over_https, f"person{n}@example.com")

    assert took == [True] * 3
    assert len(https_slack.posts) == 6
    assert len(ca_bundle_loads) - built == 2  # one for each client, none per call
