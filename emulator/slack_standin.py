"""A local stand-in for the Slack Web API, faithful enough that the real
`slack_sdk.WebClient(token="xoxb-...", base_url=standin.url, retry_handlers=[])` talks to it
unchanged. Tests run it in-process on a background thread; `make run` runs it as a process:

    python -m emulator.slack_standin --port 8765

Methods (POST or GET /api/<method>). slack_sdk sends chat.postMessage and chat.update as JSON
and everything else form-encoded (booleans as "1"/"0", blocks/metadata as JSON strings), so
both encodings are accepted. Every call needs `Authorization: Bearer xoxb-...`; without it the
answer is `not_authed`, with another kind of token `invalid_auth`.

- auth.test                 -> user_id UBOT, team_id T0001, bot_id B0001
- chat.postMessage          channel, text, blocks, metadata (object or JSON string) -> ts
- chat.update               channel, ts, text, blocks, metadata; unknown ts: message_not_found
- conversations.history     channel, oldest, latest, inclusive, limit, cursor,
                            include_all_metadata; newest first, `metadata` only when asked
- anything else             unknown_method

Inspection and control, in-process or over HTTP (workers in other processes post to it):

- SlackStandIn(host="127.0.0.1", port=0, clock=None, latency=0.0): start(), stop(), url,
  control_url,
  posts() -> [RecordedPost], delivery_ids(), reset() (posts and faults), inject(Fault),
  clear_faults(); usable as a context manager.
- GET /_control/posts -> JSON list of posts; POST /_control/reset;
  POST /_control/faults with a Fault as JSON, e.g. {"kind": "error", "code": "is_archived"}.

Latency: `latency` seconds (CLI `--latency-ms`) are added to every API call's answer, after
the call took effect, as a real Slack round trip would; the benchmark posts against it.

Faults: Fault(kind, channel=None, method="chat.postMessage", times=None, ...) matches calls to
`method` (None: any method) naming `channel` (None: any channel) and is spent after `times`
matches (None: never). When several match, the earliest injected wins.

- "error"               code (required): HTTP 200 {"ok": false, "error": code}. Not recorded.
- "rate_limit"          retry_after (default 1): HTTP 429, Retry-After header, "ratelimited".
- "server_error"        status (5xx, default 500), body (default a non-JSON HTML page).
- "slow"                delay (required): the call takes effect (the post IS recorded), then
                        the answer waits `delay` seconds, so a client with a shorter timeout
                        gives up on a message Slack did receive.
- "drop_after_receipt"  the call takes effect, then the connection closes with no answer.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import copy
import json
import logging
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType, TracebackType
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from core import logs
from core.clock import Clock, SystemClock

BOT_USER_ID = "UBOT"
TEAM_ID = "T0001"
BOT_ID = "B0001"

FaultKind = Literal["error", "rate_limit", "server_error", "slow", "drop_after_receipt"]

# Optional Fault fields each kind takes. A field set on the wrong kind is nearly always a typo
# in a test, and silently ignoring it would make the test pass for the wrong reason.
_KIND_FIELDS: dict[str, frozenset[str]] = {
    "error": frozenset({"code"}),
    "rate_limit": frozenset({"retry_after"}),
    "server_error": frozenset({"status", "body"}),
    "slow": frozenset({"delay"}),
    "drop_after_receipt": frozenset(),
}
_OPTIONAL_FIELDS = frozenset().union(*_KIND_FIELDS.values())
_DEFAULT_5XX_BODY = "<html><body><h1>500 Internal Server Error</h1></body></html>"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    channel: str | None = None
    method: str | None = "chat.postMessage"
    times: int | None = None
    code: str | None = None
    retry_after: int | None = None
    status: int | None = None
    body: str | None = None
    delay: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KIND_FIELDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; one of {sorted(_KIND_FIELDS)}")
        stray = {n for n in _OPTIONAL_FIELDS if getattr(self, n) is not None}
        stray -= _KIND_FIELDS[self.kind]
        if stray:
            raise ValueError(f"a {self.kind} fault takes no {', '.join(sorted(stray))}")
        if self.times is not None and (not isinstance(self.times, int) or self.times < 1):
            raise ValueError("times must be a whole number of at least 1 (None: unlimited)")
        if self.kind == "error" and not self.code:
            raise ValueError("an error fault needs a code, e.g. 'channel_not_found'")
        if self.kind == "slow" and (self.delay is None or self.delay <= 0):
            raise ValueError("a slow fault needs a positive delay in seconds")
        if self.status is not None and not 500 <= self.status <= 599:
            raise ValueError(f"server_error status must be 5xx, got {self.status}")
        if self.retry_after is not None and self.retry_after < 0:
            raise ValueError("retry_after must not be negative")

    @classmethod
    def from_json(cls, spec: Mapping[str, Any]) -> Fault:
        unknown = set(spec) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown fault fields: {', '.join(sorted(unknown))}")
        return cls(**spec)


@dataclass(frozen=True)
class RecordedPost:
    channel: str
    ts: str
    text: str | None
    blocks: list[Any] | None
    metadata: dict[str, Any] | None
    received_at: float  # wall-clock epoch seconds, whatever clock the ts comes from

    @property
    def delivery_id(self) -> str | None:
        payload = (self.metadata or {}).get("event_payload")
        value = payload.get("delivery_id") if isinstance(payload, dict) else None
        return None if value is None else str(value)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RecordedPost:
        return cls(**data)


class _SlackError(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class _Reply:
    status: int
    body: bytes
    content_type: str = "application/json; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    drop: bool = False


def _reply(payload: Any, status: int = 200, headers: tuple[tuple[str, str], ...] = ()) -> _Reply:
    return _Reply(status, json.dumps(payload).encode(), headers=headers)


@dataclass
class _ArmedFault:
    fault: Fault
    remaining: int | None


Handler = Callable[[dict[str, Any]], dict[str, Any]]


class SlackStandIn:
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Clock | None = None,
        latency: float = 0.0,
    ) -> None:
        if latency < 0:
            raise ValueError(f"latency must not be negative, got {latency}")
        self._host = host
        self._latency = latency
        self._port = port
        self._clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._posts: list[RecordedPost] = []
        self._faults: list[_ArmedFault] = []
        self._last_ts_us: dict[str, int] = {}  # per channel, as Slack's ts are
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._methods: dict[str, Handler] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "conversations.history": self._history,
        }

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

    def __enter__(self) -> SlackStandIn:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

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

    # -- inspection and faults -------------------------------------------------------------

    def posts(self) -> list[RecordedPost]:
        with self._lock:
            return copy.deepcopy(self._posts)

    def delivery_ids(self) -> list[str | None]:
        return [post.delivery_id for post in self.posts()]

    def inject(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(_ArmedFault(fault, fault.times))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def reset(self) -> None:
        with self._lock:
            self._posts.clear()
            self._faults.clear()

    def _take_fault(self, method: str, channel: str | None) -> Fault | None:
        with self._lock:
            for armed in self._faults:
                fault = armed.fault
                if fault.method not in (None, method) or fault.channel not in (None, channel):
                    continue
                if armed.remaining is not None:
                    armed.remaining -= 1
                    if armed.remaining == 0:
                        self._faults.remove(armed)
                return fault
        return None

    def _linger(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    # -- dispatch --------------------------------------------------------------------------

    def _dispatch(self, method: str, params: dict[str, Any], authorization: str | None) -> _Reply:
        handler = self._methods.get(method)
        if handler is None:
            return _reply({"ok": False, "error": "unknown_method", "req_method": method}, 404)
        auth_error = _auth_error(authorization)
        if auth_error is not None:
            return _reply({"ok": False, "error": auth_error})

        channel = params.get("channel")
        fault = self._take_fault(method, None if channel is None else str(channel))
        if fault is not None and fault.kind == "error":
            return _reply({"ok": False, "error": fault.code})
        if fault is not None and fault.kind == "rate_limit":
            seconds = 1 if fault.retry_after is None else fault.retry_after
            headers = (("Retry-After", str(seconds)),)
            return _reply({"ok": False, "error": "ratelimited"}, 429, headers)
        if fault is not None and fault.kind == "server_error":
            body = _DEFAULT_5XX_BODY if fault.body is None else fault.body
            content_type = "application/json" if body.lstrip().startswith("{") else "text/html"
            return _Reply(fault.status or 500, body.encode(), content_type=content_type)

        try:
            reply = _reply({"ok": True, **handler(params)})
        except _SlackError as error:
            reply = _reply({"ok": False, "error": error.code})
        if fault is not None and fault.kind == "slow":
            return replace(reply, delay=self._latency + (fault.delay or 0.0))
        if fault is not None and fault.kind == "drop_after_receipt":
            return replace(reply, drop=True)
        return replace(reply, delay=self._latency) if self._latency else reply

    def _control(self, command: str, path: str, body: bytes) -> _Reply:
        if (command, path) == ("GET", "/_control/posts"):
            return _reply([asdict(post) for post in self.posts()])
        if (command, path) == ("POST", "/_control/reset"):
            self.reset()
            return _reply({"ok": True})
        if (command, path) == ("POST", "/_control/faults"):
            try:
                spec = json.loads(body or b"{}")
                if not isinstance(spec, dict):
                    raise ValueError("a fault spec is a JSON object")
                self.inject(Fault.from_json(spec))
            except (ValueError, TypeError) as error:
                return _reply({"ok": False, "error": str(error)}, 400)
            return _reply({"ok": True})
        return _reply({"ok": False, "error": "not_found"}, 404)

    # -- Slack methods ---------------------------------------------------------------------

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
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
        text = _optional_str(params.get("text"))
        blocks = _blocks(params)
        metadata = _metadata(params)
        if not text and not blocks and not params.get("attachments"):
            raise _SlackError("no_text")
        with self._lock:
            post = RecordedPost(
                channel, self._next_ts(channel), text, blocks, metadata, time.time()
            )
            self._posts.append(post)
        return {"channel": channel, "ts": post.ts, "message": _message(post, with_metadata=True)}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _channel(params)
        ts = _optional_str(params.get("ts"))
        changes: dict[str, Any] = {}
        if "text" in params:
            changes["text"] = _optional_str(params["text"])
        if "blocks" in params:
            changes["blocks"] = _blocks(params)
        if "metadata" in params:
            changes["metadata"] = _metadata(params)
        if not changes.get("text") and not changes.get("blocks"):
            raise _SlackError("no_text")
        with self._lock:
            for index, post in enumerate(self._posts):
                if post.channel == channel and post.ts == ts:
                    self._posts[index] = updated = replace(post, **changes)
                    break
            else:
                raise _SlackError("message_not_found")
        message = _message(updated, with_metadata=True)
        return {"channel": channel, "ts": updated.ts, "text": message["text"], "message": message}

    def _history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _channel(params)
        oldest = _ts_param(params.get("oldest"), "invalid_ts_oldest") or Decimal(0)
        latest = _ts_param(params.get("latest"), "invalid_ts_latest")
        before = _decode_cursor(params.get("cursor"))
        inclusive = _flag(params.get("inclusive"))
        limit = _limit(params.get("limit"))

        def wanted(ts: Decimal) -> bool:
            above = ts >= oldest if inclusive else ts > oldest
            below = latest is None or (ts <= latest if inclusive else ts < latest)
            return above and below and (before is None or ts < before)

        with self._lock:
            matching = [p for p in self._posts if p.channel == channel and wanted(Decimal(p.ts))]
        matching.sort(key=lambda post: Decimal(post.ts), reverse=True)
        page, rest = matching[:limit], matching[limit:]
        with_metadata = _flag(params.get("include_all_metadata"))
        result: dict[str, Any] = {
            "messages": [_message(post, with_metadata) for post in page],
            "has_more": bool(rest),
            "pin_count": 0,
        }
        if rest:
            result["response_metadata"] = {"next_cursor": _encode_cursor(page[-1].ts)}
        return result

    def _next_ts(self, channel: str) -> str:
        # Real Slack ts are epoch microseconds; they must also be unique per channel, which a
        # fixed test clock alone would not give, hence the bump past the channel's last one
        # issued. Only per channel: a post elsewhere must not push this channel's ts on.
        micros = (self._clock.now() - _EPOCH) // timedelta(microseconds=1)
        last = self._last_ts_us[channel] = max(micros, self._last_ts_us.get(channel, -1) + 1)
        return f"{last // 1_000_000}.{last % 1_000_000:06d}"


# -- parameter parsing ---------------------------------------------------------------------


def _auth_error(authorization: str | None) -> str | None:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return "not_authed"
    return None if token.strip().startswith("xoxb-") else "invalid_auth"


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _channel(params: dict[str, Any]) -> str:
    channel = params.get("channel")
    if not channel:
        raise _SlackError("channel_not_found")
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
        raise _SlackError(error) from None


def _blocks(params: dict[str, Any]) -> list[Any] | None:
    if params.get("blocks") in (None, ""):
        return None
    blocks = _json_value(params["blocks"], "invalid_blocks_format")
    if not isinstance(blocks, list):
        raise _SlackError("invalid_blocks_format")
    return blocks


def _metadata(params: dict[str, Any]) -> dict[str, Any] | None:
    if params.get("metadata") in (None, ""):
        return None
    metadata = _json_value(params["metadata"], "invalid_metadata_format")
    if not isinstance(metadata, dict):
        raise _SlackError("invalid_metadata_format")
    if not isinstance(metadata.get("event_type"), str) or not isinstance(
        metadata.get("event_payload"), dict
    ):
        raise _SlackError("invalid_metadata_schema")
    return metadata


def _ts_param(value: Any, error: str) -> Decimal | None:
    # Decimal, not float: bounds are exclusive, and a float can round a ts onto its neighbour.
    if value in (None, ""):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        raise _SlackError(error) from None


def _limit(value: Any) -> int:
    if value in (None, ""):
        return 100
    try:
        limit = int(value)
    except (TypeError, ValueError):
        raise _SlackError("invalid_limit") from None
    return 100 if limit <= 0 else min(limit, 999)


def _encode_cursor(ts: str) -> str:
    return base64.b64encode(f"next_ts:{ts}".encode()).decode()


def _decode_cursor(value: Any) -> Decimal | None:
    if value in (None, ""):
        return None
    try:
        prefix, _, ts = base64.b64decode(str(value), validate=True).decode().partition(":")
        if prefix != "next_ts":
            raise ValueError(prefix)
        return Decimal(ts)
    except (binascii.Error, UnicodeDecodeError, ValueError, InvalidOperation):
        raise _SlackError("invalid_cursor") from None


def _message(post: RecordedPost, with_metadata: bool) -> dict[str, Any]:
    message: dict[str, Any] = {
        "type": "message",
        "user": BOT_USER_ID,
        "bot_id": BOT_ID,
        "ts": post.ts,
        "text": post.text or "",
    }
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


class _RequestHandler(BaseHTTPRequestHandler):
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
            self._send(standin._control(self.command, url.path, body))
            return
        if not url.path.startswith("/api/"):
            self._send(_reply({"ok": False, "error": "not_found"}, 404))
            return

        params: dict[str, Any] = dict(parse_qsl(url.query, keep_blank_values=True))
        try:
            params.update(_decode_body(body, self.headers.get("Content-Type", "")))
        except ValueError:
            self._send(_reply({"ok": False, "error": "invalid_json"}))
            return
        method = url.path.removeprefix("/api/")
        reply = standin._dispatch(method, params, self.headers.get("Authorization"))
        if reply.drop:
            self.close_connection = True
            return
        if reply.delay:
            standin._linger(reply.delay)
        self._send(reply)

    def _send(self, reply: _Reply) -> None:
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up first, which is what the slow fault is for; not our error.
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        _log.debug("%s " + format, self.address_string(), *args)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Local stand-in for the Slack Web API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument(
        "--latency-ms", type=float, default=0.0, help="added to every API call's answer"
    )
    args = parser.parse_args(argv)

    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    standin = SlackStandIn(host=args.host, port=args.port, latency=args.latency_ms / 1000.0).start()
    logs.info("slack stand-in listening", url=standin.url, control_url=standin.control_url)
    try:
        done.wait()
    finally:
        standin.stop()


if __name__ == "__main__":
    main()
