"""The composer page: `GET /` (web/index.html) and `GET /static/<file>` (the rest of web/).

These paths are static: they carry no data, so they need no Authorization header (a browser
navigation cannot send one) and are answered before the `api` target authenticates. Every
answer carries a strict Content-Security-Policy: scripts, styles and fetches from this origin
only (plus Google Identity Services when COMPOSER_CLIENT_ID is set), no inline code, never
framed. Only the files directly in web/ with a plain name are served, so no path reaches
outside; any other path under `/static/` is left to the API, whose answer is its JSON error.
"""

from __future__ import annotations

import re
from pathlib import Path

import flask
import jinja2

from core.errors import SettingsError
from core.settings import Settings

WEB = Path(__file__).resolve().parent.parent / "web"
_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
}
_PLAIN_NAME = re.compile(r"[a-z][a-z0-9_-]*\.[a-z]+")
# What `/static/<name>` serves, listed once: a requested name is only ever looked up here,
# never handed to the file system (a 10,000-character one would fail there).
_FILES = frozenset(
    file.name
    for file in WEB.iterdir()
    if file.is_file() and _PLAIN_NAME.fullmatch(file.name) and file.suffix in _TYPES
)
# The origins Google Identity Services loads from (its script, its button's frame and style).
_GOOGLE = "https://accounts.google.com/gsi/"

_templates = jinja2.Environment(
    loader=jinja2.FileSystemLoader(WEB), autoescape=True, undefined=jinja2.StrictUndefined
)


def content_security_policy(client_id: str | None) -> str:
    google = f" {_GOOGLE}" if client_id else ""
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src 'self'{google}",
            f"style-src 'self'{google}",
            f"connect-src 'self'{google}",
            f"frame-src {_GOOGLE}" if client_id else "frame-src 'none'",
            "img-src 'self'",
            "form-action 'self'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
        ]
    )


def serve_page(request: flask.Request) -> flask.Response | None:
    """The page's answer to `request`, or None when it is not a read of one of the page's
    paths."""
    path = request.path
    if request.method not in ("GET", "HEAD"):
        return None  # the API's (authenticated, JSON) 404 or 405
    if path != "/" and not path.startswith("/static/"):
        return None
    name = path.removeprefix("/static/")
    if path != "/" and name not in _FILES:
        return None
    client_id = _client_id()
    if path == "/":
        html = _templates.get_template("index.html").render(client_id=client_id)
        return _secured(flask.Response(html, 200, mimetype="text/html"), client_id)
    return _secured(_static(name), client_id)


def _client_id() -> str | None:
    try:
        return Settings.from_env().composer_client_id
    except SettingsError:
        return None  # the page still loads; its API calls answer the settings error


def _static(name: str) -> flask.Response:
    file = WEB / name
    response = flask.Response(file.read_bytes(), 200, content_type=_TYPES[file.suffix])
    response.headers["Cache-Control"] = "no-cache"
    return response


def _secured(response: flask.Response, client_id: str | None) -> flask.Response:
    response.headers["Content-Security-Policy"] = content_security_policy(client_id)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Frame-Options"] = "DENY"
    return response
