"""The Cloud Pub/Sub emulator that ships with the Google Cloud CLI, and what DISPATCH=pubsub
needs in it: the topic the tick publishes to, its dead-letter topic, and the push
subscriptions to `deliver` (core/subscription.py configures them).

    gcloud beta emulators pubsub start --host-port=HOST:PORT

Clients reach it through PUBSUB_EMULATOR_HOST (set it before the first client is built).
The emulator keeps topics per project, so a test with a project of its own sees only its
own messages.

The emulator's push carries no OIDC token (it ignores a subscription's `oidc_token`), while
`deliver` takes only authenticated pushes, as deployed. `PushRelay` plays Google's part:
the subscription pushes to it, and it forwards each push with `Authorization: Bearer
<token>` (the admin token locally) and hands back `deliver`'s status, which Pub/Sub reads as
ack (2xx) or nack.
"""

from __future__ import annotations

import itertools
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

from core.subscription import PushSubscription
from emulator.firestore import FirestoreEmulator, _authority

EMULATOR_HOST_ENV = "PUBSUB_EMULATOR_HOST"
# Longer than `deliver` takes (a post waits at most SLACK_TIMEOUT_SECONDS): a push still
# running when its deadline passes is delivered again (docs/pubsub.md).
ACK_DEADLINE_SECONDS = 60

_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class PubSubEmulator(FirestoreEmulator):
    """One Pub/Sub emulator process (group) on host:port; port 0 picks a free one. Started,
    awaited and stopped as the Firestore emulator is (it answers `GET /` with "Ok" too)."""

    name = "Pub/Sub emulator"

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)

    def command(self) -> list[str]:
        gcloud = shutil.which("gcloud")
        if gcloud is None:
            raise RuntimeError(
                "Pub/Sub emulator not found: install the Google Cloud CLI with its "
                "pubsub-emulator and beta components"
            )
        host_port = _authority(self.host, self.port)
        return [
            gcloud,
            "--quiet",
            "beta",
            "emulators",
            "pubsub",
            "start",
            f"--host-port={host_port}",
        ]


def create_topic(topic: str) -> None:
    """Create `topic` (projects/<project>/topics/<id>) in the emulator PUBSUB_EMULATOR_HOST
    names."""
    from google.cloud.pubsub_v1 import PublisherClient

    PublisherClient().create_topic(name=topic)


def create_subscription(topic: str, subscription: str, push_endpoint: str | None = None) -> None:
    """An ordered subscription to `topic`: push to `push_endpoint`, or pull when None."""
    from google.cloud.pubsub_v1 import SubscriberClient

    request: dict[str, object] = {
        "name": subscription,
        "topic": topic,
        "enable_message_ordering": True,
        "ack_deadline_seconds": ACK_DEADLINE_SECONDS,
    }
    if push_endpoint is not None:
        request["push_config"] = {"push_endpoint": push_endpoint}
    with SubscriberClient() as subscriber:
        subscriber.create_subscription(request=request)


def create_push_subscription(subscription: PushSubscription) -> None:
    """Create `subscription` exactly as core/subscription.py configures it (and as the deploy
    docs' gcloud commands do)."""
    from google.cloud.pubsub_v1 import SubscriberClient

    with SubscriberClient() as subscriber:
        subscriber.create_subscription(request=subscription.request())


class PushRelay:
    """An HTTP server on host:port (0: a free one) that forwards every POST to `target` with
    `Authorization: Bearer <token>` and answers with the target's status. With `more`
    targets, the POSTs go to each in turn, as a load balancer spreads pushes over a
    function's instances."""

    def __init__(
        self,
        target: str,
        token: str,
        host: str = "127.0.0.1",
        port: int = 0,
        more: Sequence[str] = (),
    ) -> None:
        relay = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(relay.forward(body))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass  # `deliver` logs each delivery itself

        self.target = target
        self.token = token
        self._targets = itertools.cycle([target, *more])
        self._turn = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), Handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{_authority(str(host), int(port))}/"

    def forward(self, body: bytes) -> int:
        with self._turn:
            target = next(self._targets)
        request = urllib.request.Request(  # noqa: S310 - a local http URL
            target,
            data=body,
            method="POST",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with _opener.open(request, timeout=ACK_DEADLINE_SECONDS) as response:
                status: int = response.status
                return status
        except urllib.error.HTTPError as exc:
            return exc.code
        except OSError:
            return 503  # `deliver` is not up (yet): Pub/Sub pushes it again later

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
