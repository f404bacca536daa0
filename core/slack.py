"""The Slack transport: one post, classified into what it means for delivery.

`OUTCOMES` is the one table that says what every Slack answer means for an occurrence:
- DELIVERED: Slack accepted it (we have its `ts`).
- FAILED: Slack refused it and will refuse it again; never retried by itself.
- RETRY_LATER: provably not delivered and worth another try later (429, or the connection
  never opened).
- AMBIGUOUS: Slack may or may not have posted it (timeout, dropped connection, 5xx,
  fatal_error): never resent blindly; the occurrence stays claimed under its lease until
  reconciliation settles it.

While the app is uninstalled from its workspace (processor.installation decides it once per
pass), the transport posts nothing: chat.postMessage, chat.update and conversations.open
answer FAILED `app_uninstalled` themselves (`hold`).

Slack's rate limits are per method (docs/slack-limits.md). A 429 from any method makes this
process wait out its `Retry-After` for that method (for chat.postMessage, whose limit Slack
states per channel, for that channel): until then the transport does not call it, and
answers RETRY_LATER (`ratelimited`) itself (`MethodWaits`, shared by every request and pass
of the process, on the injected clock).
"""

from __future__ import annotations

import copy
import enum
import math
import socket
import ssl
import threading
import urllib.error
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from core import logs
from core.clock import Clock, SystemClock
from core.platform import (
    DEFAULT_RETRY_AFTER,
    SLACK,
    HistoryPage,
    Lookup,
    Outcome,
    PostResult,
    Witness,
)

EVENT_TYPE = "scheduled_message"
# What a post answers while the app is uninstalled (SlackTransport.hold).
APP_UNINSTALLED = "app_uninstalled"


class Method(enum.StrEnum):
    """The Web API methods this service calls, each rate limited on its own."""

    AUTH_TEST = "auth.test"
    POST_MESSAGE = "chat.postMessage"
    UPDATE = "chat.update"
    HISTORY = "conversations.history"
    OPEN = "conversations.open"
    VIEWS_PUBLISH = "views.publish"


# ok:false codes. Slack does not post a message it answers ok:false for, so an unlisted
# code is a definitive failure; the listed AMBIGUOUS ones are Slack saying its own side
# broke mid-request, when the post may have gone through.
OUTCOMES: dict[str, Outcome] = {
    "channel_not_found": Outcome.FAILED,
    "not_in_channel": Outcome.FAILED,
    "is_archived": Outcome.FAILED,
    "msg_too_long": Outcome.FAILED,
    "no_text": Outcome.FAILED,
    "invalid_blocks": Outcome.FAILED,
    "invalid_metadata_format": Outcome.FAILED,
    "invalid_auth": Outcome.FAILED,
    "not_authed": Outcome.FAILED,
    "token_revoked": Outcome.FAILED,
    "token_expired": Outcome.FAILED,
    "account_inactive": Outcome.FAILED,
    "missing_scope": Outcome.FAILED,
    "restricted_action": Outcome.FAILED,
    "channel_is_archived": Outcome.FAILED,
    # conversations.open, opening a person's DM (Slack's reference for the method).
    "user_not_found": Outcome.FAILED,
    "user_disabled": Outcome.FAILED,
    "user_not_visible": Outcome.FAILED,
    "cannot_dm_bot": Outcome.FAILED,
    "ratelimited": Outcome.RETRY_LATER,
    "rate_limited": Outcome.RETRY_LATER,
    "fatal_error": Outcome.AMBIGUOUS,
    "internal_error": Outcome.AMBIGUOUS,
    "service_unavailable": Outcome.AMBIGUOUS,
    "request_timeout": Outcome.AMBIGUOUS,
}


def classify_api_error(status: int, data: Any, headers: dict[str, Any]) -> PostResult:
    """What an HTTP status and Slack body mean for delivery."""
    if status == 429:
        return PostResult(Outcome.RETRY_LATER, "ratelimited", retry_after=_retry_after(headers))
    if status >= 500:
        return PostResult(Outcome.AMBIGUOUS, f"http_{status}", detail=f"Slack answered {status}")
    code = data.get("error") if isinstance(data, dict) else None
    if not isinstance(code, str) or status != 200:
        return PostResult(Outcome.AMBIGUOUS, f"http_{status}", detail=f"unexpected body {code!r}")
    outcome = OUTCOMES.get(code, Outcome.FAILED)
    retry_after = _retry_after(headers) if outcome is Outcome.RETRY_LATER else None
    return PostResult(outcome, code, retry_after=retry_after, detail=f"Slack answered {code}")


def classify_exception(exc: BaseException) -> PostResult:
    """A post that raised before Slack answered."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, ConnectionRefusedError | socket.gaierror):
        # The request never left this machine: provably not delivered.
        return PostResult(
            Outcome.RETRY_LATER,
            "connection_refused",
            detail=repr(reason),
            retry_after=DEFAULT_RETRY_AFTER,
        )
    if isinstance(reason, TimeoutError | socket.timeout):
        return PostResult(Outcome.AMBIGUOUS, "timeout", detail=repr(reason))
    return PostResult(Outcome.AMBIGUOUS, "connection_error", detail=repr(reason))


# The codes that mean "this method is rate limited": HTTP 429 is answered as `ratelimited`.
RATE_LIMITED = frozenset({"ratelimited", "rate_limited"})


def _retry_after(headers: dict[str, Any]) -> int:
    for key, value in headers.items():
        if key.lower() == "retry-after":
            raw = value[0] if isinstance(value, list) else value
            try:
                return max(1, int(str(raw).strip()))
            except ValueError:
                break
    return DEFAULT_RETRY_AFTER


def delivery_metadata(delivery_id: str) -> dict[str, Any]:
    """The contract's message metadata: lets Slack itself witness which occurrence a
    message delivers."""
    return {"event_type": EVENT_TYPE, "event_payload": {"delivery_id": delivery_id}}


def _message(
    channel: str, text: str, blocks: list[dict[str, Any]] | None, delivery_id: str
) -> dict[str, Any]:
    """A message as chat.postMessage and chat.update take it: every post and update of
    ours carries its delivery's metadata."""
    return {
        "channel": channel,
        "text": text,
        "blocks": blocks,
        "metadata": delivery_metadata(delivery_id),
    }


@dataclass(frozen=True)
class SlackPost(Protocol):
    """A message as rendered for Slack (formatting.slack_text.SlackMessage)."""

    @property
    def text(self) -> str: ...

    @property
    def blocks(self) -> list[dict[str, Any]] | None: ...


@dataclass(frozen=True)
class Identity:
    """Who this token posts as: a history message is our delivery only if our bot wrote it."""

    bot_id: str | None
    app_id: str | None

    def wrote(self, message: dict[str, Any]) -> bool:
        """Whether `message` was posted by this bot (its `bot_id`; else its app's id)."""
        if self.bot_id and message.get("bot_id"):
            return bool(message.get("bot_id") == self.bot_id)
        app_id = message.get("app_id") or (message.get("bot_profile") or {}).get("app_id")
        return bool(self.app_id and app_id == self.app_id)


def _slack_ts(instant: datetime) -> str:
    return f"{instant.timestamp():.6f}"


def _failure(exc: BaseException) -> PostResult:
    if isinstance(exc, SlackApiError):
        r = exc.response
        return classify_api_error(r.status_code, r.data, dict(r.headers))
    return classify_exception(exc)


# What one wait holds back: a method (a Slack `Method`, or a name core.teams gives its
# calls), and for chat.postMessage (Teams: every call) the conversation.
_Scope = tuple[str, str | None]


class MethodWaits:
    """Until when the platform asked this process to wait before calling each method again
    (for chat.postMessage, in each channel): the Retry-After of its last 429, kept across
    requests and passes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._until: dict[_Scope, datetime] = {}

    def until(self, scope: _Scope, now: datetime) -> datetime | None:
        """When `scope` may be called again, None if it may be now."""
        with self._lock:
            until = self._until.get(scope)
        return until if until is not None and until > now else None

    def wait(self, scope: _Scope, until: datetime, now: datetime) -> None:
        with self._lock:
            # Waits that are over go, so the record stays as small as the waits running.
            self._until = {s: u for s, u in self._until.items() if u > now}
            self._until[scope] = max(until, self._until.get(scope, until))


_Answer = TypeVar("_Answer")

# The methods that post or would lead to a post: held while the app is uninstalled.
_POSTING = frozenset({Method.POST_MESSAGE, Method.UPDATE, Method.OPEN})


class _Held:
    """Why this process posts nothing to Slack now (None: it posts); shared by with_clock()
    copies. One attribute, replaced whole: reads and writes need no lock."""

    code: str | None = None


def web_client(token: str, base_url: str, timeout_seconds: int) -> WebClient:
    """A slack_sdk client for every call it makes, meant to be built once per process.

    No retry handlers: the SDK's default one re-posts after a connection that dropped after
    Slack had the request, which would be a second message. One TLS context for every HTTPS
    call of the client (it verifies as the default one does): given none, the SDK's urllib
    builds a default context for each request, loading the system's CA bundle again, 20 to
    26 ms of CPU per call (docs/benchmark.md). A plain-HTTP stand-in gets none: urllib would
    build an opener per call for it."""
    tls = ssl.create_default_context() if base_url.lower().startswith("https:") else None
    return WebClient(
        token=token, base_url=base_url, timeout=timeout_seconds, retry_handlers=[], ssl=tls
    )


class SlackTransport:
    def __init__(
        self, token: str, base_url: str, timeout_seconds: int, clock: Clock | None = None
    ) -> None:
        self._client = web_client(token, base_url, timeout_seconds)
        self._identity: Identity | None = None
        self._waits_clock: Clock = clock or SystemClock()
        self._waits = MethodWaits()
        self._held = _Held()

    def hold(self, code: str | None) -> None:
        """From now on, every posting call answers FAILED `code` without calling Slack
        (None: they call Slack again)."""
        self._held.code = code

    def team(self) -> str | PostResult:
        """The token's workspace (`auth.test`'s `team_id`, "" if it names none), asked now:
        whether the token works; what went wrong otherwise."""
        answer = self._call(Method.AUTH_TEST, self._client.auth_test)
        if isinstance(answer, PostResult):
            return answer
        team_id = answer.get("team_id")
        return team_id if isinstance(team_id, str) else ""

    def with_clock(self, clock: Clock) -> SlackTransport:
        """This transport on another clock: the same connection and the same waits."""
        other = copy.copy(self)
        other._waits_clock = clock
        return other

    def waiting_until(self, method: Method, channel: str | None = None) -> datetime | None:
        """When `method` (chat.postMessage: to `channel`) may be called again after a 429,
        None if it may be now."""
        return self._waits.until((method, channel), self._waits_clock.now())

    def _call(
        self, method: Method, call: Callable[[], _Answer], channel: str | None = None
    ) -> _Answer | PostResult:
        """Slack's answer to `call`, or what went wrong: a 429 makes the process wait out
        its Retry-After for `method` (in `channel`, when given), and meanwhile it is not
        called at all."""
        held = self._held.code
        if held is not None and method in _POSTING:
            return PostResult(Outcome.FAILED, held, detail=f"{method} not called: {held}")
        now = self._waits_clock.now()
        until = self._waits.until((method, channel), now)
        if until is not None:
            return PostResult(
                Outcome.RETRY_LATER,
                "ratelimited",
                retry_after=max(1, math.ceil((until - now).total_seconds())),
                detail=f"{method} waits out Slack's Retry-After until {until.isoformat()}",
            )
        try:
            return call()
        except Exception as exc:  # classified: what it means depends on the method
            failure = _failure(exc)
        if failure.code in RATE_LIMITED:
            wait = timedelta(seconds=failure.retry_after or DEFAULT_RETRY_AFTER)
            now = self._waits_clock.now()
            self._waits.wait((method, channel), now + wait, now)
        return failure

    def identity(self) -> Identity | PostResult:
        """This token's bot (`auth.test`), asked once per process; the failure otherwise."""
        if self._identity is None:
            answer = self._call(Method.AUTH_TEST, self._client.auth_test)
            if isinstance(answer, PostResult):  # a read: safe to ask again later
                return answer
            bot_id, app_id = answer.get("bot_id"), answer.get("app_id")
            self._identity = Identity(
                bot_id if isinstance(bot_id, str) else None,
                app_id if isinstance(app_id, str) else None,
            )
        return self._identity

    def history_page(
        self, channel: str, oldest: datetime, latest: datetime, cursor: str | None
    ) -> HistoryPage:
        """One page of the channel's history between `oldest` and `latest` (inclusive), from
        `cursor` (None: the newest first). Slack may answer fewer messages than asked for
        while more remain: only an empty `next_cursor` ends the window."""
        page = self._call(
            Method.HISTORY,
            lambda: self._client.conversations_history(
                channel=channel,
                oldest=_slack_ts(oldest),
                latest=_slack_ts(latest),
                inclusive=True,
                include_all_metadata=True,
                limit=200,
                cursor=cursor,
            ),
        )
        if isinstance(page, PostResult):  # reads are safe to repeat
            return HistoryPage(error=page)
        messages = tuple(m for m in page.get("messages") or [] if isinstance(m, dict))
        next_cursor = (page.get("response_metadata") or {}).get("next_cursor")
        return HistoryPage(
            messages, next_cursor if isinstance(next_cursor, str) and next_cursor else None
        )

    def open_dm(self, user: str) -> str | PostResult:
        """The id of the bot's direct message with `user` (`conversations.open`: Slack
        answers the same `D…` id for the same person every time), or what went wrong: a
        FAILED result (`user_not_found`, `user_disabled`, `cannot_dm_bot`...) is definitive,
        anything else is worth another try. Nothing is posted either way."""
        answer = self._call(Method.OPEN, lambda: self._client.conversations_open(users=user))
        if isinstance(answer, PostResult):
            return answer
        channel = answer.get("channel")
        dm = channel.get("id") if isinstance(channel, dict) else None
        if not isinstance(dm, str) or not dm:
            return PostResult(Outcome.AMBIGUOUS, "missing_channel", detail="ok without a channel")
        return dm

    def publish_view(self, user: str, view: dict[str, Any]) -> PostResult:
        """views.publish of `user`'s Home tab; DELIVERED when Slack took it. Publishing again
        replaces the whole tab, so a failed publish is safe to repeat."""
        answer = self._call(
            Method.VIEWS_PUBLISH, lambda: self._client.views_publish(user_id=user, view=view)
        )
        if isinstance(answer, PostResult):
            return answer
        return PostResult(Outcome.DELIVERED)

    def update(
        self,
        channel: str,
        ts: str,
        text: str,
        blocks: list[dict[str, Any]] | None,
        delivery_id: str,
    ) -> PostResult:
        """chat.update of our message `ts` in `channel` (its metadata kept); DELIVERED when
        Slack took it."""
        message = _message(channel, text, blocks, delivery_id)
        answer = self._call(Method.UPDATE, lambda: self._client.chat_update(ts=ts, **message))
        if isinstance(answer, PostResult):
            return answer
        return PostResult(Outcome.DELIVERED, ts=ts)

    def post(
        self,
        channel: str,
        text: str,
        delivery_id: str,
        blocks: list[dict[str, Any]] | None = None,
    ) -> PostResult:
        # Anything that raises before an answer is classified (a dropped connection: the
        # post may have landed, AMBIGUOUS).
        message = _message(channel, text, blocks, delivery_id)
        response = self._call(
            Method.POST_MESSAGE, lambda: self._client.chat_postMessage(**message), channel
        )
        if isinstance(response, PostResult):
            return response
        ts = response.get("ts")
        if not isinstance(ts, str):
            return PostResult(Outcome.AMBIGUOUS, "missing_ts", detail="ok without a ts")
        return PostResult(Outcome.DELIVERED, ts=ts)

    # The platform's share (core.platform.Platform): what the pipeline calls.

    @property
    def name(self) -> str:
        return SLACK

    def send(self, conversation: str, message: SlackPost, delivery_id: str) -> PostResult:
        return self.post(conversation, message.text, delivery_id, blocks=message.blocks)

    def edit(
        self, conversation: str, post_id: str, message: SlackPost, delivery_id: str
    ) -> PostResult:
        return self.update(conversation, post_id, message.text, message.blocks, delivery_id)

    def send_waiting_until(self, conversation: str) -> datetime | None:
        return self.waiting_until(Method.POST_MESSAGE, conversation)

    def edit_waiting_until(self) -> datetime | None:
        return self.waiting_until(Method.UPDATE)

    def history_waiting_until(self) -> datetime | None:
        return self.waiting_until(Method.HISTORY)

    def proof(
        self, conversation: str, messages: Sequence[dict[str, Any]], delivery_id: str
    ) -> Lookup | None:
        """FOUND when our bot's post carrying `delivery_id` in its metadata is among
        `messages`; unsettled when who we are cannot be asked now (`auth.test`)."""
        candidates = [m for m in messages if _carries(m, delivery_id)]
        if not candidates:
            return None
        identity = self.identity()
        if not isinstance(identity, Identity):
            failed = identity.outcome is Outcome.FAILED
            return Lookup(Witness.UNREADABLE if failed else Witness.TRY_LATER, code=identity.code)
        for message in candidates:
            if identity.wrote(message):
                return Lookup(Witness.FOUND, ts=message.get("ts"))
            logs.warning(
                "a message by another app carries this delivery_id; not taken as proof",
                delivery_id=delivery_id,
                channel=conversation,
                slack_ts=message.get("ts"),
                bot_id=message.get("bot_id"),
                app_id=message.get("app_id"),
            )
        return None


def _carries(message: dict[str, Any], delivery_id: str) -> bool:
    metadata = message.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("event_type") != EVENT_TYPE:
        return False
    payload = metadata.get("event_payload")
    return isinstance(payload, dict) and payload.get("delivery_id") == delivery_id
