"""Teams' outcome table, row by row: what each connector answer (and each way a call fails
before one) means for an occurrence. Pure: the same answers through the real SDK and the
stand-in are in test_transport.py."""

from __future__ import annotations

import httpx
import pytest

from core.platform import DEFAULT_RETRY_AFTER, Outcome
from core.teams_outcomes import ROWS, classify_exception, classify_response
from core.teams_token import _refused

REQUEST = httpx.Request("POST", "https://smba.example/v3/conversations/c/activities")


def body(code: str) -> dict[str, object]:
    return {"error": {"code": code, "message": "scenario specific"}}


@pytest.mark.parametrize(
    ("status", "code", "outcome", "ours"),
    [
        (400, "BadArgument", Outcome.FAILED, "BadArgument"),
        (401, "BotNotRegistered", Outcome.FAILED, "BotNotRegistered"),
        (403, "BotNotInConversationRoster", Outcome.FAILED, "BotNotInConversationRoster"),
        (403, "ConversationBlockedByUser", Outcome.FAILED, "ConversationBlockedByUser"),
        (403, "BotDisabledByAdmin", Outcome.FAILED, "BotDisabledByAdmin"),
        (403, "ForbiddenOperationException", Outcome.FAILED, "ForbiddenOperationException"),
        (403, "InvalidBotApiHost", Outcome.FAILED, "InvalidBotApiHost"),
        (403, "NotEnoughPermissions", Outcome.FAILED, "NotEnoughPermissions"),
        (404, "ConversationNotFound", Outcome.FAILED, "ConversationNotFound"),
        (404, "ActivityNotFoundInConversation", Outcome.FAILED, "ActivityNotFoundInConversation"),
        (412, "PreconditionFailed", Outcome.RETRY_LATER, "PreconditionFailed"),
        (413, "MessageSizeTooBig", Outcome.FAILED, "MessageSizeTooBig"),
        (429, "Throttled", Outcome.RETRY_LATER, "ratelimited"),
        (500, "ServiceError", Outcome.AMBIGUOUS, "ServiceError"),
        (502, "ServiceError", Outcome.AMBIGUOUS, "ServiceError"),
        (503, None, Outcome.AMBIGUOUS, "http_503"),
        (504, None, Outcome.AMBIGUOUS, "http_504"),
    ],
)
def test_each_documented_answer_is_classified(status, code, outcome, ours):
    result = classify_response(status, body(code) if code else {}, {})
    assert (result.outcome, result.code) == (outcome, ours)


def test_every_row_names_its_source():
    assert all(row.source.startswith("https://learn.microsoft.com/") for row in ROWS)


def test_429_carries_teams_retry_after():
    result = classify_response(429, body("Throttled"), {"Retry-After": "7"})
    assert (result.outcome, result.retry_after) == (Outcome.RETRY_LATER, 7)


def test_429_without_a_retry_after_waits_the_default():
    assert classify_response(429, {}, {}).retry_after == DEFAULT_RETRY_AFTER


def test_a_fractional_retry_after_is_rounded_up():
    assert classify_response(429, {}, {"retry-after": "1.2"}).retry_after == 2


def test_412_is_released_not_held():
    result = classify_response(412, body("PreconditionFailed"), {"Retry-After": "3"})
    assert (result.outcome, result.retry_after) == (Outcome.RETRY_LATER, 3)


def test_an_unlisted_4xx_is_a_refusal_and_an_unlisted_status_may_have_posted():
    assert classify_response(409, body("Conflict"), {}).outcome is Outcome.FAILED
    assert classify_response(507, {}, {}).outcome is Outcome.AMBIGUOUS
    assert classify_response(302, {}, {}).outcome is Outcome.AMBIGUOUS


def test_a_body_that_is_not_teams_json_keeps_the_status_row():
    result = classify_response(403, "<html>Forbidden</html>", {})
    assert (result.outcome, result.code) == (Outcome.FAILED, "http_403")


@pytest.mark.parametrize(
    ("exc", "outcome", "code"),
    [
        (httpx.ConnectError("refused", request=REQUEST), Outcome.RETRY_LATER, "connection_refused"),
        (httpx.ConnectTimeout("slow", request=REQUEST), Outcome.RETRY_LATER, "connection_refused"),
        (httpx.PoolTimeout("pool", request=REQUEST), Outcome.RETRY_LATER, "connection_refused"),
        (httpx.ReadTimeout("read", request=REQUEST), Outcome.AMBIGUOUS, "timeout"),
        (httpx.WriteTimeout("write", request=REQUEST), Outcome.AMBIGUOUS, "timeout"),
        (
            httpx.RemoteProtocolError("Server disconnected", request=REQUEST),
            Outcome.AMBIGUOUS,
            "connection_error",
        ),
        (httpx.ReadError("reset", request=REQUEST), Outcome.AMBIGUOUS, "connection_error"),
    ],
)
def test_a_call_that_raised_is_classified_by_whether_it_was_sent(exc, outcome, code):
    result = classify_exception(exc)
    assert (result.outcome, result.code) == (outcome, code)


def test_a_refused_connection_is_retried_after_the_default_wait():
    result = classify_exception(httpx.ConnectError("refused", request=REQUEST))
    assert result.retry_after == DEFAULT_RETRY_AFTER


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        ("invalid_client", Outcome.FAILED),  # a wrong secret: every send would be refused
        ("unauthorized_client", Outcome.FAILED),  # the app is not in the tenant
        ("temporarily_unavailable", Outcome.RETRY_LATER),
        (None, Outcome.RETRY_LATER),
    ],
)
def test_a_token_the_endpoint_refuses_is_classified_before_any_post(error, outcome):
    result = _refused({"error": error} if error else {})
    assert result.outcome is outcome
