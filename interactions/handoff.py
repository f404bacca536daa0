"""A recorded answer handed to what shows it in the post, off the click's request path.

Under DISPATCH=pubsub: one Pub/Sub message (core.pubsub's format, `kind` ANSWERS, the
delivery as `subject_id`, no ordering key), which `deliver` takes to update the post at
once (targets.deliver). Inline: nothing is sent; the next pass shows it
(interactions.show.show_pending). Either way the answer is already `pending_update`, so a
publish that fails or is lost only leaves it to the next pass."""

from __future__ import annotations

from core import logs
from core.pubsub import DueOccurrence, publisher
from core.runtime import Runtime
from core.settings import PUBSUB

ANSWERS = "answers"
# How long the click waits for Pub/Sub to take the message (the publisher retries within).
PUBLISH_WITHIN_SECONDS = 1.0


def hand_off(rt: Runtime, delivery_id: str) -> None:
    topic = rt.settings.pubsub_topic
    if rt.settings.dispatch != PUBSUB or topic is None:
        return
    message = DueOccurrence(ANSWERS, delivery_id, rt.clock.now(), "")
    try:
        future = publisher().publish(topic, message.data(), ordering_key="", **message.attributes())
        future.result(timeout=PUBLISH_WITHIN_SECONDS)
    except Exception as exc:
        logs.warning(
            "answer recorded; publishing its update failed, the next pass shows it",
            delivery_id=delivery_id,
            error_code=type(exc).__name__,
            error_message=str(exc),
        )
