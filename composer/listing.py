"""Listing messages and rotations, the ledger entries of each and the answers to their
buttons, with cursor pagination.

Pages are ordered by an instant and then the document id, so the order is total and a
cursor (the last row's instant and id, opaque to callers) resumes exactly after that row
with `start_after`: no offsets, no skipped or repeated rows while documents are added.
Messages are ordered by `next_run_at`; sent, completed, failed and cancelled messages keep
their last `next_run_at` (nothing clears it), so they list where they last ran. Rotations
are ordered the same way (a paused one keeps the `next_run_at` of its next turn day).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from pydantic import BaseModel, Field, ValidationError

from composer.answers import (
    ButtonResponse,
    ButtonResponsePage,
    Delivery,
    DeliveryPage,
    MessagePage,
    RotationDay,
    RotationDayPage,
    RotationPage,
)
from composer.rotation_up import with_up
from composer.serialize import dump, message_json, rotation_json, stored_json
from composer.validation import Problems, check_channel, whole_number
from composer.versions import read
from core.actions import Action, find, pinned_catalog
from core.documents.deliveries import LedgerField
from core.documents.errors import ErrorField
from core.documents.messages import MessageField, Status
from core.documents.responses import ResponseField
from core.documents.rotations import RotationField
from core.errors import DocumentError
from core.models import TEAMS_CONVERSATION_ID, USER_ID
from core.runtime import Runtime
from core.store import (
    DELIVERIES,
    MESSAGES,
    RESPONSES,
    ROTATIONS,
    is_document_id,
    is_timestamp,
)

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
STATUSES = tuple(Status)  # the contract's, `skipped` and `sending` included
_DOCUMENT_ID = "__name__"
_ONE_STATUS = "|".join(STATUSES)
# What `created_by` can hold (composer.actor): a Slack user id, an email, or `admin`.
CREATED_BY = re.compile(r"^(?:[UW][A-Z0-9]{2,}|admin|[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,255})$")


class PageQuery(BaseModel):
    """The paging query parameters (parsed by `page_from`)."""

    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
    cursor: str | None = Field(
        None,
        min_length=1,
        pattern=r"^[A-Za-z0-9_-]+$",  # unpadded base64url, as _encode_cursor writes it
        description="the previous page's `next_cursor`, exactly as it was answered",
    )


class MessageQuery(PageQuery):
    """`GET /messages`' query parameters."""

    status: str | None = Field(
        None,
        pattern=rf"^({_ONE_STATUS})(,({_ONE_STATUS}))*$",
        description="a comma-separated subset of the statuses",
    )
    channel: str | None = Field(None, pattern=r"^[CGD][A-Z0-9]{2,}$")
    user: str | None = Field(
        None, pattern=r"^[UW][A-Z0-9]{2,}$", description="messages to this person only"
    )
    # The characters Bot Framework conversation ids are made of (`19:…@thread.tacv2`, `a:1…`,
    # `…;messageid=…`), none of which a URL's query changes (`+`, `&`, `#`, `%` would).
    teams_conversation: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9:@._;=-]{1,500}$",
        description="messages to this Microsoft Teams conversation only",
    )
    created_by: str | None = Field(
        None,
        pattern=CREATED_BY.pattern,
        description="messages made by this actor only: a Slack user id, an email, or `admin`",
    )


@dataclass(frozen=True)
class Page:
    limit: int
    after: tuple[datetime | None, str] | None  # the previous page's last (instant, id)


def page_from(query: Any, problems: Problems) -> Page:
    """`limit` and `cursor` query parameters; problems are reported, not raised."""
    limit = whole_number(problems, "limit", query.get("limit"), MAX_LIMIT, DEFAULT_LIMIT)
    after = None
    raw_cursor = query.get("cursor")
    if raw_cursor is not None:
        after = _decode_cursor(raw_cursor)
        if after is None:
            problems.add("cursor", "is not a cursor this API returned")
    return Page(limit, after)


def statuses_from(raw: str | None, problems: Problems) -> list[str]:
    if raw is None:
        return []
    wanted = [part.strip() for part in raw.split(",")]
    unknown = [part for part in wanted if part not in STATUSES]
    if unknown or not wanted:
        problems.add("status", f"unknown status {unknown}; one of {', '.join(STATUSES)}")
    return list(dict.fromkeys(wanted))


@dataclass(frozen=True)
class Recipient:
    """`GET /messages`' filters on where a message posts; each None when not asked for."""

    channel: str | None = None
    user: str | None = None
    teams_conversation: str | None = None
    created_by: str | None = None  # not where it posts, but filtered alike: who made it


def list_messages(rt: Runtime, statuses: list[str], to: Recipient, page: Page) -> dict[str, Any]:
    query: Any = rt.db.collection(MESSAGES)
    if statuses:
        query = query.where(filter=FieldFilter(MessageField.STATUS, "in", statuses))
    for field, value in (
        (MessageField.CHANNEL, to.channel),
        (MessageField.USER, to.user),
        (MessageField.TEAMS_CONVERSATION, to.teams_conversation),
        (MessageField.CREATED_BY, to.created_by),
    ):
        if value is not None:
            query = query.where(filter=FieldFilter(field, "==", value))
    query = query.order_by(MessageField.NEXT_RUN_AT).order_by(_DOCUMENT_ID)
    rows, cursor = _page(query, MessageField.NEXT_RUN_AT, page)
    messages = [message_json(s.id, s.to_dict() or {}) for s in rows]
    return dump(MessagePage.model_validate({"messages": messages, "next_cursor": cursor}))


def list_deliveries(rt: Runtime, message_id: str, page: Page) -> dict[str, Any]:
    """Every ledger entry of the message, newest occurrence first: sent, failed, skipped,
    unconfirmed, released and still claimed alike."""
    read(rt.db.collection(MESSAGES).document(message_id), "message")
    rows, cursor = _ledger_page(rt, LedgerField.MESSAGE_ID, message_id, page)
    deliveries = [_delivery(s.id, s.to_dict() or {}) for s in rows]
    return dump(DeliveryPage.model_validate({"deliveries": deliveries, "next_cursor": cursor}))


# What answers are listed for, by the answer's field naming it: the subject's collection,
# and what a 404 calls it.
_ANSWERED = {
    ResponseField.MESSAGE_ID: (MESSAGES, "message"),
    ResponseField.ROTATION_ID: (ROTATIONS, "rotation"),
}


def list_responses(
    rt: Runtime, subject: ResponseField, subject_id: str, page: Page
) -> dict[str, Any]:
    """Every answer to the buttons of a message or a rotation (`subject`: the answers'
    `message_id` or `rotation_id`), over all its deliveries, newest first; labels from the
    catalog each post was sent with (`deliveries.actions`: every claim of a post with
    buttons pins it, and only such a post is answered)."""
    collection, what = _ANSWERED[subject]
    read(rt.db.collection(collection).document(subject_id), what)  # 404 when it is gone
    rows, cursor = _newest_first(
        rt.db.collection(RESPONSES), subject, subject_id, ResponseField.ANSWERED_AT, page
    )
    pinned = _pinned_catalogs(rt, rows)
    answers = []
    for row in rows:
        data = row.to_dict() or {}
        actions = pinned.get(str(data.get(ResponseField.DELIVERY_ID)), ())
        answers.append(_response(row.id, data, actions))
    return dump(ButtonResponsePage.model_validate({"responses": answers, "next_cursor": cursor}))


def _pinned_catalogs(rt: Runtime, rows: list[Any]) -> dict[str, tuple[Action, ...]]:
    """The catalog each answered post was sent with, by delivery id."""
    ids = {str((s.to_dict() or {}).get(ResponseField.DELIVERY_ID)) for s in rows}
    refs = [rt.db.collection(DELIVERIES).document(i) for i in sorted(ids) if is_document_id(i)]
    pinned = {}
    for entry in rt.db.get_all(refs) if refs else ():
        data = entry.to_dict() or {}
        if LedgerField.ACTIONS in data:
            pinned[entry.id] = _catalog(data[LedgerField.ACTIONS])
    return pinned


def _catalog(stored: Any) -> tuple[Action, ...]:
    try:
        return pinned_catalog(stored)
    except DocumentError:
        return ()


def _response(doc_id: str, data: dict[str, Any], actions: tuple[Action, ...]) -> ButtonResponse:
    action_id = data.get(ResponseField.ACTION_ID)
    action = find(actions, action_id) if isinstance(action_id, str) else None
    ended = data.get(ResponseField.NOT_SHOWN)
    shown = data.get(ResponseField.PENDING_UPDATE) is not True and ended is None
    fields = {
        "id": doc_id,
        **{f.value: data.get(f) for f in _LISTED_RESPONSE},
        "label": action.label if action is not None else None,
        "shown": shown,
        "not_shown": ended if isinstance(ended, str) else None,
    }
    try:
        return ButtonResponse.model_validate(fields)
    except ValidationError:  # written by hand in an odd shape: the id and what fits
        return ButtonResponse(id=doc_id, shown=shown)


_LISTED_RESPONSE = (
    ResponseField.DELIVERY_ID,
    ResponseField.USER,
    ResponseField.ACTION_ID,
    ResponseField.ANSWERED_AT,
)


def list_rotations(rt: Runtime, page: Page) -> dict[str, Any]:
    """Every rotation, active and paused, by `next_run_at` and then id."""
    query = rt.db.collection(ROTATIONS).order_by(RotationField.NEXT_RUN_AT).order_by(_DOCUMENT_ID)
    rows, cursor = _page(query, RotationField.NEXT_RUN_AT, page)
    now = rt.clock.now()  # `up` of each, from the page's own documents: no read per row
    rotations = [rotation_json(s.id, with_up(s.id, s.to_dict() or {}, now)) for s in rows]
    return dump(RotationPage.model_validate({"rotations": rotations, "next_cursor": cursor}))


def list_rotation_days(rt: Runtime, rotation_id: str, page: Page) -> dict[str, Any]:
    """The rotation's history: every day in its ledger, newest first, posted (`sent`),
    `skipped` (with the reason: missed, everyone out, day ended), failed, unconfirmed,
    released or still claimed alike, with the member the day named."""
    read(rt.db.collection(ROTATIONS).document(rotation_id), "rotation")
    rows, cursor = _ledger_page(rt, LedgerField.ROTATION_ID, rotation_id, page)
    days = [_delivery(s.id, s.to_dict() or {}, _LISTED_DAY, RotationDay) for s in rows]
    return dump(RotationDayPage.model_validate({"deliveries": days, "next_cursor": cursor}))


def _ledger_page(
    rt: Runtime, owner: LedgerField, owner_id: str, page: Page
) -> tuple[list[Any], str | None]:
    """One page of the ledger entries whose `owner` field is `owner_id`, newest first."""
    return _newest_first(
        rt.db.collection(DELIVERIES), owner, owner_id, LedgerField.OCCURRENCE_AT, page
    )


def _newest_first(
    collection: firestore.CollectionReference, owner: str, owner_id: str, at: str, page: Page
) -> tuple[list[Any], str | None]:
    """One page of the documents of `collection` whose `owner` field is `owner_id`, by their
    time `at` and then id, newest first."""
    direction = firestore.Query.DESCENDING
    query = (
        collection.where(filter=FieldFilter(owner, "==", owner_id))
        .order_by(at, direction=direction)
        .order_by(_DOCUMENT_ID, direction=direction)
    )
    return _page(query, at, page)


def check_listing_channel(raw: str | None, problems: Problems) -> str | None:
    if raw is not None:
        check_channel(problems, "channel", raw)
    return raw


def check_listing_user(raw: str | None, problems: Problems) -> str | None:
    if raw is not None and not USER_ID.match(raw):
        problems.add("user", f"{raw[:80]!r} is not a Slack user id such as U0123ABCD")
    return raw


def check_listing_creator(raw: str | None, problems: Problems) -> str | None:
    if raw is not None and not CREATED_BY.match(raw):
        problems.add(
            "created_by",
            f"{raw[:80]!r} is not who made a message: a Slack user id such as U0123ABCD, "
            "an email, or admin",
        )
    return raw


def check_listing_teams(raw: str | None, problems: Problems) -> str | None:
    if raw is not None and not TEAMS_CONVERSATION_ID.match(raw):
        problems.add("teams_conversation", f"{raw[:80]!r} is not a Teams conversation id")
    return raw


# A listed delivery: these fields of its ledger entry (a `reason` falls back to the error's
# code; an `error` that is not a map is left out).
_LISTED = (
    LedgerField.OCCURRENCE_AT,
    LedgerField.STATUS,
    LedgerField.REASON,
    LedgerField.SLACK_TS,
    LedgerField.ATTEMPTS,
    LedgerField.CLAIMED_AT,
    LedgerField.SENT_AT,
    LedgerField.CHANNEL,
    LedgerField.USER,
    LedgerField.ERROR,
)
# A listed rotation day: the same, with the local date and the member it named.
_LISTED_DAY = (LedgerField.OCCURRENCE_DATE, LedgerField.MEMBER, *_LISTED)


def _delivery(
    delivery_id: str,
    entry: dict[str, Any],
    fields: tuple[LedgerField, ...] = _LISTED,
    model: type[Delivery] = Delivery,
) -> dict[str, Any]:
    listed = {field.value: entry.get(field) for field in fields}
    error = listed[LedgerField.ERROR] if isinstance(listed[LedgerField.ERROR], dict) else None
    reason = listed[LedgerField.REASON] or (error or {}).get(ErrorField.CODE)
    return stored_json(
        model,
        delivery_id,
        listed | {LedgerField.REASON.value: reason, LedgerField.ERROR.value: error},
    )


def _page(query: Any, order_field: str, page: Page) -> tuple[list[Any], str | None]:
    if page.after is not None:
        instant, doc_id = page.after
        query = query.start_after({order_field: instant, _DOCUMENT_ID: doc_id})
    # One row more than asked tells whether another page exists.
    rows = list(query.limit(page.limit + 1).stream())
    if len(rows) <= page.limit:
        return rows, None
    rows = rows[: page.limit]
    last = rows[-1]
    return rows, _encode_cursor((last.to_dict() or {}).get(order_field), last.id)


def _encode_cursor(instant: Any, doc_id: str) -> str:
    at = instant.isoformat() if isinstance(instant, datetime) else None
    raw = json.dumps({"at": at, "id": doc_id}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime | None, str] | None:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        doc_id = data["id"]
        at = None if data["at"] is None else datetime.fromisoformat(data["at"])
    except (binascii.Error, ValueError, TypeError, KeyError, RecursionError):
        return None
    if not isinstance(doc_id, str) or not is_document_id(doc_id):
        return None
    if at is not None and (at.tzinfo is None or not is_timestamp(at)):
        return None
    return at, doc_id
