"""Cloud Functions entry points. Wiring only: each target hands the request to its domain
through the shared authenticate-and-respond plumbing."""

from __future__ import annotations

import flask
import functions_framework

from composer.routes import handle_api
from core.http import respond
from processor.tick_endpoint import handle_tick


@functions_framework.http
def tick(request: flask.Request) -> flask.Response:
    return respond(request, handle_tick)


@functions_framework.http
def api(request: flask.Request) -> flask.Response:
    return respond(request, handle_api)
