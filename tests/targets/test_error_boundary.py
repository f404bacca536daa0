"""Every target answers what the framework refuses with the contract's JSON error, after
authentication, and never quotes the request's headers or credentials: `deliver` reads its
CloudEvent only once the caller is authenticated, and the page's static paths never reach
the file system with a name that is not one of its files."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fixtures.runtime import ADMIN_TOKEN

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
DEEP = "[" * 100_000 + "]" * 100_000
# A structured-mode CloudEvent without its required `id`.
NO_ID = json.dumps({"specversion": "1.0", "type": "t", "source": "//s", "data": {}})


def error_of(response: Any, status: int) -> dict[str, Any]:
    """The JSON error body of `response`, which must have `status` and quote no credential."""
    text = response.get_data(as_text=True)
    assert (response.status_code, response.mimetype) == (status, "application/json"), text
    assert ADMIN_TOKEN not in text and "Bearer" not in text
    body: dict[str, Any] = json.loads(text)
    assert set(body) == {"error", "message", "details"}
    return body


def test_deliver_authenticates_before_it_parses_a_body(deliver: Any, slack: Any) -> None:
    """A 100,000-deep JSON body: 401 without credentials (it was a 500 and a traceback: the
    CloudEvent parser ran first), 400 with them; nothing posted either way."""
    refused = deliver.post("/", data=DEEP, content_type="application/json")
    assert error_of(refused, 401)["error"] == "unauthorized"
    unreadable = deliver.post("/", data=DEEP, content_type="application/json", headers=ADMIN)
    assert error_of(unreadable, 400)["error"] == "bad_request"
    assert slack.posts() == []


def test_deliver_never_echoes_the_headers_of_a_cloudevent_it_cannot_read(deliver: Any) -> None:
    """functions-framework's own 400 page quoted every request header, the token included,
    and answered it to callers without credentials too."""
    headers = ADMIN | {"X-Trace": "trace-value-42"}
    answer = deliver.post(
        "/", data=NO_ID, content_type="application/cloudevents+json", headers=headers
    )
    assert "trace-value-42" not in error_of(answer, 400)["message"]
    anonymous = deliver.post("/", data=NO_ID, content_type="application/cloudevents+json")
    assert error_of(anonymous, 401)["error"] == "unauthorized"


@pytest.mark.parametrize(
    ("method", "content_type", "status", "code"),
    [
        ("POST", "text/plain", 415, "unsupported_media_type"),
        ("GET", None, 405, "method_not_allowed"),
    ],
)
def test_deliver_refuses_in_json(
    deliver: Any, method: str, content_type: str | None, status: int, code: str
) -> None:
    answer = deliver.open("/", method=method, data="{}", content_type=content_type)
    assert error_of(answer, 401)["error"] == "unauthorized"
    answer = deliver.open("/", method=method, data="{}", content_type=content_type, headers=ADMIN)
    assert error_of(answer, status)["error"] == code


def test_a_long_static_path_is_the_apis_json_404(api: Any) -> None:
    """`GET /static/` and 10,000 characters was a 500: the name reached the file system."""
    path = "/static/" + "a" * 10_000 + ".js"
    assert error_of(api.get(path), 401)["error"] == "unauthorized"
    assert error_of(api.get(path, headers=ADMIN), 404)["error"] == "not_found"


@pytest.mark.usefixtures("env")
@pytest.mark.parametrize("path", ["/robots.txt", "/favicon.ico"])
def test_the_frameworks_own_routes_answer_json(tick_app: Any, path: str) -> None:
    client = tick_app.test_client()
    assert error_of(client.get(path), 401)["error"] == "unauthorized"
    assert error_of(client.get(path, headers=ADMIN), 404)["error"] == "not_found"


def test_a_crash_outside_a_handler_is_a_json_500_that_quotes_nothing(
    api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """functions-framework's crash handler answered the exception's text as the body."""

    def broken() -> None:
        raise RuntimeError("internal detail /srv/secret")

    monkeypatch.setattr("composer.page._client_id", broken)
    answer = error_of(api.get("/"), 500)
    assert answer == {"error": "internal", "message": "internal error", "details": []}
