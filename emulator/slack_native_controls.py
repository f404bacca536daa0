"""The stand-in sending what Slack sends an app's Request URL when a person acts in Slack: a
slash command, a message shortcut, a view submission, an Events API callback, a
`url_verification` (bodies: emulator/slack_native.py), each signed with the app's signing
secret at the stand-in's clock, to the URL set by `set_interactivity` (one Request URL for
interactivity, slash commands and events, as the `interactions` target takes them all).

A slash command and a shortcut carry a trigger id issued to that person (views.open accepts
it once within 3 s: emulator/slack_triggers.py); a submission submits the view last opened
for the person, and what the app answers moves it on as Slack would: `errors` keeps it
open, `update`/`push` show the answered view, anything else closes it.

Each send answers {"status": the target's HTTP status, "answer": its JSON body, or its text
("" when empty)}, plus `trigger_id` (command, shortcut) or `event_id` (event)."""

from __future__ import annotations

import itertools
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from emulator.slack_clicks import signed_headers
from emulator.slack_native import (
    app_home_opened,
    command_body,
    content_type,
    event_body,
    event_callback,
    message_shortcut,
    payload_body,
    retry_headers,
    slash_command,
    url_verification,
    view_submission,
)
from emulator.slack_triggers import OpenedViews, Triggers

Action = Callable[[dict[str, Any]], dict[str, Any]]


class NativeHost(Protocol):
    """What the stand-in lends: its clock, the Request URL, response URLs and messages."""

    def now(self) -> datetime: ...

    def request_url(self) -> tuple[str, str]: ...

    def response_url(self) -> str: ...

    def message(self, ts: str | None, channel: str | None) -> tuple[str, dict[str, Any]]: ...


class NativeRequests:
    def __init__(self, host: NativeHost) -> None:
        self._host = host
        self.triggers = Triggers()
        self.views = OpenedViews()
        self._event_numbers = itertools.count(1)

    def command(self, command: str, text: str, *, user: str, channel: str) -> dict[str, Any]:
        trigger_id = self.triggers.issue(user, self._host.now())
        fields = slash_command(
            command,
            text,
            user=user,
            channel=channel,
            trigger_id=trigger_id,
            response_url=self._host.response_url(),
        )
        return {**self._send(command_body(fields)), "trigger_id": trigger_id}

    def shortcut(
        self,
        *,
        user: str,
        ts: str | None = None,
        channel: str | None = None,
        callback_id: str = "schedule_copy",
    ) -> dict[str, Any]:
        """`user` choosing the shortcut on message `ts` (default: the latest message, in
        `channel` when given)."""
        in_channel, message = self._host.message(ts, channel)
        trigger_id = self.triggers.issue(user, self._host.now())
        payload = message_shortcut(
            message,
            user=user,
            channel=in_channel,
            trigger_id=trigger_id,
            response_url=self._host.response_url(),
            callback_id=callback_id,
        )
        return {**self._send(payload_body(payload)), "trigger_id": trigger_id}

    def submit(self, *, user: str, values: dict[str, Any]) -> dict[str, Any]:
        """`user` submitting the view last opened for them with `values` by action id."""
        view = self.views.get(user)
        if view is None:
            raise ValueError(f"no view is open for {user}")
        trigger_id = self.triggers.issue(user, self._host.now())
        view_id = str(view.get("id") or "V0001")
        payload = view_submission(view, values, user=user, trigger_id=trigger_id, view_id=view_id)
        sent = self._send(payload_body(payload))
        self._after_submit(user, sent)
        return sent

    def event(
        self,
        inner: dict[str, Any],
        *,
        event_id: str | None = None,
        retry_num: int | None = None,
        retry_reason: str = "http_timeout",
    ) -> dict[str, Any]:
        """Slack posting the Events API callback of `inner` (`event_id` given again and a
        `retry_num`: its retry). An `app_home_opened` given only its user gets Slack's
        other fields."""
        now = self._host.now()
        event_ts = f"{now.timestamp():.6f}"
        if inner.get("type") == "app_home_opened" and isinstance(inner.get("user"), str):
            inner = {**app_home_opened(inner["user"], event_ts), **inner}
        inner = {"event_ts": event_ts, **inner}
        event_id = event_id or f"Ev{next(self._event_numbers):08d}"
        envelope = event_callback(inner, event_id=event_id, event_time=int(now.timestamp()))
        headers = retry_headers(retry_num, retry_reason)
        return {**self._send(event_body(envelope), headers), "event_id": event_id}

    def url_verification(self, challenge: str) -> dict[str, Any]:
        return self._send(event_body(url_verification(challenge)))

    def clear(self) -> None:
        self.triggers.clear()
        self.views.clear()

    def _after_submit(self, user: str, sent: dict[str, Any]) -> None:
        answer = sent["answer"] if isinstance(sent["answer"], dict) else {}
        action = answer.get("response_action")
        if sent["status"] != 200 or action == "errors":
            return
        if action in ("update", "push") and isinstance(answer.get("view"), dict):
            self.views.remember(user, answer["view"])
        else:
            self.views.close(user)

    def _send(self, body: bytes, extra: dict[str, str] | None = None) -> dict[str, Any]:
        url, secret = self._host.request_url()
        headers = signed_headers(secret, body, int(self._host.now().timestamp()))
        headers["Content-Type"] = content_type(body)
        headers.update(extra or {})
        # (An http(s) URL: set_interactivity checks it.)
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
                return {"status": int(answer.status), "answer": _answer(answer.read())}
        except urllib.error.HTTPError as error:
            return {"status": int(error.code), "answer": _answer(error.read())}
        except (urllib.error.URLError, TimeoutError) as error:
            reason = getattr(error, "reason", error)
            raise ValueError(f"the Request URL {url} did not answer: {reason}") from None

    def control_actions(self) -> dict[str, Action]:
        """The HTTP control endpoints (docs: emulator/slack_standin.py)."""

        def command(spec: dict[str, Any]) -> dict[str, Any]:
            _fields(spec, {"user", "channel"}, {"command", "text"})
            name, text = str(spec.get("command", "/schedule")), str(spec.get("text", ""))
            return self.command(name, text, user=str(spec["user"]), channel=str(spec["channel"]))

        def shortcut(spec: dict[str, Any]) -> dict[str, Any]:
            _fields(spec, {"user"}, {"ts", "channel", "callback_id"})
            ts, channel = spec.get("ts"), spec.get("channel")
            return self.shortcut(
                user=str(spec["user"]),
                ts=None if ts is None else str(ts),
                channel=None if channel is None else str(channel),
                callback_id=str(spec.get("callback_id", "schedule_copy")),
            )

        def submit(spec: dict[str, Any]) -> dict[str, Any]:
            _fields(spec, {"user"}, {"values"})
            values = spec.get("values", {})
            if not isinstance(values, dict):
                raise ValueError("values is an object: action_id -> value")
            return self.submit(user=str(spec["user"]), values=values)

        def event(spec: dict[str, Any]) -> dict[str, Any]:
            _fields(spec, {"event"}, {"event_id", "retry_num", "retry_reason"})
            inner, retry_num = spec["event"], spec.get("retry_num")
            if not isinstance(inner, dict) or not isinstance(inner.get("type"), str):
                raise ValueError("event is an object with a type")
            if retry_num is not None and (type(retry_num) is not int or retry_num < 1):
                raise ValueError(f"retry_num is a whole number from 1, got {retry_num!r}")
            event_id = spec.get("event_id")
            return self.event(
                inner,
                event_id=None if event_id is None else str(event_id),
                retry_num=retry_num,
                retry_reason=str(spec.get("retry_reason", "http_timeout")),
            )

        def verification(spec: dict[str, Any]) -> dict[str, Any]:
            _fields(spec, {"challenge"}, set())
            return self.url_verification(str(spec["challenge"]))

        return {
            "/_control/command": command,
            "/_control/shortcut": shortcut,
            "/_control/submit": submit,
            "/_control/event": event,
            "/_control/url_verification": verification,
        }


def _answer(body: bytes) -> Any:
    text = body.decode("utf-8", "replace")
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _fields(spec: dict[str, Any], required: set[str], optional: set[str]) -> None:
    missing, unknown = required - set(spec), set(spec) - required - optional
    if missing or unknown:
        raise ValueError(
            f"missing fields: {', '.join(sorted(missing)) or '-'};"
            f" unknown fields: {', '.join(sorted(unknown)) or '-'}"
        )
