"""The `api` target's router: path and method to a handler, and the HTTP details
(headers, query parameters) turned into plain arguments for the domain functions."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import flask
from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.api_core.exceptions import NotFound as DocumentMissing
from pydantic import BaseModel

from composer import idempotency, listing
from composer.messages import cancel_message, create_message, edit_message, get_message
from composer.models import (
    MessageDraft,
    MessageEdit,
    RotationDraft,
    RotationEdit,
    RotationPreview,
)
from composer.pausing import pause_message, resume_message
from composer.preview import DEFAULT_COUNT, MAX_COUNT, preview_message
from composer.rotation_preview import preview_rotation
from composer.rotations import create_rotation, edit_rotation, get_rotation
from composer.validation import Problems, whole_number
from composer.versions import if_match_from
from core.errors import Conflict, MethodNotAllowed, NotFound
from core.http import json_object, parse_body
from core.runtime import Runtime, runtime_for
from core.settings import Settings
from core.store import is_document_id

Answer = tuple[Any, int]
# Each retry follows a concurrent create with the same Idempotency-Key.
_CREATE_TRIES = 3


# --- handlers -----------------------------------------------------------------------------


def _post_message(request: flask.Request, rt: Runtime) -> Answer:
    return _create(request, rt, "POST /messages", MessageDraft, create_message, get_message)


def _get_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    _no_query(request)
    return get_message(rt, ident), 200


def _put_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    if_match = if_match_from(request.headers)
    edit = parse_body(request, MessageEdit, optional=False)
    return edit_message(rt, ident, edit, if_match), 200


def _delete_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return cancel_message(rt, ident, if_match_from(request.headers)), 200


def _pause_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    _no_query(request)
    return pause_message(rt, ident, if_match_from(request.headers)), 200


def _resume_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    _no_query(request)
    return resume_message(rt, ident, if_match_from(request.headers)), 200


def _list_messages(request: flask.Request, rt: Runtime) -> Answer:
    problems = Problems()
    _allow_query(request, problems, "status", "channel", "limit", "cursor")
    statuses = listing.statuses_from(request.args.get("status"), problems)
    channel = listing.check_listing_channel(request.args.get("channel"), problems)
    page = listing.page_from(request.args, problems)
    problems.raise_if_any()
    return listing.list_messages(rt, statuses, channel, page), 200


def _list_deliveries(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    problems = Problems()
    _allow_query(request, problems, "limit", "cursor")
    page = listing.page_from(request.args, problems)
    problems.raise_if_any()
    return listing.list_deliveries(rt, ident, page), 200


def _preview(request: flask.Request, rt: Runtime) -> Answer:
    count = _count_from(request)
    draft = parse_body(request, MessageDraft, optional=False)
    return preview_message(draft, rt.clock.now(), count), 200


def _post_rotation(request: flask.Request, rt: Runtime) -> Answer:
    return _create(request, rt, "POST /rotations", RotationDraft, create_rotation, get_rotation)


def _get_rotation(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    _no_query(request)
    return get_rotation(rt, ident), 200


def _put_rotation(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    if_match = if_match_from(request.headers)
    edit = parse_body(request, RotationEdit, optional=False)
    return edit_rotation(rt, ident, edit, if_match), 200


def _list_rotations(request: flask.Request, rt: Runtime) -> Answer:
    problems = Problems()
    _allow_query(request, problems, "limit", "cursor")
    page = listing.page_from(request.args, problems)
    problems.raise_if_any()
    return listing.list_rotations(rt, page), 200


def _list_rotation_days(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    problems = Problems()
    _allow_query(request, problems, "limit", "cursor")
    page = listing.page_from(request.args, problems)
    problems.raise_if_any()
    return listing.list_rotation_days(rt, ident, page), 200


def _preview_rotation(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    count = _count_from(request)
    parse_body(request, RotationPreview, optional=True)
    return preview_rotation(rt, ident, count), 200


# --- the table ----------------------------------------------------------------------------

_ID = r"(?P<ident>[^/]+)"
_ROUTES: list[tuple[str, re.Pattern[str], Callable[..., Answer]]] = [
    ("POST", re.compile(r"/messages"), _post_message),
    ("GET", re.compile(r"/messages"), _list_messages),
    ("GET", re.compile(rf"/messages/{_ID}"), _get_message),
    ("PUT", re.compile(rf"/messages/{_ID}"), _put_message),
    ("DELETE", re.compile(rf"/messages/{_ID}"), _delete_message),
    ("GET", re.compile(rf"/messages/{_ID}/deliveries"), _list_deliveries),
    ("POST", re.compile(rf"/messages/{_ID}/pause"), _pause_message),
    ("POST", re.compile(rf"/messages/{_ID}/resume"), _resume_message),
    ("POST", re.compile(r"/preview"), _preview),
    ("POST", re.compile(r"/rotations"), _post_rotation),
    ("GET", re.compile(r"/rotations"), _list_rotations),
    ("GET", re.compile(rf"/rotations/{_ID}"), _get_rotation),
    ("PUT", re.compile(rf"/rotations/{_ID}"), _put_rotation),
    ("POST", re.compile(rf"/rotations/{_ID}/preview"), _preview_rotation),
    ("GET", re.compile(rf"/rotations/{_ID}/deliveries"), _list_rotation_days),
]


def handle_api(request: flask.Request, settings: Settings) -> Answer:
    return dispatch(request, runtime_for(settings))


def dispatch(request: flask.Request, rt: Runtime) -> Answer:
    path = request.path.rstrip("/") or "/"
    allowed = []
    for method, pattern, handler in _ROUTES:
        match = pattern.fullmatch(path)
        if match is None:
            continue
        if method != request.method:
            allowed.append(method)
            continue
        ident = match.groupdict().get("ident")
        if ident is not None and not is_document_id(ident):
            # Never a stored document, so never found.
            raise NotFound(f"no record with id {ident!r}")
        return handler(request, rt, **match.groupdict())
    if allowed:
        raise MethodNotAllowed(f"{path} takes {', '.join(allowed)}, not {request.method}")
    raise NotFound(f"no route {request.method} {path}")


# --- helpers ------------------------------------------------------------------------------


def _create(
    request: flask.Request,
    rt: Runtime,
    route: str,
    model: type[BaseModel],
    create: Callable[..., dict[str, Any]],
    get: Callable[[Runtime, str], dict[str, Any]],
) -> Answer:
    """A create, made idempotent by the `Idempotency-Key` header when there is one. The key
    is looked up before the body is validated: a retry of a create whose send_at has since
    passed still answers the record it made."""
    _no_query(request)
    body = json_object(request)
    key = idempotency.key_from(request.headers)
    for _ in range(_CREATE_TRIES):
        fresh = None
        if key is not None:
            found = idempotency.look_up(rt.db, key, route, body, rt.clock.now())
            if isinstance(found, idempotency.Replay):
                return get(rt, found.target_id), 201
            fresh = found
        draft = parse_body(request, model, optional=False)
        try:
            return create(rt, draft, fresh), 201
        except (AlreadyExists, FailedPrecondition, DocumentMissing):
            if key is None:
                raise
            # A concurrent request with the same key won: the next look-up finds its record.
    raise Conflict("concurrent requests kept racing for this Idempotency-Key; try again")


def _allow_query(request: flask.Request, problems: Problems, *names: str) -> None:
    for name in request.args:
        if name not in names:
            problems.add(name, f"unknown query parameter; this route takes {', '.join(names)}")


def _count_from(request: flask.Request) -> int:
    """The previews' `count` query parameter (the only one they take)."""
    problems = Problems()
    _allow_query(request, problems, "count")
    count = whole_number(problems, "count", request.args.get("count"), MAX_COUNT, DEFAULT_COUNT)
    problems.raise_if_any()
    return count


def _no_query(request: flask.Request) -> None:
    problems = Problems()
    for name in request.args:
        problems.add(name, "unknown query parameter; this route takes none")
    problems.raise_if_any()
