"""HTTP plumbing every target shares: authentication first, JSON in and out, and the
contract's error body. Handlers raise `HttpError`s; nothing else leaks to the caller."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, TypeVar

import flask
from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, ValidationError
from werkzeug.exceptions import HTTPException

from core import logs
from core.auth import AuthConfig, People, Principal, authenticate
from core.errors import BadRequest, HttpError, NotFound, SettingsError, ValidationFailed
from core.models import instant_problem
from core.settings import Settings

Handler = Callable[[flask.Request, Settings], tuple[Any, int]]


class ProblemDetail(BaseModel):
    """One entry of an error's `details`: the body field (dotted when nested), query
    parameter or header at fault, and what is wrong with it."""

    model_config = ConfigDict(extra="forbid")

    field: str
    message: str
    code: str | None = None  # the processor's code, when a stored document is refused


class ErrorBody(BaseModel):
    """The contract's error body, on every 4xx and 5xx answer."""

    model_config = ConfigDict(extra="forbid")

    error: str
    message: str
    details: list[ProblemDetail]


def auth_config(settings: Settings, *, people: bool = False) -> AuthConfig:
    """Who may call a target. `people` (the `api` target's, and only its) also admits the
    composer page's signed-in people, when COMPOSER_CLIENT_ID is set."""
    client_id = settings.composer_client_id
    return AuthConfig(
        admin_token=settings.admin_token,
        audience=settings.tick_audience,
        allowed_emails=settings.trigger_service_accounts,
        certs_url=settings.oidc_certs_url,
        people=People(client_id, settings.composer_users) if people and client_id else None,
    )


def respond(request: flask.Request, handler: Handler, *, people: bool = False) -> flask.Response:
    """Load settings, authenticate (people too when `people`: see auth_config), run the
    handler, and shape every answer as JSON."""
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        logs.error("settings are invalid", error_code="settings", error_message=str(exc))
        return _error(
            ErrorBody(error="misconfigured", message="server settings are invalid", details=[]), 500
        )
    try:
        principal = authenticate(
            request.headers.get("Authorization"), auth_config(settings, people=people)
        )
        flask.g.principal = principal  # who is asking, for answers about them (GET /me)
        body, status = handler(request, settings)
    except HttpError as exc:
        answer = _error(ErrorBody.model_validate(exc.body()), exc.status)
        answer.headers.update(exc.headers)
        return answer
    except HTTPException as exc:
        return framework_answer(exc)
    except Exception as exc:
        return internal_error(exc)
    _log_person(request, principal, status)
    return _json(body, status)


def _log_person(request: flask.Request, principal: Principal, status: int) -> None:
    """Who changed what: one line per successful POST, PUT or DELETE by a signed-in person (the
    methods that can change something; the admin token and triggers have no name to give,
    and reads would only be noise). The email only: never the token."""
    if principal.kind == "person" and request.method not in ("GET", "HEAD", "OPTIONS"):
        logs.info(
            "request by a signed-in person",
            email=principal.email,
            method=request.method,
            path=request.path,
            status=status,
        )


def unrouted(request: flask.Request, _: Settings) -> tuple[Any, int]:
    """The handler of a request the framework could not route to a target."""
    raise NotFound(f"no route {request.method} {request.path!r}")


def refused_by_framework(exc: HTTPException) -> Handler:
    """The handler of a request the framework (flask, werkzeug, functions-framework) refused
    with `exc`: once authenticated, the caller gets that status as the contract's JSON."""

    def handler(request: flask.Request, settings: Settings) -> tuple[Any, int]:
        if exc.code == 404:
            return unrouted(request, settings)
        raise exc

    return handler


def framework_answer(exc: HTTPException) -> flask.Response:
    """`exc`'s status as the contract's JSON error, named from its standard phrase. Never its
    description: the framework's may quote the request, its headers and credentials."""
    status = exc.code or 500
    code = re.sub(r"[^a-z0-9]+", "_", exc.name.lower()).strip("_")
    answer = _error(ErrorBody(error=code, message=f"{status} {exc.name}", details=[]), status)
    allowed = getattr(exc, "valid_methods", None)
    if allowed:
        answer.headers["Allow"] = ", ".join(allowed)
    return answer


def internal_error(exc: BaseException) -> flask.Response:
    """The JSON 500 for an exception nothing else handled, logged by its type only."""
    logs.error(
        "request failed",
        error_code=type(exc).__name__,
        error_message=str(exc),
        path=flask.request.path,
    )
    return _error(ErrorBody(error="internal", message="internal error", details=[]), 500)


def _error(body: ErrorBody, status: int) -> flask.Response:
    return _json(body.model_dump(mode="json", exclude_none=True), status)


def _json(body: Any, status: int) -> flask.Response:
    return flask.Response(json.dumps(body, default=str), status=status, mimetype="application/json")


def _supported(value: datetime) -> datetime:
    problem = instant_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


# An instant in a request body: ISO-8601 with an offset, within the supported range
# (core.models.EARLIEST_INSTANT..LATEST_INSTANT), so no later arithmetic overflows.
Instant = Annotated[AwareDatetime, AfterValidator(_supported)]

M = TypeVar("M", bound=BaseModel)
# No body this API takes nests deeper than a few levels; deeper ones are refused before any
# code walks them (json itself gives up near 1,000 levels with a RecursionError).
MAX_JSON_DEPTH = 32


def json_object(request: flask.Request) -> dict[str, Any]:
    """The request's body as a JSON object; 400 when it is missing or anything else."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        raise BadRequest("a JSON body is required")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"the body is not valid JSON: {exc}") from None
    except RecursionError:
        raise BadRequest(f"the body nests deeper than {MAX_JSON_DEPTH} levels") from None
    if _depth(data) > MAX_JSON_DEPTH:
        raise BadRequest(f"the body nests deeper than {MAX_JSON_DEPTH} levels")
    if not isinstance(data, dict):
        raise BadRequest(f"the body must be a JSON object, got {type(data).__name__}")
    return data


def _depth(value: Any) -> int:
    """How many objects and arrays nest in `value` (a scalar: 0), walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def parse_body(request: flask.Request, model: type[M], *, optional: bool) -> M:
    """The request's JSON body as `model`: 400 when it is not a JSON object, 422 naming each
    bad field when it does not fit."""
    raw = request.get_data(cache=True)
    if optional and not raw.strip():
        return model()
    json_object(request)
    return parse_json(raw, model)


def parse_json(raw: bytes | str, model: type[M]) -> M:
    """JSON text as `model`, or a 422 naming each bad field (a request body's, or a body
    built from a Slack modal's values)."""
    try:
        # From the JSON text, so strict models take ISO-8601 strings for datetimes while
        # still refusing "yes" for a bool or a bare number for an instant.
        return model.model_validate_json(raw)
    except ValidationError as exc:
        details = [
            {"field": ".".join(str(p) for p in err["loc"]) or "body", "message": err["msg"]}
            for err in exc.errors()
        ]
        fields = ", ".join(d["field"] for d in details)
        raise ValidationFailed(f"invalid fields: {fields}", details) from None
