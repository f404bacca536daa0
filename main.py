"""Cloud Functions entry points. Wiring only: each target hands the request to its domain
through the shared authenticate-and-respond plumbing."""

from __future__ import annotations

import flask
import functions_framework
from werkzeug.exceptions import HTTPException, InternalServerError
from werkzeug.exceptions import NotFound as NoRoute

from composer.page import serve_page
from composer.routes import handle_api
from core.http import internal_error, refused_by_framework, respond
from interactions.target import handle_interactions
from targets.deliver import handle_deliver
from targets.teams import handle_teams
from targets.tick import handle_tick


@functions_framework.http
def tick(request: flask.Request) -> flask.Response:
    return respond(request, handle_tick)


@functions_framework.http
def api(request: flask.Request) -> flask.Response:
    # The page's files first: they need no credentials (composer/page.py).
    page = serve_page(request)
    return page if page is not None else respond(request, handle_api, people=True)


@functions_framework.http
def interactions(request: flask.Request) -> flask.Response:
    # Slack's clicks: authenticated by Slack's signature, not by bearer tokens.
    return handle_interactions(request)


@functions_framework.http
def teams(request: flask.Request) -> flask.Response:
    # Microsoft Teams' activities: authenticated by Bot Framework's JWT, not bearer tokens.
    return handle_teams(request)


@functions_framework.http
def deliver(request: flask.Request) -> flask.Response:
    # Pub/Sub's pushes: an http target, so it authenticates before it parses the CloudEvent.
    return respond(request, handle_deliver)


def refused(exc: HTTPException) -> flask.Response:
    # Flask's own `/static/<filename>` rule (no static folder: always 404) catches the page's
    # files before the `api` target sees them; the app is named after its target.
    on_api = flask.current_app.name == "api"
    page = serve_page(flask.request) if on_api and isinstance(exc, NoRoute) else None
    if page is not None:
        return page
    return respond(flask.request, refused_by_framework(exc), people=on_api)


def crashed(exc: InternalServerError) -> flask.Response:
    return internal_error(exc.original_exception or exc)


# What the framework itself refuses (a path its router cannot match, `/messages/a%0Ab`: its
# `<path:path>` takes no newline; a method a rule does not take) gets the contract's JSON
# error, after authentication; what raises outside a target's handler, a JSON 500 in place
# of functions-framework's crash page (which quotes the exception).
functions_framework.errorhandler(HTTPException)(refused)
functions_framework.errorhandler(InternalServerError)(crashed)
