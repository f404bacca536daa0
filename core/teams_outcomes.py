"""Teams' outcome table: what every answer of the Bot Connector (and every way a call can
fail before one) means for an occurrence, in the classes core.slack defines (`Outcome`):

- DELIVERED: Teams took the activity and answered its id.
- FAILED: Teams refused it and will refuse it again (400, 401, 403, 404, 413, any other 4xx:
  Microsoft tells bots not to retry these); never retried by itself.
- RETRY_LATER: provably not posted, worth another try later: 429 (with Teams' Retry-After),
  412 (Teams' own concurrency precondition: the activity was not created), a connection or
  token request that never carried the activity.
- AMBIGUOUS: Teams may have posted it (500, 502, 503, 504, a timeout, a dropped connection,
  an answer without an id). Microsoft tells bots to retry 502 and 504; for us a retry after
  an answer that may follow a post is a possible duplicate, so the occurrence is held for
  reconciliation (core.teams_graph reads the conversation), never resent blindly.

Each row names its source and the date it was read (docs/teams-limits.md quotes them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from core.platform import DEFAULT_RETRY_AFTER, Outcome, PostResult

READ_ON = "2026-12-03"
STATUS_CODES = (
    "https://learn.microsoft.com/en-us/microsoftteams/platform/bots/how-to/conversations/"
    "conversation-messages#status-codes-from-bot-conversational-apis"
)
RATE_LIMIT = "https://learn.microsoft.com/en-us/microsoftteams/platform/bots/how-to/rate-limit"
OURS = "ours: the request never carried the activity, or may have (no Microsoft page)"

# Our code for a 429: the same as Slack's, so pacing treats both platforms' limits alike.
RATELIMITED = "ratelimited"


@dataclass(frozen=True)
class Row:
    """One answer: its HTTP status and Teams' `error.code` (None: any code at that status)."""

    status: int
    code: str | None
    outcome: Outcome
    source: str


ROWS: tuple[Row, ...] = (
    Row(400, None, Outcome.FAILED, STATUS_CODES),  # "Bad Argument": invalid payload
    Row(401, None, Outcome.FAILED, STATUS_CODES),  # BotNotRegistered
    Row(403, None, Outcome.FAILED, STATUS_CODES),  # BotDisabledByAdmin, NotEnoughPermissions…
    Row(403, "BotNotInConversationRoster", Outcome.FAILED, STATUS_CODES),
    Row(403, "ConversationBlockedByUser", Outcome.FAILED, STATUS_CODES),
    # "Invalid bot api host" (a GCC tenant's conversation): the stored service_url is wrong,
    # the same call would be refused again.
    Row(403, "InvalidBotApiHost", Outcome.FAILED, STATUS_CODES),
    Row(404, None, Outcome.FAILED, STATUS_CODES),  # ConversationNotFound
    Row(404, "ActivityNotFoundInConversation", Outcome.FAILED, STATUS_CODES),
    Row(412, None, Outcome.RETRY_LATER, STATUS_CODES),  # PreconditionFailed: "Yes" retry
    Row(413, None, Outcome.FAILED, STATUS_CODES),  # MessageSizeTooBig
    Row(429, None, Outcome.RETRY_LATER, RATE_LIMIT),  # Throttled, with Retry-After
    Row(500, None, Outcome.AMBIGUOUS, STATUS_CODES),  # ServiceError
    Row(502, None, Outcome.AMBIGUOUS, STATUS_CODES),  # ServiceError: "Yes" retry
    Row(503, None, Outcome.AMBIGUOUS, STATUS_CODES),  # unavailable: "Yes" retry
    Row(504, None, Outcome.AMBIGUOUS, STATUS_CODES),  # Gateway Timeout: "Yes" retry
)

_BY_KEY: dict[tuple[int, str | None], Row] = {(r.status, r.code): r for r in ROWS}


def row_for(status: int, code: str | None) -> Row:
    """The table's row for an answer; an unlisted 4xx is a refusal (Microsoft: "bot must
    avoid retrying status codes that aren't specified"), anything else unlisted may have
    posted."""
    row = _BY_KEY.get((status, code)) or _BY_KEY.get((status, None))
    if row is not None:
        return row
    outcome = Outcome.FAILED if 400 <= status < 500 else Outcome.AMBIGUOUS
    return Row(status, None, outcome, OURS)


def classify_response(status: int, body: Any, headers: Mapping[str, str]) -> PostResult:
    """What an HTTP error answer of the connector means for delivery. Our code is Teams'
    `error.code` when it gave one (`http_<status>` otherwise); a 429 is `ratelimited`."""
    teams_code = error_code(body)
    row = row_for(status, teams_code)
    detail = f"Teams answered {status} {teams_code or ''}".rstrip()
    if status == 429:
        return PostResult(row.outcome, RATELIMITED, retry_after=retry_after(headers), detail=detail)
    code = teams_code or f"http_{status}"
    if row.outcome is Outcome.RETRY_LATER:
        return PostResult(row.outcome, code, retry_after=retry_after(headers), detail=detail)
    return PostResult(row.outcome, code, detail=detail)


def classify_exception(exc: BaseException) -> PostResult:
    """A call that raised before Teams answered. Only failures before the request was sent
    (no connection, no pooled connection, no token) are provably not posted."""
    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout | httpx.ConnectError):
        # The connection never opened (refused, no route, TLS refused): nothing was sent.
        return PostResult(
            Outcome.RETRY_LATER,
            "connection_refused",
            retry_after=DEFAULT_RETRY_AFTER,
            detail=repr(exc),
        )
    if isinstance(exc, httpx.TimeoutException):
        return PostResult(Outcome.AMBIGUOUS, "timeout", detail=repr(exc))
    return PostResult(Outcome.AMBIGUOUS, "connection_error", detail=repr(exc))


def error_code(body: Any) -> str | None:
    """Teams' `{"error": {"code": ...}}`, when the body holds one."""
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) and code else None


def retry_after(headers: Mapping[str, str]) -> int:
    """Teams' Retry-After in seconds (at least 1); DEFAULT_RETRY_AFTER without a usable one."""
    for key, value in headers.items():
        if key.lower() == "retry-after":
            try:
                return max(1, math.ceil(float(str(value).strip())))
            except ValueError:  # an HTTP date, or garbage: not worth parsing
                break
    return DEFAULT_RETRY_AFTER
