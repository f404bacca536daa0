"""A local stand-in for the Slack Web API, faithful enough that the real
`slack_sdk.WebClient(token="xoxb-...", base_url=standin.url, retry_handlers=[])` talks to it
unchanged. Tests run it in-process on a background thread; `make run` runs it as a process:

    python -m emulator.slack_standin --port 8765

Sources for Slack's behaviour: slackapi/slack-api-specs (web-api/slack_web_openapi_v2.json),
the method pages on docs.slack.dev / api.slack.com, and Slack's changelog; the module that
enforces a rule names the source it was taken from (slack_limits, slack_channels,
slack_history, slack_rate_limits).

Methods (POST or GET /api/<method>). slack_sdk sends chat.postMessage and chat.update as JSON
and everything else form-encoded (booleans as "1"/"0", blocks/metadata as JSON strings), so
both encodings are accepted. Every call needs `Authorization: Bearer xoxb-...`; without it the
answer is `not_authed`, with another kind of token `invalid_auth`.

- auth.test                 -> user_id UBOT, team_id T0001, bot_id B0001. No app_id: the spec's
                               success schema (additionalProperties: false) has none.
- chat.postMessage          channel, text, blocks, metadata (object or JSON string) -> ts and the
                            message. Channel state: channel_not_found, is_archived,
                            not_in_channel. Limits (emulator/slack_limits.py): invalid_blocks,
                            msg_blocks_too_long, invalid_metadata_format, invalid_metadata_schema;
                            text over 40,000 is stored cut with the message_truncated warning.
- chat.update               channel, ts, text, blocks, metadata; the same channel checks and
                            limits; unknown ts: message_not_found
- conversations.history     channel, oldest, latest, inclusive, limit, cursor,
                            include_all_metadata; newest first, `metadata` only when asked.
                            channel_not_found, not_in_channel (an archived channel stays
                            readable to a member). Every page carries has_more and
                            response_metadata.next_cursor, "" at the end (emulator/
                            slack_history.py).
- conversations.open        users (one user id) -> {"channel": {"id": "D…"}}, the same id for the
                            same person every time (`no_op` and `already_open` true once
                            opened). user_not_found (unknown or not a user id),
                            user_disabled (deactivated), cannot_dm_bot (a bot user, UBOT
                            included), users_list_not_supplied (no users); several users (an
                            mpim) are not modelled: invalid_arguments (emulator/slack_users.py).
- conversations.list        types, exclude_archived, limit, cursor: the named channels
                            (add_channel, seed_workspace), Slack's cursor paging;
                            invalid_limit, invalid_types, invalid_cursor
- users.list                limit, cursor: the named people (add_person), deleted and bots
                            flagged as Slack flags them
- users.lookupByEmail       email -> the person; users_not_found (emulator/slack_directory.py)
- views.publish             user_id, view (type home, at most 100 blocks) -> the view; the
                            person's tab is replaced, read back with home_view(user)
                            (emulator/slack_home.py)
- anything else             unknown_method

Every recorded message has `user`, `bot_id` and `app_id`: ours are UBOT, B0001, A0001, and
history shows a bot's message with bot_id, app_id and a bot_profile, as Slack does; a person's
message (add_message without bot_id) has only `user`.

Inspection and control, in-process or over HTTP (workers in other processes post to it):

- SlackStandIn(host="127.0.0.1", port=0, clock=None, latency=0.0, skew=timedelta(0)):
  start(), stop(), url, control_url, usable as a context manager;
  posts() -> [RecordedPost], updates() -> [RecordedPost] (each chat.update taken, as the
  message stood after it), delivery_ids(), inject(Fault), clear_faults(),
  reset() (back to fresh: no posts, faults, channel states, rate limits, skew or page rules),
  calls(method) -> how many authenticated calls of the method came in, whatever the answer.
- set_channel(channel, *, exists=True, archived=False, member=True); a channel never set is
  known, not archived, with the bot in it.
- set_user(user, *, exists=True, deactivated=False, bot=False); a user id never set is a
  known, active person. dm_channel(user) -> the D… id conversations.open answers for them.
- set_history_page_max(n | None): at most n messages a history page whatever `limit` asks, and
  n is also the default (Slack's non-Marketplace apps since 2025: 15).
- set_short_pages(True): while more remain than a page holds, pages run half, empty, full,
  half, empty, full... of the page size (deterministic; an empty page still has has_more and a
  non-empty next_cursor). Cursors hold no server state: they work however late they come back.
- add_channel(channel, name, *, private=False), add_person(user, name, real_name, email),
  seed_workspace(): the directory the list methods answer from (CLI `--seed`).
- set_rate_limit(method, calls, per_seconds=60) (calls None: no limit): a sliding window on
  the stand-in's clock; a call beyond it is HTTP 429 {"ok": false, "error": "ratelimited"}
  with Retry-After = whole seconds until a call frees up (at least 1). Refused calls do not
  count; every call of the method counts, any page. Checked before faults.
- set_skew(timedelta): a message's ts is the stand-in's clock + skew.
- add_message(channel, text, *, metadata=None, blocks=None, user="U0OTHER", bot_id=None,
  app_id=None) -> ts: a message someone else posted (give another app its own bot_id/app_id).
  No channel checks or limits: it is already in the channel.
- RecordedPost(channel, ts, text, blocks, metadata, received_at, user="UBOT", bot_id="B0001",
  app_id="A0001"); RecordedPost.from_json loads the JSON of GET /_control/posts.

HTTP control (JSON bodies; a bad body is 400 {"ok": false, "error": <what is wrong>}):

- GET /_control/posts -> JSON list of posts; POST /_control/reset
- POST /_control/faults      a Fault as JSON, e.g. {"kind": "error", "code": "is_archived"}
- POST /_control/channels    {"channel": "C1", "exists": true, "archived": false, "member": true}
- POST /_control/users       {"user": "U1", "exists": true, "deactivated": false, "bot": false}
                             -> {"ok": true, "dm": "D…"}
- POST /_control/directory   {"seed": true, "channels": [{"id", "name", "is_private"?}],
                              "people": [{"id", "name", "real_name", "email"}]} (any key)
- POST /_control/rate_limits {"method": "conversations.history", "calls": 1, "per_seconds": 60}
- POST /_control/skew        {"seconds": -2.5}
- POST /_control/pagination  {"page_max": 15, "short_pages": true} (either key)
- POST /_control/messages    {"channel": "C1", "text": "...", "metadata": ..., "blocks": ...,
                              "user": ..., "bot_id": ..., "app_id": ...} -> {"ok": true, "ts"}
- POST /_control/interactivity {"url": "http://.../", "signing_secret": "..."}: where clicks go
- POST /_control/click       {"action_id": "done", "user": "U1", "ts"?: "<post ts>"} replays a
                              click on our post `ts` (default: the latest post with that
                              button) to the interactivity URL, signed as Slack signs it
                              (emulator/slack_clicks.py), with a response_url back to the
                              stand-in -> {"ok": true, "status": <the target's HTTP status>}
- GET /_control/replies      -> what was posted to response_urls (ephemeral replies), in order
- GET /_control/home_views   -> each person's Home tab as last published, by user id

What a person does in Slack, sent to the same interactivity URL as Slack sends it (one
Request URL for interactivity, slash commands and events; emulator/slack_native_controls.py,
bodies from emulator/slack_native.py), signed at the stand-in's clock; each answers
{"ok": true, "status": <the target's HTTP status>, "answer": <its JSON body, or text>}:
- POST /_control/command     {"user": "U1", "channel": "C1", "command"?: "/schedule",
                              "text"?: ""} -> + "trigger_id" (fresh, issued to the user)
- POST /_control/shortcut    {"user": "U1", "ts"?, "channel"?, "callback_id"?:
                              "schedule_copy"}: the message shortcut on message `ts` (default:
                              the latest message, in `channel` when given) -> + "trigger_id"
- POST /_control/submit      {"user": "U1", "values"?: {"<action_id>": <value>}}: submits the
                              view last opened for the user (remember_view), `state.values`
                              built from the view (untouched inputs keep their initial value);
                              the answer's response_action `errors` keeps it open, `update`/
                              `push` open the answered view, anything else closes it
- POST /_control/event       {"event": {"type": ..., ...}, "event_id"?, "retry_num"?,
                              "retry_reason"?: "http_timeout"}: an Events API callback (a new
                              event_id unless given; an `app_home_opened` given only `user`
                              gets Slack's channel, tab and event_ts); retry_num adds
                              X-Slack-Retry-Num and X-Slack-Retry-Reason -> + "event_id". A
                              retry is signed anew at the stand-in's clock, as Slack re-signs:
                              advance a fixed clock between deliveries, or the target sees the
                              same signature twice and refuses the second as a replay.
- POST /_control/url_verification {"challenge": "..."}
In-process: standin.native.command/shortcut/submit/event/url_verification (same answers);
issue_trigger_id(user), spend_trigger_id(trigger_id) -> the user, or SlackError
invalid_trigger_id / exchanged_trigger_id (used before) / expired_trigger_id (more than 3 s
on the stand-in's clock), for views.open; remember_view(user, view) (views.open, push and
update call it), opened_view(user).

Latency: `latency` seconds (CLI `--latency-ms`) are added to every API call's answer, after
the call took effect, as a real Slack round trip would; the benchmark posts against it.

Faults: Fault(kind, channel=None, method="chat.postMessage", times=None, ..., after_post=False)
matches calls to `method` (None: any method) naming `channel` (None: any channel; a
conversations.open call names none, so its faults leave `channel` out) and is spent
after `times` matches (None: never). When several match, the earliest injected wins.

- "error"               code (required): HTTP 200 {"ok": false, "error": code}. Not recorded.
- "rate_limit"          retry_after (default 1): HTTP 429, Retry-After header, "ratelimited".
- "server_error"        status (5xx, default 500), body (default a non-JSON HTML page).
- "slow"                delay (required): the call takes effect (the post IS recorded), then
                        the answer waits `delay` seconds, so a client with a shorter timeout
                        gives up on a message Slack did receive.
- "drop_after_receipt"  the call takes effect, then the connection closes with no answer.
- after_post=True       ("error" and "server_error" only; ValueError on other kinds): the call
                        takes effect first (the post IS recorded and in history), then the
                        error body or 5xx is answered, as Slack's fatal_error and
                        internal_error warn: "some aspect of the operation succeeded".
"""

from __future__ import annotations

import argparse
import copy
import json
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

from core import logs
from core.clock import Clock, SystemClock
from emulator.armed_faults import ArmedFaults, InjectsFaults
from emulator.http_reply import Reply, ReplyingHandler, json_reply
from emulator.service import Service, run_until_signalled
from emulator.slack_channels import ChannelState
from emulator.slack_clicks import click_payload, form_body, signed_headers
from emulator.slack_directory import (
    SEED_CHANNELS,
    SEED_PEOPLE,
    NamedChannel,
    Person,
    channel_object,
    limit_param,
    listed_channel,
    page_of,
    types_param,
    user_object,
)
from emulator.slack_faults import Fault as Fault
from emulator.slack_history import (
    ONE_MICRO,
    decode_cursor,
    encode_cursor,
    page_size,
    short_page_size,
    ts_param,
)
from emulator.slack_home import published_view
from emulator.slack_limits import SlackError, check_blocks, check_event_type, truncate_text
from emulator.slack_native_controls import NativeRequests
from emulator.slack_rate_limits import RateLimits
from emulator.slack_users import UserState, dm_id, is_user_id, users_param
from emulator.slack_views import Views

BOT_USER_ID = "UBOT"
TEAM_ID = "T0001"
BOT_ID = "B0001"
APP_ID = "A0001"
OTHER_USER_ID = "U0OTHER"

_DEFAULT_5XX_BODY = "<html><body><h1>500 Internal Server Error</h1></body></html>"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class RecordedPost:
    channel: str
    ts: str
    text: str | None
    blocks: list[Any] | None
    metadata: dict[str, Any] | None
    received_at: float  # wall-clock epoch seconds, whatever clock the ts comes from
    user: str = BOT_USER_ID
    bot_id: str | None = BOT_ID  # None: a person posted it
    app_id: str | None = APP_ID

    @property
    def delivery_id(self) -> str | None:
        payload = (self.metadata or {}).get("event_payload")
        value = payload.get("delivery_id") if isinstance(payload, dict) else None
        return None if value is None else str(value)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RecordedPost:
        return cls(**data)


def _button(post: RecordedPost, action_id: str) -> dict[str, Any] | None:
    for block in post.blocks or []:
        for element in block.get("elements") or [] if block.get("type") == "actions" else []:
            if element.get("action_id") == action_id:
                return dict(element)
    return None


def _fault_reply(fault: Fault) -> Reply | None:
    """The answer a fault gives instead of Slack's, or None for kinds that let it answer."""
    if fault.kind == "error":
        return json_reply({"ok": False, "error": fault.code})
    if fault.kind == "rate_limit":
        seconds = 1 if fault.retry_after is None else fault.retry_after
        return json_reply(
            {"ok": False, "error": "ratelimited"}, 429, (("Retry-After", str(seconds)),)
        )
    if fault.kind == "server_error":
        body = _DEFAULT_5XX_BODY if fault.body is None else fault.body
        content_type = "application/json" if body.lstrip().startswith("{") else "text/html"
        return Reply(fault.status or 500, body.encode(), content_type=content_type)
    return None


Handler = Callable[[dict[str, Any]], dict[str, Any]]
_State = TypeVar("_State", ChannelState, UserState)


class SlackStandIn(InjectsFaults[Fault], Service):
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Clock | None = None,
        latency: float = 0.0,
        skew: timedelta = timedelta(0),
    ) -> None:
        if latency < 0:
            raise ValueError(f"latency must not be negative, got {latency}")
        self._host = host
        self._latency = latency
        self._port = port
        self._clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._posts: list[RecordedPost] = []
        self._updates: list[RecordedPost] = []
        self._faults = ArmedFaults[Fault]()
        self._last_ts_us: dict[str, int] = {}  # per channel, as Slack's ts are
        self._channels: dict[str, ChannelState] = {}
        self._users: dict[str, UserState] = {BOT_USER_ID: UserState(bot=True)}
        self._opened: set[str] = set()  # DMs conversations.open has opened
        # The directory (emulator/slack_directory.py), in listing order.
        self._named_channels: dict[str, NamedChannel] = {}
        self._people: dict[str, Person] = {}
        self._calls: Counter[str] = Counter()  # every call that reached a method, answered or not
        self._rate_limits = RateLimits()
        self._skew = skew
        self._page_max: int | None = None
        self._short_pages = False
        self._interactivity: tuple[str, str] | None = None  # (request URL, signing secret)
        self._replies: list[dict[str, Any]] = []
        self._home_views: dict[str, dict[str, Any]] = {}  # views.publish, per user
        self.native = NativeRequests(self)  # slash commands, shortcuts, submissions, events
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._methods: dict[str, Handler] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "conversations.history": self._history,
            "conversations.open": self._open,
            "conversations.list": self._list_channels,
            "users.list": self._list_users,
            "users.lookupByEmail": self._lookup_by_email,
            "views.publish": self._publish_view,
        }
        # views.open/update, users.info, chat.postEphemeral
        self.views = Views(self._clock, self.spend_trigger_id, self.remember_view)
        self._methods |= self.views.methods()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> SlackStandIn:
        if self._server is not None:
            raise RuntimeError("the Slack stand-in is already running")
        self._stopping.clear()
        self._server = _Server((self._host, self._port), self)
        # A short poll interval keeps stop() quick; tests start and stop one per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="slack-standin",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._stopping.set()  # wakes handlers sleeping in a slow fault
        server.shutdown()
        server.server_close()
        thread.join()
        self._server = self._thread = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the Slack stand-in is not running; call start() first")
        return self._server.server_port

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}/api/"

    @property
    def control_url(self) -> str:
        return f"http://{self._host}:{self.port}/_control/"

    # -- inspection and control ------------------------------------------------------------

    def posts(self) -> list[RecordedPost]:
        with self._lock:
            return copy.deepcopy(self._posts)

    def updates(self) -> list[RecordedPost]:
        """Every chat.update taken, in order, as the message stood after it."""
        with self._lock:
            return copy.deepcopy(self._updates)

    def delivery_ids(self) -> list[str | None]:
        return [post.delivery_id for post in self.posts()]

    def set_channel(
        self, channel: str, *, exists: bool = True, archived: bool = False, member: bool = True
    ) -> None:
        self._set_state(self._channels, channel, ChannelState(exists, archived, member))

    def set_user(
        self, user: str, *, exists: bool = True, deactivated: bool = False, bot: bool = False
    ) -> None:
        self._set_state(self._users, user, UserState(exists, deactivated, bot))

    def _set_state(self, states: dict[str, _State], key: str, state: _State) -> None:
        """Records `state` for a channel or a user once each of its flags is true or false
        (ValueError naming them otherwise)."""
        names = [field.name for field in fields(state)]
        if not all(isinstance(getattr(state, name), bool) for name in names):
            listed = f"{', '.join(names[:-1])} and {names[-1]}"
            raise ValueError(f"{listed} are true or false, got {state}")
        with self._lock:
            states[key] = state

    def calls(self, method: str) -> int:
        """How many authenticated calls of `method` reached the stand-in, whatever it
        answered (a 429 and a fault included)."""
        with self._lock:
            return self._calls[method]

    def dm_channel(self, user: str) -> str:
        """The DM channel id conversations.open answers for `user`."""
        return dm_id(user)

    def add_channel(self, channel: str, name: str, *, private: bool = False) -> None:
        """Names `channel` in the directory (conversations.list); its archived and member
        flags stay its state's (set_channel)."""
        with self._lock:
            self._named_channels[channel] = NamedChannel(channel, name, private)

    def add_person(self, user: str, name: str, real_name: str, email: str) -> None:
        """Names `user` in the directory (users.list, users.lookupByEmail)."""
        with self._lock:
            self._people[user] = Person(user, name, real_name, email)

    def seed_workspace(self) -> None:
        """The seeded workspace: a dozen named channels (two private) and fifteen people."""
        with self._lock:
            self._named_channels.update((c.id, c) for c in SEED_CHANNELS)
            self._people.update((p.id, p) for p in SEED_PEOPLE)

    def set_rate_limit(self, method: str, calls: int | None, per_seconds: float = 60) -> None:
        with self._lock:
            self._rate_limits.set(method, calls, per_seconds)

    def set_skew(self, skew: timedelta) -> None:
        with self._lock:
            self._skew = skew

    def set_history_page_max(self, page_max: int | None) -> None:
        if page_max is not None and (isinstance(page_max, bool) or page_max < 1):
            raise ValueError(f"a page max is a whole number of at least 1, got {page_max!r}")
        with self._lock:
            self._page_max = page_max

    def set_short_pages(self, short: bool) -> None:
        with self._lock:
            self._short_pages = bool(short)

    def add_message(
        self,
        channel: str,
        text: str,
        *,
        metadata: dict[str, Any] | None = None,
        blocks: list[Any] | None = None,
        user: str = OTHER_USER_ID,
        bot_id: str | None = None,
        app_id: str | None = None,
    ) -> str:
        """Records a message someone else posted (a person, or another app when bot_id and
        app_id are given); returns its ts."""
        with self._lock:
            ts = self._next_ts(channel)
            self._posts.append(
                RecordedPost(channel, ts, text, blocks, metadata, time.time(), user, bot_id, app_id)
            )
        return ts

    def reset(self) -> None:
        """Back to a fresh stand-in: no posts or faults, every channel and user as never set,
        no rate limits, no skew, full pages."""
        with self._lock:
            self._posts.clear()
            self._updates.clear()
            self._replies.clear()
            self._home_views.clear()
            self._faults.clear()
            self._channels.clear()
            self._users = {BOT_USER_ID: UserState(bot=True)}
            self._opened.clear()
            self._named_channels.clear()
            self._people.clear()
            self._calls.clear()
            self._rate_limits.clear()
            self._skew = timedelta(0)
            self._page_max = None
            self._short_pages = False
        self.native.clear()
        self.views.reset()

    def _channel_state(self, channel: str) -> ChannelState:
        with self._lock:
            return self._channels.get(channel, ChannelState())

    def _take_fault(self, method: str, channel: str | None) -> Fault | None:
        with self._lock:
            return self._faults.take_first(
                lambda fault: fault.method in (None, method) and fault.channel in (None, channel)
            )

    def _linger(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    # -- dispatch --------------------------------------------------------------------------

    def _dispatch(self, method: str, params: dict[str, Any], authorization: str | None) -> Reply:
        handler = self._methods.get(method)
        if handler is None:
            return json_reply({"ok": False, "error": "unknown_method", "req_method": method}, 404)
        auth_error = _auth_error(authorization)
        if auth_error is not None:
            return json_reply({"ok": False, "error": auth_error})
        with self._lock:
            self._calls[method] += 1
            wait = self._rate_limits.admit(method, self._clock.now())
        if wait is not None:
            headers = (("Retry-After", str(wait)),)
            return json_reply({"ok": False, "error": "ratelimited"}, 429, headers)

        channel = params.get("channel")
        fault = self._take_fault(method, None if channel is None else str(channel))
        instead = None if fault is None else _fault_reply(fault)
        if fault is not None and instead is not None and not fault.after_post:
            return instead

        try:
            reply = json_reply({"ok": True, **handler(params)})
        except SlackError as error:
            reply = json_reply(error.body())
        if fault is not None and instead is not None:  # after_post: it took effect, then this
            reply = instead
        elif fault is not None and fault.kind == "slow":
            return replace(reply, delay=self._latency + (fault.delay or 0.0))
        elif fault is not None and fault.kind == "drop_after_receipt":
            return replace(reply, drop=True)
        return replace(reply, delay=self._latency) if self._latency else reply

    def set_interactivity(self, url: str, signing_secret: str) -> None:
        """Where `click` sends clicks, signed with `signing_secret` (a Slack app's settings)."""
        if urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"the interactivity URL must be http(s), got {url!r}")
        with self._lock:
            self._interactivity = (url, signing_secret)

    def home_view(self, user: str) -> dict[str, Any] | None:
        """The Home tab last published for `user` (views.publish), None if none was."""
        with self._lock:
            return copy.deepcopy(self._home_views.get(user))

    def replies(self) -> list[dict[str, Any]]:
        """The bodies posted to response_urls (the app's ephemeral replies), in order."""
        with self._lock:
            return copy.deepcopy(self._replies)

    def response_url(self) -> str:
        return f"http://{self._host}:{self.port}/_responses/{len(self._replies)}"

    def click(self, action_id: str, user: str, ts: str | None = None) -> int:
        """Replays `user` clicking the button `action_id` of our post `ts` (default: the
        latest post having that button) to the interactivity URL; the target's status."""
        with self._lock:
            if self._interactivity is None:
                raise ValueError("no interactivity URL: set one first")
            url, secret = self._interactivity
        for post in reversed(self.posts()):
            button = _button(post, action_id)
            if button is not None and (ts is None or post.ts == ts):
                break
        else:
            raise ValueError(f"no post has a button {action_id!r}")
        payload = click_payload(button, user, post.channel, post.ts, self.response_url())
        body = form_body(payload)
        headers = signed_headers(secret, body, int(self._clock.now().timestamp()))
        # (An http(s) URL: set_interactivity checks it.)
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
                return int(answer.status)
        except urllib.error.HTTPError as error:
            return int(error.code)

    # -- Slack-native requests (emulator/slack_native_controls.py) ------------------------

    def now(self) -> datetime:
        return self._clock.now()

    def request_url(self) -> tuple[str, str]:
        """The app's Request URL and signing secret (set_interactivity)."""
        with self._lock:
            if self._interactivity is None:
                raise ValueError("no interactivity URL: set one first")
            return self._interactivity

    def message(self, ts: str | None, channel: str | None) -> tuple[str, dict[str, Any]]:
        """The channel and message object (as history gives it) of message `ts`, or of the
        latest message (in `channel` when given)."""
        for post in reversed(self.posts()):
            if (ts is None or post.ts == ts) and (channel is None or post.channel == channel):
                return post.channel, _message(post, with_metadata=False)
        raise ValueError(f"no message {ts or 'at all'}{f' in {channel}' if channel else ''}")

    def issue_trigger_id(self, user: str) -> str:
        """A trigger id for `user`, good for one views.open within 3 s (stand-in clock)."""
        return self.native.triggers.issue(user, self._clock.now())

    def spend_trigger_id(self, trigger_id: str) -> str:
        """The user `trigger_id` was issued to; SlackError invalid_trigger_id,
        exchanged_trigger_id (used before) or expired_trigger_id (past 3 s) otherwise."""
        return self.native.triggers.spend(trigger_id, self._clock.now())

    def remember_view(self, user: str, view: dict[str, Any]) -> None:
        """The view now open for `user` (views.open/push/update call this), which
        `/_control/submit` submits."""
        self.native.views.remember(user, view)

    def opened_view(self, user: str) -> dict[str, Any] | None:
        return self.native.views.get(user)

    def _control(self, command: str, path: str, body: bytes) -> Reply:
        if (command, path) == ("GET", "/_control/posts"):
            return json_reply([asdict(post) for post in self.posts()])
        if (command, path) == ("GET", "/_control/replies"):
            return json_reply(self.replies())
        if (command, path) == ("GET", "/_control/home_views"):
            with self._lock:
                return json_reply(copy.deepcopy(self._home_views))
        if (command, path) == ("POST", "/_control/reset"):
            self.reset()
            return json_reply({"ok": True})
        action = self._control_actions().get(path) if command == "POST" else None
        if action is None:
            return json_reply({"ok": False, "error": "not_found"}, 404)
        try:
            spec = json.loads(body or b"{}")
            if not isinstance(spec, dict):
                raise ValueError("a control body is a JSON object")
            answer = action(spec)
        except (ValueError, TypeError) as error:
            return json_reply({"ok": False, "error": str(error)}, 400)
        return json_reply({"ok": True, **answer})

    def _control_actions(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        def fault(spec: dict[str, Any]) -> dict[str, Any]:
            self.inject(Fault.from_json(spec))
            return {}

        def channels(spec: dict[str, Any]) -> dict[str, Any]:
            _only(spec, {"channel"}, {"exists", "archived", "member"})
            self.set_channel(str(spec.pop("channel")), **spec)
            return {}

        def users(spec: dict[str, Any]) -> dict[str, Any]:
            _only(spec, {"user"}, {"exists", "deactivated", "bot"})
            user = str(spec.pop("user"))
            self.set_user(user, **spec)
            return {"dm": self.dm_channel(user)}

        def rate_limits(spec: dict[str, Any]) -> dict[str, Any]:
            _only(spec, {"method", "calls"}, {"per_seconds"})
            self.set_rate_limit(str(spec["method"]), spec["calls"], spec.get("per_seconds", 60))
            return {}

        def skew(spec: dict[str, Any]) -> dict[str, Any]:
            _only(spec, {"seconds"}, set())
            self.set_skew(timedelta(seconds=float(spec["seconds"])))
            return {}

        def pagination(spec: dict[str, Any]) -> dict[str, Any]:
            _only(spec, set(), {"page_max", "short_pages"})
            if "page_max" in spec:
                self.set_history_page_max(spec["page_max"])
            if "short_pages" in spec:
                self.set_short_pages(spec["short_pages"])
            return {}

        def messages(spec: dict[str, Any]) -> dict[str, Any]:
            _only(spec, {"channel", "text"}, {"metadata", "blocks", "user", "bot_id", "app_id"})
            channel, text = str(spec.pop("channel")), str(spec.pop("text"))
            return {"ts": self.add_message(channel, text, **spec)}

        def interactivity(spec: dict[str, Any]) -> dict[str, Any]:
            _only(spec, {"url", "signing_secret"}, set())
            self.set_interactivity(str(spec["url"]), str(spec["signing_secret"]))
            return {}

        def click(spec: dict[str, Any]) -> dict[str, Any]:
            _only(spec, {"action_id", "user"}, {"ts"})
            ts = spec.get("ts")
            status = self.click(str(spec["action_id"]), str(spec["user"]), ts and str(ts))
            return {"status": status}

        def directory(spec: dict[str, Any]) -> dict[str, Any]:
            _only(spec, set(), {"seed", "channels", "people"})
            if spec.get("seed"):
                self.seed_workspace()
            for channel in spec.get("channels") or []:
                _only(channel, {"id", "name"}, {"is_private"})
                private = bool(channel.get("is_private"))
                self.add_channel(str(channel["id"]), str(channel["name"]), private=private)
            for person in spec.get("people") or []:
                _only(person, {"id", "name", "real_name", "email"}, set())
                self.add_person(*(str(person[k]) for k in ("id", "name", "real_name", "email")))
            return {}

        return {
            **self.native.control_actions(),
            "/_control/directory": directory,
            "/_control/interactivity": interactivity,
            "/_control/click": click,
            "/_control/faults": fault,
            "/_control/channels": channels,
            "/_control/users": users,
            "/_control/rate_limits": rate_limits,
            "/_control/skew": skew,
            "/_control/pagination": pagination,
            "/_control/messages": messages,
        }

    def _take_reply(self, body: bytes) -> Reply:
        """A post to a response_url: Slack answers plain `ok`."""
        try:
            reply = json.loads(body or b"{}")
        except ValueError:
            return Reply(400, b"invalid_payload", "text/plain")
        with self._lock:
            self._replies.append(reply)
        return Reply(200, b"ok", "text/plain")

    # -- Slack methods ---------------------------------------------------------------------

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        # The web-api spec's auth.test success schema (additionalProperties: false) has
        # bot_id but no app_id; that is what Slack answers a bot token.
        return {
            "url": "https://standin.slack.com/",
            "team": "Stand-in",
            "user": "scheduler-bot",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _channel(params)
        text, warnings = truncate_text(_optional_str(params.get("text")))
        blocks = _blocks(params)
        metadata = _metadata(params)
        if not text and not blocks and not params.get("attachments"):
            raise SlackError("no_text")
        _raise_if(self._channel_state(channel).post_error())
        with self._lock:
            post = RecordedPost(
                channel, self._next_ts(channel), text, blocks, metadata, time.time()
            )
            self._posts.append(post)
        message = _message(post, with_metadata=True)
        return {"channel": channel, "ts": post.ts, "message": message, **_warnings(warnings)}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _channel(params)
        ts = _optional_str(params.get("ts"))
        changes: dict[str, Any] = {}
        warnings: list[str] = []
        if "text" in params:
            changes["text"], warnings = truncate_text(_optional_str(params["text"]))
        if "blocks" in params:
            changes["blocks"] = _blocks(params)
        if "metadata" in params:
            changes["metadata"] = _metadata(params)
        if not changes.get("text") and not changes.get("blocks"):
            raise SlackError("no_text")
        _raise_if(self._channel_state(channel).post_error())
        with self._lock:
            for index, post in enumerate(self._posts):
                if post.channel == channel and post.ts == ts:
                    self._posts[index] = updated = replace(post, **changes)
                    self._updates.append(updated)
                    break
            else:
                raise SlackError("message_not_found")
        message = _message(updated, with_metadata=True)
        return {
            "channel": channel,
            "ts": updated.ts,
            "text": message["text"],
            "message": message,
            **_warnings(warnings),
        }

    def _open(self, params: dict[str, Any]) -> dict[str, Any]:
        user = users_param(params.get("users"))
        if user is None:
            raise SlackError("users_list_not_supplied")
        if "," in user:
            raise SlackError("invalid_arguments")  # an mpim: not modelled
        with self._lock:
            state = self._users.get(user, UserState())
        if not is_user_id(user):
            state = UserState(exists=False)
        _raise_if(state.open_error())
        dm = dm_id(user)
        with self._lock:
            already = dm in self._opened
            self._opened.add(dm)
        return {"channel": {"id": dm}, **({"no_op": True, "already_open": True} if already else {})}

    def _publish_view(self, params: dict[str, Any]) -> dict[str, Any]:
        user, view = published_view(params)
        with self._lock:
            self._home_views[user] = view
        return {"view": {"id": f"V{len(self._home_views):08d}", **view}}

    def _history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _channel(params)
        oldest = ts_param(params.get("oldest"), "invalid_ts_oldest") or Decimal(0)
        latest = ts_param(params.get("latest"), "invalid_ts_latest")
        before, page_number = decode_cursor(params.get("cursor"))
        inclusive = _flag(params.get("inclusive"))
        with self._lock:
            page_max, short = self._page_max, self._short_pages
        size = page_size(params.get("limit"), page_max)
        _raise_if(self._channel_state(channel).read_error())

        def wanted(ts: Decimal) -> bool:
            above = ts >= oldest if inclusive else ts > oldest
            below = latest is None or (ts <= latest if inclusive else ts < latest)
            return above and below and (before is None or ts < before)

        with self._lock:
            matching = [p for p in self._posts if p.channel == channel and wanted(Decimal(p.ts))]
        matching.sort(key=lambda post: Decimal(post.ts), reverse=True)
        if len(matching) > size and short:
            size = short_page_size(page_number, size)
        page, rest = matching[:size], matching[size:]
        with_metadata = _flag(params.get("include_all_metadata"))
        next_cursor = ""
        if rest:
            # An empty page resumes just above the newest message it did not return.
            resume = Decimal(page[-1].ts) if page else Decimal(rest[0].ts) + ONE_MICRO
            next_cursor = encode_cursor(resume, page_number + 1 if short else None)
        return {
            "messages": [_message(post, with_metadata) for post in page],
            "has_more": bool(rest),
            "pin_count": 0,
            "channel_actions_ts": None,
            "channel_actions_count": 0,
            "response_metadata": {"next_cursor": next_cursor},
        }

    def _list_channels(self, params: dict[str, Any]) -> dict[str, Any]:
        limit = limit_param(params.get("limit"))
        types = types_param(params.get("types"))
        exclude_archived = _flag(params.get("exclude_archived"))
        with self._lock:
            named = list(self._named_channels.values())
            states = {c.id: self._channels.get(c.id, ChannelState()) for c in named}
        listed = [
            channel_object(c, states[c.id])
            for c in named
            if listed_channel(states[c.id], c, types)
            and not (exclude_archived and states[c.id].archived)
        ]
        page, next_cursor = page_of(listed, params.get("cursor"), limit)
        return {"channels": page, "response_metadata": {"next_cursor": next_cursor}}

    def _list_users(self, params: dict[str, Any]) -> dict[str, Any]:
        limit = limit_param(params.get("limit"))
        with self._lock:
            people = [(p, self._users.get(p.id, UserState())) for p in self._people.values()]
        members = [user_object(p, state) for p, state in people if state.exists]
        page, next_cursor = page_of(members, params.get("cursor"), limit)
        return {
            "members": page,
            "cache_ts": int(self._clock.now().timestamp()),
            "response_metadata": {"next_cursor": next_cursor},
        }

    def _lookup_by_email(self, params: dict[str, Any]) -> dict[str, Any]:
        email = str(params.get("email") or "").strip().lower()
        with self._lock:
            found = [
                (p, self._users.get(p.id, UserState()))
                for p in self._people.values()
                if p.email.lower() == email
            ]
        for person, state in found:
            if state.exists:
                return {"user": user_object(person, state)}
        raise SlackError("users_not_found")

    def _next_ts(self, channel: str) -> str:
        # Real Slack ts are epoch microseconds; they must also be unique per channel, which a
        # fixed test clock alone would not give, hence the bump past the channel's last one
        # issued. Only per channel: a post elsewhere must not push this channel's ts on.
        now = self._clock.now() + self._skew
        micros = (now - _EPOCH) // timedelta(microseconds=1)
        last = self._last_ts_us[channel] = max(micros, self._last_ts_us.get(channel, -1) + 1)
        return f"{last // 1_000_000}.{last % 1_000_000:06d}"


# -- parameter parsing ---------------------------------------------------------------------


def _auth_error(authorization: str | None) -> str | None:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return "not_authed"
    return None if token.strip().startswith("xoxb-") else "invalid_auth"


def _only(spec: dict[str, Any], required: set[str], optional: set[str]) -> None:
    missing = required - set(spec)
    unknown = set(spec) - required - optional
    if missing or unknown:
        raise ValueError(
            f"missing fields: {', '.join(sorted(missing)) or '-'};"
            f" unknown fields: {', '.join(sorted(unknown)) or '-'}"
        )


def _raise_if(code: str | None) -> None:
    if code is not None:
        raise SlackError(code)


def _warnings(warnings: list[str]) -> dict[str, Any]:
    # Slack's shape for warnings on a successful call (e.g. conversations.join's).
    if not warnings:
        return {}
    return {"warning": ",".join(warnings), "response_metadata": {"warnings": warnings}}


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _channel(params: dict[str, Any]) -> str:
    channel = params.get("channel")
    if not channel:
        raise SlackError("channel_not_found")
    return str(channel)


def _flag(value: Any) -> bool:
    return str(value).lower() in ("1", "true")


def _json_value(value: Any, error: str) -> Any:
    # Form-encoded calls carry structured fields as JSON text; JSON calls carry them as-is.
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        raise SlackError(error) from None


def _blocks(params: dict[str, Any]) -> list[Any] | None:
    if params.get("blocks") in (None, ""):
        return None
    blocks = _json_value(params["blocks"], "invalid_blocks_format")
    if not isinstance(blocks, list):
        raise SlackError("invalid_blocks_format")
    check_blocks(blocks)
    return blocks


def _metadata(params: dict[str, Any]) -> dict[str, Any] | None:
    if params.get("metadata") in (None, ""):
        return None
    metadata = _json_value(params["metadata"], "invalid_metadata_format")
    if not isinstance(metadata, dict):
        raise SlackError("invalid_metadata_format")
    event_type = metadata.get("event_type")
    if not isinstance(event_type, str) or not isinstance(metadata.get("event_payload"), dict):
        raise SlackError("invalid_metadata_schema")
    check_event_type(event_type)
    return metadata


def _message(post: RecordedPost, with_metadata: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "message", "user": post.user}
    if post.bot_id is not None:
        # What Slack's history carries for an app's message: its bot, app and bot profile.
        message["bot_id"] = post.bot_id
        message["app_id"] = post.app_id
        message["bot_profile"] = {
            "id": post.bot_id,
            "app_id": post.app_id,
            "name": "scheduler-bot" if post.bot_id == BOT_ID else post.bot_id,
            "deleted": False,
            "team_id": TEAM_ID,
        }
    message["ts"] = post.ts
    message["text"] = post.text or ""
    if post.blocks is not None:
        message["blocks"] = post.blocks
    if with_metadata and post.metadata is not None:
        message["metadata"] = post.metadata
    return message


def _decode_body(body: bytes, content_type: str) -> dict[str, Any]:
    if not body:
        return {}
    if content_type.split(";")[0].strip().lower() == "application/json":
        value = json.loads(body)
        if not isinstance(value, dict):
            raise ValueError("a JSON body must be an object")
        return value
    return dict(parse_qsl(body.decode(), keep_blank_values=True))


# -- HTTP ----------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    # The default listen backlog (5) drops connections when many workers post at once, and a
    # dropped SYN is retried only after a second: that would be measured as Slack's latency.
    request_queue_size = 256

    def __init__(self, address: tuple[str, int], standin: SlackStandIn) -> None:
        super().__init__(address, _RequestHandler)
        self.standin = standin


class _RequestHandler(ReplyingHandler):
    server_version = "SlackStandIn/1.0"

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def _route(self) -> None:
        assert isinstance(self.server, _Server)
        standin = self.server.standin
        url = urlsplit(self.path)
        # Always read the whole body first: the drop fault must have received everything.
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if url.path.startswith("/_control/"):
            self.send(standin._control(self.command, url.path, body))
            return
        if url.path.startswith("/_responses/") and self.command == "POST":
            self.send(standin._take_reply(body))
            return
        if not url.path.startswith("/api/"):
            self.send(json_reply({"ok": False, "error": "not_found"}, 404))
            return

        params: dict[str, Any] = dict(parse_qsl(url.query, keep_blank_values=True))
        try:
            params.update(_decode_body(body, self.headers.get("Content-Type", "")))
        except ValueError:
            self.send(json_reply({"ok": False, "error": "invalid_json"}))
            return
        method = url.path.removeprefix("/api/")
        reply = standin._dispatch(method, params, self.headers.get("Authorization"))
        self.answer(reply, standin._linger)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Local stand-in for the Slack Web API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument(
        "--latency-ms", type=float, default=0.0, help="added to every API call's answer"
    )
    parser.add_argument(
        "--seed", action="store_true", help="start with the seeded workspace's names"
    )
    args = parser.parse_args(argv)

    standin = SlackStandIn(host=args.host, port=args.port, latency=args.latency_ms / 1000.0)
    if args.seed:
        standin.seed_workspace()
    run_until_signalled(standin, _announce)


def _announce(standin: SlackStandIn) -> None:
    logs.info("slack stand-in listening", url=standin.url, control_url=standin.control_url)


if __name__ == "__main__":
    main()
