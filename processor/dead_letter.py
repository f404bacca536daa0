"""Dead letters: a due-occurrence message Pub/Sub gave up on after MAX_DELIVERY_ATTEMPTS
failed pushes (core/subscription.py) and forwarded to the dead-letter topic, whose own push
subscription hands it back to `deliver`.

A dead letter is escalated (one ERROR line and one alert post naming the subject, its kind
and the attempts) and acknowledged; nothing is claimed or sent for it. The occurrence is not
lost and not sent twice: the document is untouched, so it is still due (the next tick
publishes it again) or under the lease of the delivery that failed (the next tick's
reconciliation settles it through Slack's history).

Pub/Sub marks a forwarded message with attributes (docs/pubsub.md, "Dead letters"); the
source subscription's name is the one this module needs, the delivery count is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.pubsub import DueOccurrence
from core.runtime import Runtime
from processor.escalate import escalate

SOURCE_SUBSCRIPTION = "CloudPubSubDeadLetterSourceSubscription"
DELIVERY_COUNT = "CloudPubSubDeadLetterSourceDeliveryCount"
DEAD_LETTERED = "dead_lettered"


@dataclass(frozen=True)
class DeadLetter:
    """Where Pub/Sub took the message from, and how many pushes it tried (None: unreported)."""

    source_subscription: str
    attempts: int | None


def dead_letter_of(message: Any) -> DeadLetter | None:
    """The dead-letter marks on a push's `message`, or None for a message as published."""
    attributes = message.get("attributes") if isinstance(message, Mapping) else None
    if not isinstance(attributes, Mapping):
        return None
    source = attributes.get(SOURCE_SUBSCRIPTION)
    if not isinstance(source, str) or not source:
        return None
    count = attributes.get(DELIVERY_COUNT)
    attempts = int(count) if isinstance(count, str) and count.isdigit() else None
    return DeadLetter(source, attempts)


def escalate_dead_letter(
    rt: Runtime, occurrence: DueOccurrence, dead: DeadLetter, message_id: str
) -> None:
    """Make the dead letter seen: an ERROR line and an alert naming the subject, the kind,
    the attempts and the subscription that gave up."""
    attempts = "an unreported number of" if dead.attempts is None else str(dead.attempts)
    subject: dict[str, Any] = (
        {"rotation_id": occurrence.subject_id}
        if occurrence.kind == "rotation"
        else {"message_id": occurrence.subject_id}
    )
    escalate(
        rt,
        status=DEAD_LETTERED,
        **subject,
        occurrence_at=occurrence.due_at,
        error_code=DEAD_LETTERED,
        detail=(
            f"{occurrence.kind} {occurrence.subject_id}: Pub/Sub gave up after {attempts} "
            f"delivery attempts on {dead.source_subscription}; the next tick publishes it "
            "again if it is still due, or reconciles its lease"
        ),
        kind=occurrence.kind,
        attempts=dead.attempts,
        source_subscription=dead.source_subscription,
        pubsub_message_id=message_id,
    )
