"""The Teams stand-in's side of talking to a bot: sign an activity as Bot Framework does,
POST it to the bot's endpoint, and build the install, remove and click activities Teams sends
(emulator/teams_signer.py, emulator/teams_inbound.py name the sources).

A mixin of TeamsStandIn: it reads the stand-in's keys, conversations and posted activities.
"""

from __future__ import annotations

import abc
import json
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from core.clock import Clock
from emulator.teams_connector import Activities
from emulator.teams_conversations import Conversation
from emulator.teams_inbound import Inbound
from emulator.teams_signer import SigningKeys

BOT_NAME = "scheduler-bot"


@dataclass(frozen=True)
class Delivered:
    """What the bot answered an inbound activity: HTTP status and body (JSON if it was)."""

    status: int
    body: Any


class BotDeliveries(abc.ABC):
    app_id: str
    _lock: threading.RLock
    _keys: SigningKeys
    _activities: Activities
    _clock: Clock

    @property
    @abc.abstractmethod
    def service_url(self) -> str: ...

    @abc.abstractmethod
    def conversation(self, conversation_id: str) -> Conversation: ...

    @abc.abstractmethod
    def set_roster(
        self, conversation_id: str, *, installed: bool | None = None, blocked: bool | None = None
    ) -> None: ...

    @property
    def current_kid(self) -> str:
        with self._lock:
            return self._keys.current_kid

    def rotate_keys(self) -> str:
        """A new signing key (kid); the old one leaves the published key set."""
        with self._lock:
            return self._keys.rotate()

    def sign(
        self,
        activity: dict[str, Any],
        *,
        audience: str | None = None,
        service_url: str | None = None,
        expired: bool = False,
        kid: str | None = None,
    ) -> str:
        """The Bot Framework JWT Teams would put on `activity` (aud: our app id, serviceurl:
        the activity's serviceUrl, unless given)."""
        with self._lock:
            return self._keys.sign(
                audience=self.app_id if audience is None else audience,
                service_url=str(activity.get("serviceUrl")) if service_url is None else service_url,
                expired=expired,
                kid=kid,
            )

    def deliver(
        self,
        target_url: str,
        activity: dict[str, Any],
        *,
        token: str | None = None,
        timeout: float = 15.0,
        **sign: Any,
    ) -> Delivered:
        """POST `activity` to the bot at `target_url` with `Authorization: Bearer <JWT>`
        (signed with `sign`'s options, or `token` as given) and return its answer."""
        bearer = token if token is not None else self.sign(activity, **sign)
        request = urllib.request.Request(  # noqa: S310  # the caller's own target URL
            target_url,
            data=json.dumps(activity).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {bearer}"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
                return Delivered(response.status, _body(response.read()))
        except urllib.error.HTTPError as error:
            return Delivered(error.code, _body(error.read()))

    def _inbound(self) -> Inbound:
        return Inbound(self.app_id, BOT_NAME, self.service_url)

    def install_activity(self, conversation_id: str) -> list[dict[str, Any]]:
        """What Teams sends when the app is installed in the conversation."""
        return self._inbound().install(self.conversation(conversation_id), self._clock.now())

    def remove_activity(self, conversation_id: str) -> list[dict[str, Any]]:
        """What Teams sends when the app is removed from the conversation."""
        return self._inbound().remove(self.conversation(conversation_id), self._clock.now())

    def invoke_action(
        self,
        activity_id: str,
        verb: str,
        data: Any,
        user: str,
        *,
        name: str | None = None,
        aad_object_id: str | None = None,
    ) -> dict[str, Any]:
        """A click by `user` (29:…) on `Action.Execute` `verb` of our card `activity_id`."""
        with self._lock:
            recorded = self._activities.find(activity_id)
        if recorded is None:
            raise KeyError(f"no activity {activity_id!r} was posted")
        sender: dict[str, Any] = {"id": user}
        if name is not None:
            sender["name"] = name
        if aad_object_id is not None:
            sender["aadObjectId"] = aad_object_id
        return self._inbound().invoke_action(
            self.conversation(recorded.conversation_id),
            activity_id,
            verb,
            data,
            sender,
            self._clock.now(),
        )

    def install(self, conversation_id: str, target_url: str) -> list[Delivered]:
        """Install the app: the bot joins the roster, and the bot is told, signed."""
        self.set_roster(conversation_id, installed=True)
        return [self.deliver(target_url, a) for a in self.install_activity(conversation_id)]

    def remove(self, conversation_id: str, target_url: str) -> list[Delivered]:
        """Remove the app: the bot leaves the roster, and the bot is told, signed."""
        self.set_roster(conversation_id, installed=False)
        return [self.deliver(target_url, a) for a in self.remove_activity(conversation_id)]


def _body(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode(errors="replace")
