"""Cloud Functions entry points. Wiring only: each target hands the request to its domain
through the shared authenticate-and-respond plumbing."""

from __future__ import annotations

import flask
import functions_framework
from cloudevents.http import CloudEvent
from werkzeug.exceptions import NotFound as NoRoute

from composer.page import serve_page
from composer.routes import handle_api
from core.http import respond, unrouted
from interactions.target import handle_interactions
from targets.deliver import handle_deliver
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


@functions_framework.cloud_event
def deliver(event: CloudEvent) -> None:
    handle_deliver(flask.request, event)


def not_routed(_: NoRoute) -> flask.Response:
    # Flask's own `/static/<filename>` rule (no static folder: always 404) catches the page's
    # files before the `api` target sees them; the app is named after its target.
    on_api = flask.current_app.name == "api"
    page = serve_page(flask.request) if on_api else None
    return page if page is not None else respond(flask.request, unrouted, people=on_api)


# A path the framework's own router cannot match (`/messages/a%0Ab`: its `<path:path>` takes
# no newline) gets the contract's JSON error too, after authentication, not an HTML page.
functions_framework.errorhandler(NoRoute)(not_routed)
