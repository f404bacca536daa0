"""The `deliver` CloudEvent target (DISPATCH=pubsub): one Pub/Sub message, one due document
claimed, sent and recorded through the same pipeline as the inline pass
(processor.deliver.deliver_one).

What Pub/Sub sees:
- returned (acknowledged): the occurrence was handled, or there is nothing to do (the
  document was claimed or settled already, deleted, edited since the tick read it, or is
  no longer due), or the message is malformed. A malformed message is logged (WARNING,
  naming the field) and acknowledged: it can never become readable, retrying it would only
  hold back its channel's later messages (ordering) until dead-lettered, and nothing is
  lost, as the document it meant is still due in Firestore and the next tick publishes it
  again.
- raised (HTTP 500, redelivered with backoff): a transient failure such as Firestore being
  unavailable, or invalid settings. Redelivery is safe: the ledger stops a second post.
- an `answers` message (a click's, interactions.handoff): the post updated to show the
  delivery's answers, and acknowledged whatever came of it (the next pass retries).
- a `scan` request (core.scan_request): one (kind, shard) scanned and what is due in it
  published (processor.scan.scan_shard); a failed read or publish raises (redelivered).
- a dead letter (a message Pub/Sub forwarded to the dead-letter topic after repeated failed
  pushes, processor/dead_letter.py): escalated and acknowledged, nothing sent.
- HTTP 401: the caller did not authenticate as the `tick` target requires (admin token, or
  a Google OIDC token for TICK_AUDIENCE from TRIGGER_SERVICE_ACCOUNTS: the push
  subscription's service account). It is checked before the request is parsed.
- HTTP 400 (405 for another method than POST): the request is no CloudEvent and no Pub/Sub
  push at all, so not from Pub/Sub; every error is the contract's JSON body.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import flask
from cloudevents.exceptions import (
    GenericException,
    InvalidRequiredFields,
    MissingRequiredFields,
)
from cloudevents.http import CloudEvent, from_http
from functions_framework import event_conversion
from functions_framework.exceptions import EventConversionException
from google.cloud import firestore

from core import logs
from core.errors import BadRequest, MethodNotAllowed
from core.http import json_object
from core.pubsub import DueOccurrence, MalformedMessage
from core.runtime import Runtime, runtime_for
from core.scan_request import SCAN, ScanRequest
from core.settings import Settings
from core.slack import Method
from core.store import is_document_id
from interactions.handoff import ANSWERS
from interactions.show import show_answers
from processor.abc import Claim, Passes
from processor.dead_letter import dead_letter_of, escalate_dead_letter
from processor.deliver import deliver_paced
from processor.installation import check_installation_lately
from processor.outcome import Result
from processor.pacing import ChannelWait, hold_limit, rate_limited_until
from processor.scan import scan_shard
from targets.kinds import KINDS_BY_NAME


def handle_deliver(request: flask.Request, settings: Settings) -> tuple[Any, int]:
    """Read the push's CloudEvent (its caller authenticated already: core.http.respond) and
    deliver the occurrence its message names."""
    event = read_event(request)
    message_id = event["id"]
    rt = runtime_for(settings)
    try:
        occurrence = read_message(event.data, rt)
        scan = scan_request_of(occurrence, event.data)
    except MalformedMessage as exc:
        logs.warning(
            "malformed Pub/Sub message acknowledged; nothing delivered",
            pubsub_message_id=message_id,
            field=exc.field,
            detail=exc.detail,
            status="malformed",
        )
        return {"status": "malformed"}, 200
    if scan is not None:
        return scanned(rt, scan, message_id)
    if occurrence.kind == ANSWERS:
        show_clicked(rt, occurrence.subject_id, message_id)
        return {"status": "answers_shown"}, 200
    dead = dead_letter_of(event.data.get("message"))
    if dead is not None:  # from the dead-letter topic's subscription: escalated, not sent
        escalate_dead_letter(rt, occurrence, dead, message_id)
        return {"status": "dead_letter"}, 200
    paced(rt, occurrence, message_id)
    return {"status": "handled"}, 200


def read_event(request: flask.Request) -> CloudEvent:
    """The request's CloudEvent, read as functions-framework reads one: binary or structured
    mode, else a raw Pub/Sub push (or legacy background event) converted. 400 when it is none
    of those (415 when a push's media type is not JSON); the answer names the cause, never
    the request's headers or body."""
    if request.method != "POST":
        raise MethodNotAllowed(f"{request.method} is not a push", ["POST"])
    try:
        return from_http(request.headers, request.get_data())
    except (MissingRequiredFields, InvalidRequiredFields):
        pass  # no CloudEvent attributes: a raw push, converted below
    # ValueError: not UTF-8; AttributeError, TypeError: a structured body that is JSON but no
    # object (`null`, a list), which the cloudevents library reads as a mapping.
    except (GenericException, RecursionError, ValueError, AttributeError, TypeError) as exc:
        raise BadRequest(f"not a readable CloudEvent ({type(exc).__name__})") from None
    json_object(request)  # 400 unless the body is a JSON object of a sane depth
    try:
        return event_conversion.background_event_to_cloud_event(request)
    except (EventConversionException, TypeError, KeyError, AttributeError, ValueError) as exc:
        # functions-framework's conversion assumes the shape it looks for: anything else
        # fails in one of these ways.
        raise BadRequest(
            f"neither a CloudEvent nor a Pub/Sub push ({type(exc).__name__})"
        ) from None


def paced(rt: Runtime, occurrence: DueOccurrence, message_id: str) -> None:
    """Deliver the occurrence; acknowledged only once its channel may take its next post
    (processor.pacing.hold_channel). Slack's Retry-After is waited out in the delivery, up to
    processor.pacing.hold_limit: the message is neither acknowledged nor nacked meanwhile, so
    the channel's later messages stay behind it and no delivery attempt is counted. A longer
    wait answers 429: Pub/Sub delivers the message again after its backoff, the channel's
    later messages behind it."""
    check_installation_lately(rt)  # while the app is uninstalled, nothing is posted to Slack
    try:
        deliver_occurrence(rt, occurrence, message_id, rt.clock.now() + hold_limit(rt.settings))
    except ChannelWait as exc:
        logs.info(
            "channel rate limited; message handed back to Pub/Sub",
            subject_id=occurrence.subject_id,
            pubsub_message_id=message_id,
            until=exc.until,
            status="nacked",
        )
        flask.abort(429, description=str(exc))


def scan_request_of(occurrence: DueOccurrence, data: Any) -> ScanRequest | None:
    """The scan a `scan` message asks for; None for any other kind."""
    if occurrence.kind != SCAN:
        return None
    kinds = set(KINDS_BY_NAME)
    return ScanRequest.of(occurrence.subject_id, occurrence.due_at, data["message"], kinds)


def scanned(rt: Runtime, scan: ScanRequest, message_id: str) -> tuple[dict[str, str], int]:
    """Scan the shard a request names: 200 and one INFO line with the counts; a failed read
    or publish raises, so Pub/Sub redelivers the request (the mark stayed where it was)."""
    counts = scan_shard(rt, KINDS_BY_NAME[scan.kind], scan.shard, scan.shards)
    fields = {key: counts[key] for key in ("due", "published", "scans", "errors")}
    if counts["errors"]:
        raise RuntimeError(f"scanning {scan.subject_id} failed; Pub/Sub asks again")
    logs.info(
        "scan request taken",
        kind=scan.kind,
        shard=scan.shard,
        pubsub_message_id=message_id,
        **fields,
        status="scanned",
    )
    return {"status": "scanned"}, 200


def show_clicked(rt: Runtime, delivery_id: str, message_id: str) -> None:
    """A click's answers shown in its post (interactions.handoff). Always acknowledged: an
    answer not shown yet stays `pending_update`, and the next pass shows it."""
    try:
        shown = show_answers(rt, delivery_id)
    except Exception as exc:
        logs.error(
            "showing answers failed; the next pass shows them",
            delivery_id=delivery_id,
            pubsub_message_id=message_id,
            error_code=type(exc).__name__,
            error_message=str(exc),
        )
        return
    logs.info(
        "answers message taken",
        delivery_id=delivery_id,
        pubsub_message_id=message_id,
        status=shown.value,
    )


def read_message(data: Any, rt: Runtime) -> DueOccurrence:
    """The occurrence a CloudEvent's data names: a Pub/Sub push's `message`. A carried
    snapshot must be of the kind's collection."""
    if not isinstance(data, dict):
        raise MalformedMessage("data", "the CloudEvent carries no JSON object")
    occurrence = DueOccurrence.from_pubsub(data.get("message"), rt.db)
    if occurrence.kind not in KINDS_BY_NAME and occurrence.kind not in (ANSWERS, SCAN):
        known = ", ".join(sorted([*KINDS_BY_NAME, ANSWERS, SCAN]))
        raise MalformedMessage("kind", f"must be one of {known}, got {occurrence.kind!r}")
    if not is_document_id(occurrence.subject_id):
        raise MalformedMessage("subject_id", f"not a document id: {occurrence.subject_id!r}")
    carried = occurrence.snapshot
    if carried is not None:  # an `answers` message carries none
        kind = KINDS_BY_NAME.get(occurrence.kind)
        if kind is None or carried.reference.path != f"{kind.collection}/{carried.id}":
            path = carried.reference.path
            raise MalformedMessage("document", f"names {path!r}, not a {occurrence.kind}")
    return occurrence


def deliver_occurrence(
    rt: Runtime, occurrence: DueOccurrence, message_id: str, hold_until: datetime | None = None
) -> Result:
    """Deliver what the document the message names is due for now, from the snapshot it
    carries (format 2; a format-1 message's document is read): the claim, conditioned on
    that snapshot's update time, decides, so a document claimed, settled or edited since the
    tick read it posts nothing (the next tick publishes an edited one again; a lost claim
    reads the document once, `_from_carried`). A document released for a Slack rate limit,
    or a person's DM that conversations.open's Retry-After keeps from opening, is waited for
    if that ends by `hold_until` (default: now), and read again after the wait; later,
    ChannelWait hands the message back, so the channel's later messages do not overtake
    it."""
    kind = KINDS_BY_NAME[occurrence.kind]
    ref = rt.db.collection(kind.collection).document(occurrence.subject_id)
    hold_until = hold_until or rt.clock.now()
    fields: dict[str, Any] = {
        kind.id_field: occurrence.subject_id,
        "pubsub_message_id": message_id,
        "due_at": occurrence.due_at,
    }
    tried = _from_carried(rt, kind, occurrence, ref, hold_until)
    if tried is None:  # no snapshot carried, or a Retry-After overtook it: read the document
        snap = ref.get()
        if _waited(rt, rate_limited_until(snap.to_dict() or {}, rt.clock.now()), hold_until):
            snap = ref.get()
        if not snap.exists:
            logs.info("nothing to deliver: the document is gone", **fields, status="skipped")
            return Result.SKIPPED
        tried = deliver_paced(rt, kind, snap, hold_until)
    result, claim = tried
    while (
        claim is None
        and result is Result.RELEASED  # left due by its plan: the DM was not opened
        and _waited(rt, rt.slack.waiting_until(Method.OPEN), hold_until)
    ):
        result, claim = deliver_paced(rt, kind, ref.get(), hold_until)
    if claim is None and result in (Result.DUPLICATE, Result.SKIPPED):
        # Claimed or settled by another delivery (a redelivered or duplicate message), or
        # not due (any more): the ledger already says what happened to the occurrence. (A
        # document the plan settled itself, failed or left due, has its own outcome line.)
        logs.info("nothing to deliver: not claimable now", **fields, status=result.value)
    return result


def _from_carried(
    rt: Runtime,
    kind: Passes[Any, Any],
    occurrence: DueOccurrence,
    ref: firestore.DocumentReference,
    hold_until: datetime,
) -> tuple[Result, Claim[Any] | None] | None:
    """The delivery from the carried snapshot, without reading the document. None when none
    is carried (format 1), or when its claim lost to a release for a Slack rate limit (a
    redelivery after a 429 carries the document as it was before): the document is then
    read as for a format-1 message, so the Retry-After is waited for or the message handed
    back, never acknowledged early. Telling that release from any other change since the
    tick (an edit, a settle, another delivery) costs one read, and only when the claim
    lost."""
    carried = occurrence.snapshot
    if carried is None:
        return None
    result, claim = deliver_paced(rt, kind, carried, hold_until)
    lost = claim is None and result is Result.DUPLICATE
    if lost and rate_limited_until(ref.get().to_dict() or {}, rt.clock.now()) is not None:
        return None
    return result, claim


def _waited(rt: Runtime, until: datetime | None, hold_until: datetime) -> bool:
    """Slept until `until` if it comes by `hold_until`; False when there is nothing to wait
    for; ChannelWait when it is later (the message is handed back to Pub/Sub)."""
    if until is None:
        return False
    if until > hold_until:
        raise ChannelWait(until)
    rt.clock.sleep(max(0.0, (until - rt.clock.now()).total_seconds()))
    return True
