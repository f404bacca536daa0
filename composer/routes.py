"""The `api` target's router: the table of routes (each also describes itself for
`/openapi.json`, `composer.openapi.Route`), and the HTTP details (headers, query parameters)
turned into plain arguments for the domain functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flask
from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.api_core.exceptions import NotFound as DocumentMissing
from pydantic import BaseModel

from composer import agenda, directory, idempotency, listing, openapi
from composer.answers import (
    AgendaPage,
    ButtonResponsePage,
    CategoryList,
    ChannelList,
    DeliveryPage,
    EventReceipt,
    Me,
    Message,
    MessagePage,
    MessagePreview,
    OccurrenceSplit,
    OpenApiDocument,
    Preferences,
    Rotation,
    RotationDayPage,
    RotationPage,
    RotationTurns,
    SendNowReceipt,
    TeamsConversationList,
    TestSent,
    UserList,
)
from composer.events import post_event
from composer.idempotency import HEADER as IDEMPOTENCY_KEY
from composer.listing import MessageQuery, PageQuery
from composer.messages import MESSAGE_RECORDS, cancel_message, create_message, edit_message
from composer.models import (
    EventBody,
    MessageDraft,
    MessageEdit,
    OccurrenceEdit,
    PreferencesEdit,
    RotationDraft,
    RotationEdit,
    RotationPreview,
    RotationSwap,
    SendNowBody,
    TestSendBody,
)
from composer.names import draft_ids, named
from composer.occurrence import edit_occurrence
from composer.openapi import Route
from composer.pausing import pause_message, resume_message
from composer.preferences import get_preferences, list_categories, put_preferences
from composer.preview import DEFAULT_COUNT, MAX_COUNT, CountQuery, preview_message
from composer.retry import retry_message
from composer.rotation_preview import preview_rotation
from composer.rotations import ROTATION_RECORDS, create_rotation, edit_rotation, swap_members
from composer.send_now import send_now
from composer.skip_next import skip_next
from composer.teams_conversations import list_teams_conversations
from composer.test_send import send_test
from composer.validation import Problems, whole_number
from composer.versions import IF_MATCH, if_match_from
from core.documents.responses import ResponseField
from core.errors import Conflict, MethodNotAllowed, NotFound
from core.http import json_object, parse_body
from core.runtime import Runtime, runtime_for
from core.settings import Settings
from core.store import is_document_id

Answer = tuple[Any, int]
Handler = Callable[..., Answer]
# Each retry follows a concurrent create with the same Idempotency-Key.
_CREATE_TRIES = 3


# --- handlers -----------------------------------------------------------------------------


def _post_message(request: flask.Request, rt: Runtime) -> Answer:
    return _create(request, rt, "POST /messages", MessageDraft, create_message, MESSAGE_RECORDS.get)


def _get_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return MESSAGE_RECORDS.get(rt, ident), 200


def _put_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return _edit(request, rt, ident, MessageEdit, edit_message)


def _delete_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return cancel_message(rt, ident, if_match_from(request.headers)), 200


def _pause_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return pause_message(rt, ident, if_match_from(request.headers)), 200


def _resume_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return resume_message(rt, ident, if_match_from(request.headers)), 200


def _send_now(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    body = parse_body(request, SendNowBody, optional=True)
    return send_now(rt, ident, body.occurrence_at), 200


def _skip_next(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return skip_next(rt, ident, if_match_from(request.headers)), 200


def _retry_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return retry_message(rt, ident), 200


def _test_message(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    body = parse_body(request, TestSendBody, optional=False)
    return send_test(rt, ident, body.user), 200


def _edit_occurrence(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    body = json_object(request)
    key = idempotency.key_from(request.headers)
    edit = parse_body(request, OccurrenceEdit, optional=False)
    return edit_occurrence(rt, ident, edit, body, key), 201


def _list_messages(request: flask.Request, rt: Runtime) -> Answer:
    problems = Problems()
    statuses = listing.statuses_from(request.args.get("status"), problems)
    to = listing.Recipient(
        listing.check_listing_channel(request.args.get("channel"), problems),
        listing.check_listing_user(request.args.get("user"), problems),
        listing.check_listing_teams(request.args.get("teams_conversation"), problems),
        listing.check_listing_creator(request.args.get("created_by"), problems),
    )
    page = listing.page_from(request.args, problems)
    problems.raise_if_any()
    return listing.list_messages(rt, statuses, to, page), 200


def _list_deliveries(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    page = _page_from(request)
    return listing.list_deliveries(rt, ident, page), 200


def _list_responses(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return _responses(request, rt, ResponseField.MESSAGE_ID, ident)


def _list_rotation_responses(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return _responses(request, rt, ResponseField.ROTATION_ID, ident)


def _preview(request: flask.Request, rt: Runtime) -> Answer:
    count = _count_from(request)
    draft = parse_body(request, MessageDraft, optional=False)
    return named(rt.db, "MessagePreview", preview_message(rt, draft, count), draft_ids(draft)), 200


def _post_rotation(request: flask.Request, rt: Runtime) -> Answer:
    return _create(
        request, rt, "POST /rotations", RotationDraft, create_rotation, ROTATION_RECORDS.get
    )


def _get_rotation(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return ROTATION_RECORDS.get(rt, ident), 200


def _put_rotation(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return _edit(request, rt, ident, RotationEdit, edit_rotation)


def _swap_rotation(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return _edit(request, rt, ident, RotationSwap, swap_members)


def _list_rotations(request: flask.Request, rt: Runtime) -> Answer:
    page = _page_from(request)
    return listing.list_rotations(rt, page), 200


def _list_rotation_days(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    page = _page_from(request)
    return listing.list_rotation_days(rt, ident, page), 200


def _agenda(request: flask.Request, rt: Runtime) -> Answer:
    return agenda.agenda(rt, agenda.window_from(request.args, rt.clock.now())), 200


def _openapi(request: flask.Request, rt: Runtime) -> Answer:
    return openapi.document(ROUTES), 200


def _preview_rotation(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    count = _count_from(request)
    parse_body(request, RotationPreview, optional=True)
    return preview_rotation(rt, ident, count), 200


def _list_categories(request: flask.Request, rt: Runtime) -> Answer:
    return list_categories(rt.db), 200


def _list_teams_conversations(request: flask.Request, rt: Runtime) -> Answer:
    return list_teams_conversations(rt.db), 200


def _get_preferences(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    return get_preferences(rt.db, ident), 200


def _put_preferences(request: flask.Request, rt: Runtime, ident: str) -> Answer:
    edit = parse_body(request, PreferencesEdit, optional=False)
    return put_preferences(rt.db, ident, edit), 200


def _post_event(request: flask.Request, rt: Runtime) -> Answer:
    return post_event(rt, parse_body(request, EventBody, optional=False))


def _directory_channels(request: flask.Request, rt: Runtime) -> Answer:
    return directory.channels(rt, directory.listing_from(request.args)), 200


def _directory_users(request: flask.Request, rt: Runtime) -> Answer:
    return directory.users(rt, directory.listing_from(request.args)), 200


def _me(request: flask.Request, rt: Runtime) -> Answer:
    return directory.me(rt, flask.g.get("principal")), 200


# --- the table ----------------------------------------------------------------------------

_CHANGE = (400, 404, 409, 412)


def _creates(
    path: str, handler: Handler, summary: str, answer: type[BaseModel], body: type[BaseModel]
) -> Route:
    """A create: 201 with the new record; a retry with the same `Idempotency-Key` answers
    the first one's record (400: a bad body or key; 409: a concurrent first use of it)."""
    return Route(
        "POST",
        path,
        handler,
        summary,
        answer,
        201,
        body=body,
        headers=(IDEMPOTENCY_KEY,),
        errors=(400, 409),
    )


def _changes(
    method: str,
    path: str,
    handler: Handler,
    summary: str,
    answer: type[BaseModel],
    body: type[BaseModel] | None = None,
) -> Route:
    """A change to a stored record, decided on a fresh read, under `If-Match` when given:
    400, 404, 409 (claimed, or not allowed in its status) and 412 (changed since)."""
    return Route(
        method, path, handler, summary, answer, body=body, headers=(IF_MATCH,), errors=_CHANGE
    )


def _reads(path: str, handler: Handler, summary: str, answer: type[BaseModel]) -> Route:
    """A read of one stored record: 404 without it."""
    return Route("GET", path, handler, summary, answer, errors=(404,))


def _pages_of(path: str, handler: Handler, summary: str, answer: type[BaseModel]) -> Route:
    """Pages of what one stored record has (its deliveries, its answers): 404 without it."""
    return Route("GET", path, handler, summary, answer, query=PageQuery, errors=(404,))


ROUTES: tuple[Route, ...] = (
    _creates("/messages", _post_message, "Schedule a message", Message, MessageDraft),
    Route(
        "GET",
        "/messages",
        _list_messages,
        "List messages by next run",
        MessagePage,
        query=MessageQuery,
    ),
    _reads("/messages/{id}", _get_message, "Read a message", Message),
    _changes(
        "PUT", "/messages/{id}", _put_message, "Edit a message in place", Message, MessageEdit
    ),
    _changes("DELETE", "/messages/{id}", _delete_message, "Cancel a message", Message),
    _pages_of(
        "/messages/{id}/deliveries", _list_deliveries, "A message's delivery history", DeliveryPage
    ),
    _pages_of(
        "/messages/{id}/responses",
        _list_responses,
        "The answers to a message's buttons",
        ButtonResponsePage,
    ),
    _changes("POST", "/messages/{id}/pause", _pause_message, "Pause a message", Message),
    _changes("POST", "/messages/{id}/resume", _resume_message, "Resume a paused message", Message),
    Route(
        "POST",
        "/messages/{id}/send-now",
        _send_now,
        "Send the next occurrence now, once",
        SendNowReceipt,
        body=SendNowBody,
        body_required=False,
        errors=(400, 404, 409),
    ),
    _changes(
        "POST", "/messages/{id}/skip-next", _skip_next, "Leave out the next occurrence", Message
    ),
    Route(
        "POST",
        "/messages/{id}/retry",
        _retry_message,
        "Send a failed message's occurrence once more",
        Message,
        errors=(404, 409),
    ),
    Route(
        "POST",
        "/messages/{id}/test",
        _test_message,
        "Send the message to a person as a test",
        TestSent,
        body=TestSendBody,
        errors=(400, 404, 409, 502, 503),
    ),
    Route(
        "POST",
        "/messages/{id}/occurrence",
        _edit_occurrence,
        "Edit only one occurrence of a series",
        OccurrenceSplit,
        201,
        body=OccurrenceEdit,
        headers=(IDEMPOTENCY_KEY,),
        errors=(400, 404, 409),
    ),
    Route(
        "POST",
        "/preview",
        _preview,
        "Preview a draft message",
        MessagePreview,
        body=MessageDraft,
        query=CountQuery,
        errors=(400,),
    ),
    _creates("/rotations", _post_rotation, "Create a rotation", Rotation, RotationDraft),
    Route(
        "GET",
        "/rotations",
        _list_rotations,
        "List rotations by next run",
        RotationPage,
        query=PageQuery,
    ),
    _reads("/rotations/{id}", _get_rotation, "Read a rotation", Rotation),
    _changes("PUT", "/rotations/{id}", _put_rotation, "Edit a rotation", Rotation, RotationEdit),
    _changes(
        "POST",
        "/rotations/{id}/swap",
        _swap_rotation,
        "Swap two members' places in the order",
        Rotation,
        RotationSwap,
    ),
    Route(
        "POST",
        "/rotations/{id}/preview",
        _preview_rotation,
        "Preview a rotation's turns",
        RotationTurns,
        body=RotationPreview,
        body_required=False,
        query=CountQuery,
        errors=(400, 404),
    ),
    _pages_of(
        "/rotations/{id}/deliveries",
        _list_rotation_days,
        "A rotation's days: posted, skipped and why",
        RotationDayPage,
    ),
    _pages_of(
        "/rotations/{id}/responses",
        _list_rotation_responses,
        "The answers to a rotation's buttons",
        ButtonResponsePage,
    ),
    Route(
        "GET",
        "/agenda",
        _agenda,
        "What is due when: messages and rotation turns in a range",
        AgendaPage,
        query=agenda.AgendaQuery,
    ),
    Route("GET", "/categories", _list_categories, "List message categories", CategoryList),
    _reads("/preferences/{id}", _get_preferences, "A person's preferences", Preferences),
    Route(
        "PUT",
        "/preferences/{id}",
        _put_preferences,
        "Replace a person's opt-outs",
        Preferences,
        body=PreferencesEdit,
        errors=(400, 404),
    ),
    Route(
        "POST",
        "/events",
        _post_event,
        "Notify once per event",
        EventReceipt,
        201,
        body=EventBody,
        also=(200,),
        errors=(400, 503),
    ),
    Route(
        "GET",
        "/teams/conversations",
        _list_teams_conversations,
        "List the Microsoft Teams conversations the bot is installed in",
        TeamsConversationList,
    ),
    Route(
        "GET",
        "/directory/channels",
        _directory_channels,
        "Channels by name, for pickers",
        ChannelList,
        query=directory.DirectoryQuery,
    ),
    Route(
        "GET",
        "/directory/users",
        _directory_users,
        "People by name, for pickers",
        UserList,
        query=directory.DirectoryQuery,
    ),
    Route("GET", "/me", _me, "The signed-in person and their Slack account", Me),
    Route("GET", "/openapi.json", _openapi, "This document", OpenApiDocument),
)


def handle_api(request: flask.Request, settings: Settings) -> Answer:
    return dispatch(request, runtime_for(settings))


def dispatch(request: flask.Request, rt: Runtime) -> Answer:
    path = request.path.rstrip("/") or "/"
    allowed = []
    for route in ROUTES:
        groups = route.match(path)
        if groups is None:
            continue
        if route.method != request.method:
            allowed.append(route.method)
            continue
        _allow_query(request, route)
        ident = groups.get("ident")
        if ident is not None and not is_document_id(ident):
            # Never a stored document, so never found.
            raise NotFound(f"no record with id {ident!r}")
        body, status = route.handler(request, rt, **groups)
        return named(rt.db, route.answer.__name__, body), status
    if allowed:
        raise MethodNotAllowed(f"{path} takes {', '.join(allowed)}, not {request.method}", allowed)
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


def _edit(
    request: flask.Request,
    rt: Runtime,
    ident: str,
    model: type[BaseModel],
    edit: Callable[..., dict[str, Any]],
) -> Answer:
    """An edit in place of the record `ident`: the body as `model`, under `If-Match`."""
    if_match = if_match_from(request.headers)
    return edit(rt, ident, parse_body(request, model, optional=False), if_match), 200


def _page_from(request: flask.Request) -> listing.Page:
    """The page a listing with no other query parameters asks for (422 naming each bad one)."""
    problems = Problems()
    page = listing.page_from(request.args, problems)
    problems.raise_if_any()
    return page


def _responses(request: flask.Request, rt: Runtime, subject: ResponseField, ident: str) -> Answer:
    """`GET /messages/{id}/responses` and `GET /rotations/{id}/responses`: a page of answers."""
    page = _page_from(request)
    return listing.list_responses(rt, subject, ident, page), 200


def _allow_query(request: flask.Request, route: Route) -> None:
    """422 naming each query parameter the route does not declare."""
    names = [field.alias or name for name, field in route.query.model_fields.items()]
    takes = f"this route takes {', '.join(names)}" if names else "this route takes none"
    problems = Problems()
    for name in request.args:
        if name not in names:
            problems.add(name, f"unknown query parameter; {takes}")
    problems.raise_if_any()


def _count_from(request: flask.Request) -> int:
    """The previews' `count` query parameter (the only one they take)."""
    problems = Problems()
    count = whole_number(problems, "count", request.args.get("count"), MAX_COUNT, DEFAULT_COUNT)
    problems.raise_if_any()
    return count
