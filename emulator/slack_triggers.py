"""What a person's interactions leave with the stand-in: the trigger ids issued to them (a
slash command, a shortcut) and the view last opened for them (what `/_control/submit`
submits).

A trigger id lets the app open one modal for that person within 3 s of the interaction that
carried it (docs.slack.dev, interactivity/handling-user-interaction: "trigger_id ... will
expire in 3 seconds"; views.open errors `invalid_trigger_id`, `exchanged_trigger_id` (already
used), `expired_trigger_id`)."""

from __future__ import annotations

import copy
import itertools
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from emulator.slack_limits import SlackError

TRIGGER_LIFETIME = timedelta(seconds=3)


@dataclass
class _Trigger:
    user: str
    issued_at: datetime
    spent: bool = False


class Triggers:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._issued: dict[str, _Trigger] = {}
        self._numbers = itertools.count(1)

    def issue(self, user: str, now: datetime) -> str:
        """A fresh trigger id for `user`, shaped as Slack's (`<n>.<epoch>.<hex>`)."""
        with self._lock:
            number = next(self._numbers)
            trigger_id = f"{number}.{int(now.timestamp())}.{number:032x}"
            self._issued[trigger_id] = _Trigger(user, now)
        return trigger_id

    def spend(self, trigger_id: str, now: datetime) -> str:
        """The user `trigger_id` was issued to, once, within its 3 s; SlackError with
        Slack's code otherwise."""
        with self._lock:
            trigger = self._issued.get(trigger_id)
            if trigger is None:
                raise SlackError("invalid_trigger_id")
            if trigger.spent:
                raise SlackError("exchanged_trigger_id")
            if now - trigger.issued_at > TRIGGER_LIFETIME:
                raise SlackError("expired_trigger_id")
            trigger.spent = True
            return trigger.user

    def clear(self) -> None:
        with self._lock:
            self._issued.clear()


class OpenedViews:
    """The view last opened (or updated) for each person, until it closes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._views: dict[str, dict[str, Any]] = {}

    def remember(self, user: str, view: dict[str, Any]) -> None:
        with self._lock:
            self._views[user] = copy.deepcopy(view)

    def get(self, user: str) -> dict[str, Any] | None:
        with self._lock:
            view = self._views.get(user)
            return None if view is None else copy.deepcopy(view)

    def close(self, user: str) -> None:
        with self._lock:
            self._views.pop(user, None)

    def clear(self) -> None:
        with self._lock:
            self._views.clear()
