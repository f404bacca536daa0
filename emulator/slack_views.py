"""Modals, people's time zones and ephemeral messages in the Slack stand-in: `views.open`,
`views.update`, `users.info`, `chat.postEphemeral`, each recorded for tests to read.

views.open spends a trigger id the stand-in issued (emulator/slack_triggers.py: once,
within 3 s on the stand-in's clock; `invalid_trigger_id`, `exchanged_trigger_id`,
`expired_trigger_id` otherwise) and remembers the view as open for that person, which is
what `/_control/submit` submits; views.update replaces it."""

from __future__ import annotations

import copy
import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from core.clock import Clock
from emulator.slack_limits import SlackError

DEFAULT_TZ = "America/Los_Angeles"  # Slack's own samples' zone

Handler = Callable[[dict[str, Any]], dict[str, Any]]
Spend = Callable[[str], str]  # a trigger id -> the user it was issued to, or SlackError
Remember = Callable[[str, dict[str, Any]], None]  # the view now open for a user


@dataclass(frozen=True)
class Ephemeral:
    channel: str
    user: str
    text: str | None
    blocks: list[Any] | None


class Views:
    def __init__(self, clock: Clock, spend: Spend, remember: Remember) -> None:
        self._clock = clock
        self._spend = spend
        self._remember = remember
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        # By view id: the person it is open for, and the view as last opened or updated.
        self._views: dict[str, tuple[str, dict[str, Any]]] = {}
        self._opened: list[dict[str, Any]] = []
        self._updated: list[dict[str, Any]] = []
        self._ephemerals: list[Ephemeral] = []
        self._zones: dict[str, str] = {}

    def methods(self) -> dict[str, Handler]:
        return {
            "views.open": self._open,
            "views.update": self._update,
            "users.info": self._user_info,
            "chat.postEphemeral": self._post_ephemeral,
        }

    # -- what tests set and read ---------------------------------------------------------

    def set_timezone(self, user: str, tz: str) -> None:
        ZoneInfo(tz)  # a name Slack could answer
        with self._lock:
            self._zones[user] = tz

    def opened(self) -> list[dict[str, Any]]:
        """Each view as views.open was given it, in order."""
        with self._lock:
            return copy.deepcopy(self._opened)

    def updated(self) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._updated)

    def ephemerals(self) -> list[Ephemeral]:
        with self._lock:
            return list(self._ephemerals)

    def reset(self) -> None:
        with self._lock:
            self._views.clear()
            self._opened.clear()
            self._updated.clear()
            self._ephemerals.clear()
            self._zones.clear()

    # -- Slack methods -------------------------------------------------------------------

    def _open(self, params: dict[str, Any]) -> dict[str, Any]:
        view = _view(params)
        user = self._spend(str(params.get("trigger_id") or ""))
        with self._lock:
            view_id = f"VSTANDIN{next(self._numbers):04d}"
            stored = {**view, "id": view_id}
            self._views[view_id] = (user, stored)
            self._opened.append(copy.deepcopy(view))
        self._remember(user, stored)
        return {"view": copy.deepcopy(stored)}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        view = _view(params)
        view_id = str(params.get("view_id") or "")
        with self._lock:
            if view_id not in self._views:
                raise SlackError("not_found")
            user = self._views[view_id][0]
            stored = {**view, "id": view_id}
            self._views[view_id] = (user, stored)
            self._updated.append(copy.deepcopy(view))
        self._remember(user, stored)
        return {"view": copy.deepcopy(stored)}

    def _user_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("user") or "")
        if not user.startswith(("U", "W")):
            raise SlackError("user_not_found")
        with self._lock:
            tz = self._zones.get(user, DEFAULT_TZ)
        offset = self._clock.now().astimezone(ZoneInfo(tz)).utcoffset() or timedelta(0)
        label = self._clock.now().astimezone(ZoneInfo(tz)).tzname() or tz
        return {
            "user": {
                "id": user,
                "tz": tz,
                "tz_label": label,
                "tz_offset": int(offset.total_seconds()),
            }
        }

    def _post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, user = str(params.get("channel") or ""), str(params.get("user") or "")
        if not channel:
            raise SlackError("channel_not_found")
        if not user:
            raise SlackError("user_not_in_channel")
        text = params.get("text")
        blocks = params.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        if not text and not blocks:
            raise SlackError("no_text")
        with self._lock:
            self._ephemerals.append(Ephemeral(channel, user, text, blocks))
        return {"message_ts": f"{self._clock.now().timestamp():.6f}"}


def _view(params: dict[str, Any]) -> dict[str, Any]:
    view = params.get("view")
    if isinstance(view, str):
        try:
            view = json.loads(view)
        except ValueError:
            raise SlackError("invalid_arguments") from None
    if not isinstance(view, dict) or view.get("type") not in ("modal", "home"):
        raise SlackError("invalid_arguments")
    return view
