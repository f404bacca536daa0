"""The `api` target serves the composer page at `/` and its files at `/static/<file>`, without
credentials (a browser navigation cannot send any) and under a strict Content-Security-Policy,
while every JSON route still needs a token and no path reaches outside web/."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.api import call
from tests.fixtures.runtime import ROOT


def directives(response: Any) -> dict[str, str]:
    policy = response.headers["Content-Security-Policy"]
    pairs = (part.strip().split(" ", 1) for part in policy.split(";"))
    return {pair[0]: pair[1] if len(pair) > 1 else "" for pair in pairs}


def assert_strict(response: Any) -> None:
    csp = directives(response)
    assert csp["default-src"] == "'none'"
    assert csp["script-src"] == "'self'"
    assert csp["style-src"] == "'self'"
    assert csp["connect-src"] == "'self'"
    assert csp["frame-ancestors"] == "'none'"
    assert csp["base-uri"] == "'none'"
    assert "unsafe" not in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"


def test_the_page_is_served_without_credentials_under_a_strict_csp(api: Any) -> None:
    response = api.get("/")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    assert '<script type="module" src="static/app.js"></script>' in html
    assert "google-client-id" not in html
    assert_strict(response)


@pytest.mark.parametrize(
    ("name", "kind"),
    [("app.js", "text/javascript"), ("app.css", "text/css"), ("icon.svg", "image/svg+xml")],
)
def test_static_files_are_served_without_credentials(api: Any, name: str, kind: str) -> None:
    response = api.get(f"/static/{name}")
    assert response.status_code == 200
    assert response.mimetype == kind
    assert response.get_data() == (ROOT / "web" / name).read_bytes()
    assert_strict(response)


def test_json_routes_still_need_a_token(api: Any) -> None:
    status, body = call(api, "GET", "/messages", auth=False)
    assert (status, body["error"]) == (401, "unauthorized")
    status, _ = call(api, "GET", "/messages")
    assert status == 200


@pytest.mark.parametrize(
    "path",
    [
        "/static/../main.py",
        "/static/..%2fmain.py",
        "/static/%2e%2e/main.py",
        "/static/%2e%2e%2fcore%2fsettings.py",
        "/static//etc/passwd",
        "/static/index.html",  # the template is served rendered at / only
        "/static/.gitignore",
        "/static/",
        "/static/APP.JS",
    ],
)
def test_no_static_path_reaches_outside_web(api: Any, path: str) -> None:
    response = api.get(path)
    assert response.status_code in (401, 404)
    text = response.get_data(as_text=True)
    assert "import" not in text and "root:" not in text and "{{" not in text


def test_other_methods_on_the_page_paths_are_the_apis_to_answer(api: Any) -> None:
    for path in ("/", "/static/app.js"):
        status, body = call(api, "POST", path, {}, auth=False)
        assert (status, body["error"]) == (401, "unauthorized")
        status, body = call(api, "POST", path, {})
        assert (status, body["error"]) == (404, "not_found")


def test_a_client_id_adds_its_meta_escaped_and_only_google_identity_origins(
    api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPOSER_CLIENT_ID", 'abc.apps.googleusercontent.com"><script>x')
    response = api.get("/")
    html = response.get_data(as_text=True)
    assert (
        '<meta name="google-client-id" '
        'content="abc.apps.googleusercontent.com&#34;&gt;&lt;script&gt;x">' in html
    )
    csp = directives(response)
    google = "https://accounts.google.com/gsi/"
    assert csp["script-src"] == f"'self' {google}"
    assert csp["frame-src"] == google
    assert csp["default-src"] == "'none'" and csp["frame-ancestors"] == "'none'"


@pytest.mark.usefixtures("env")
def test_the_tick_target_serves_no_page(tick_app: Any) -> None:
    client = tick_app.test_client()
    for path in ("/", "/static/app.js"):
        response = client.get(path)
        assert response.status_code == 401, path
        assert response.mimetype == "application/json"
