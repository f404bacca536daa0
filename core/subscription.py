"""The Pub/Sub subscriptions that push due occurrences to `deliver` (DISPATCH=pubsub): one
source for what `make run DISPATCH=pubsub` creates in the emulator and for the gcloud commands
docs/pubsub.md quotes (a test holds the two together).

- `deliver-push`, on PUBSUB_TOPIC: ordered (one channel's messages one at a time, in order),
  an ack deadline derived from SLACK_TIMEOUT_SECONDS, retries with backoff, and after
  MAX_DELIVERY_ATTEMPTS failed pushes the message goes to the dead-letter topic;
- `deliver-dead-letters`, on that dead-letter topic: pushes each dead letter to `deliver`,
  which escalates it and acknowledges (processor/dead_letter.py), so none waits unseen.

Both push with an OIDC token from a service account (in TRIGGER_SERVICE_ACCOUNTS) for the
audience `deliver` checks (its TICK_AUDIENCE, its own URL).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Pub/Sub's bounds (subscription properties): an ack deadline of 10..600 s, 5..100 attempts.
MAX_ACK_DEADLINE_SECONDS = 600
MAX_DELIVERY_ATTEMPTS = 5
# Backoff between redeliveries of a failed push: a transient Firestore or Slack failure gets
# time to pass, and a message held back keeps its channel's later ones waiting at most this.
MIN_RETRY_DELAY_SECONDS = 10
MAX_RETRY_DELAY_SECONDS = 600
# Floor of the ack deadline: a delivery reads and claims in Firestore before its post and
# finalizes after it, and pacing may wait for the channel's slot.
MIN_ACK_DEADLINE_SECONDS = 60

DELIVER_SUBSCRIPTION = "deliver-push"
DEAD_LETTER_SUBSCRIPTION = "deliver-dead-letters"


def ack_deadline_seconds(slack_timeout_seconds: int) -> int:
    """How long Pub/Sub waits for `deliver` to answer one push before pushing again: at least
    twice the Slack client timeout (a post waits up to it, and reconciliation's history
    lookup too), and at least MIN_ACK_DEADLINE_SECONDS. A push still running when its
    deadline passes is delivered again; the ledger keeps that harmless, but the deadline
    keeps it rare."""
    deadline = max(MIN_ACK_DEADLINE_SECONDS, 2 * slack_timeout_seconds)
    if deadline > MAX_ACK_DEADLINE_SECONDS:
        raise ValueError(
            f"SLACK_TIMEOUT_SECONDS={slack_timeout_seconds} needs an ack deadline of "
            f"{deadline} s, beyond Pub/Sub's {MAX_ACK_DEADLINE_SECONDS} s"
        )
    return deadline


@dataclass(frozen=True)
class PushSubscription:
    """One push subscription to `deliver`. Names are ids in `project`; `service_account` and
    `audience` are the OIDC token's (None: no token, as in the emulator, which ignores it)."""

    project: str
    name: str
    topic: str
    push_endpoint: str
    ack_deadline_seconds: int
    ordered: bool
    dead_letter_topic: str | None = None
    service_account: str | None = None
    audience: str | None = None

    def path(self, kind: str, name: str) -> str:
        return f"projects/{self.project}/{kind}/{name}"

    def request(self) -> dict[str, Any]:
        """The CreateSubscription request (google.cloud.pubsub_v1.SubscriberClient)."""
        push: dict[str, Any] = {"push_endpoint": self.push_endpoint}
        if self.service_account is not None:
            push["oidc_token"] = {
                "service_account_email": self.service_account,
                "audience": self.audience or "",
            }
        request: dict[str, Any] = {
            "name": self.path("subscriptions", self.name),
            "topic": self.path("topics", self.topic),
            "push_config": push,
            "ack_deadline_seconds": self.ack_deadline_seconds,
            "enable_message_ordering": self.ordered,
            "retry_policy": {
                "minimum_backoff": {"seconds": MIN_RETRY_DELAY_SECONDS},
                "maximum_backoff": {"seconds": MAX_RETRY_DELAY_SECONDS},
            },
        }
        if self.dead_letter_topic is not None:
            request["dead_letter_policy"] = {
                "dead_letter_topic": self.path("topics", self.dead_letter_topic),
                "max_delivery_attempts": MAX_DELIVERY_ATTEMPTS,
            }
        return request

    def gcloud_command(self) -> str:
        """The same subscription as a `gcloud pubsub subscriptions create` command, one flag
        a line, as docs/pubsub.md quotes it."""
        flags = [f"--topic={self.topic}", f"--push-endpoint={self.push_endpoint}"]
        if self.service_account is not None:
            flags.append(f"--push-auth-service-account={self.service_account}")
            flags.append(f"--push-auth-token-audience={self.audience}")
        if self.ordered:
            flags.append("--enable-message-ordering")
        flags.append(f"--ack-deadline={self.ack_deadline_seconds}")
        if self.dead_letter_topic is not None:
            flags.append(f"--dead-letter-topic={self.dead_letter_topic}")
            flags.append(f"--max-delivery-attempts={MAX_DELIVERY_ATTEMPTS}")
        flags.append(f"--min-retry-delay={MIN_RETRY_DELAY_SECONDS}s")
        flags.append(f"--max-retry-delay={MAX_RETRY_DELAY_SECONDS}s")
        lines = [f"gcloud pubsub subscriptions create {self.name}", *flags]
        return " \\\n  ".join(lines)


def dead_letter_topic(topic: str) -> str:
    """The dead-letter topic's id for the topic `topic` (an id)."""
    return f"{topic}-dead-letters"


def delivery_subscriptions(
    project: str,
    topic: str,
    push_endpoint: str,
    *,
    slack_timeout_seconds: int,
    service_account: str | None = None,
    audience: str | None = None,
) -> tuple[PushSubscription, PushSubscription]:
    """`deliver-push` on `topic` and `deliver-dead-letters` on its dead-letter topic, both
    pushing to `push_endpoint`. The dead letters' subscription is unordered and has no
    dead-letter topic of its own: `deliver` acknowledges every dead letter it can read, and
    retries one it cannot (Firestore or Slack down) with backoff, within the subscription's
    message retention (7 days by default), rather than send it anywhere less visible."""
    common: dict[str, Any] = {
        "project": project,
        "push_endpoint": push_endpoint,
        "ack_deadline_seconds": ack_deadline_seconds(slack_timeout_seconds),
        "service_account": service_account,
        "audience": audience,
    }
    dead_letters = dead_letter_topic(topic)
    deliver = PushSubscription(
        name=DELIVER_SUBSCRIPTION,
        topic=topic,
        ordered=True,
        dead_letter_topic=dead_letters,
        **common,
    )
    escalate = PushSubscription(
        name=DEAD_LETTER_SUBSCRIPTION, topic=dead_letters, ordered=False, **common
    )
    return deliver, escalate
