"""The contract suite's view of a chat platform: one small facade over the Slack stand-in or
the Teams stand-in, so every promise of tests/contract/ is read and injected the same way on
both. A test names a conversation as a Slack channel id (`C0123ABCD`); `where` gives the
stored fields that send a subject there on this platform (on Teams: a channel of one team,
the app installed through the `teams` target, Graph's RSC permission granted).

What a test can do to a send, on either platform:
- `lost_after_record`: the post is recorded, then its answer is lost (connection dropped);
- `slow_past_timeout`: the post is recorded, its answer comes after the client's timeout;
- `server_error_before_record`: a 503 for a post that was never recorded;
- `history_unreadable`: reading the conversation back is refused for good (Slack
  `missing_scope`, Graph 403 without the RSC permission);
- `rate_limited_once`: one 429 with `Retry-After`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from emulator.slack_standin import Fault as SlackFault
from emulator.slack_standin import SlackStandIn
from emulator.teams_faults import Fault as TeamsFault
from emulator.teams_graph import CHANNEL_PERMISSION
from emulator.teams_standin import TeamsStandIn
from tests.fixtures.rotations import ALICE, BOB, CAROL
from tests.fixtures.slack import HISTORY
from tests.fixtures.teams_inbound import install

TEAM = "19:contract-team@thread.tacv2"
AAD_GROUP = "5a6b7c8d-0000-4000-8000-0000000c0de5"


@dataclass(frozen=True)
class Posted:
    """One post of ours, whatever the platform: its delivery id, the platform's id of it
    (Slack's `ts`, Teams' activity id), where it went and its text (a Teams card's
    `summary`, the text Teams shows where the card cannot be)."""

    delivery_id: str | None
    post_id: str
    conversation: str
    text: str | None


class Chat(Protocol):
    platform: str
    # The ledger's field for the post's id on this platform.
    post_id_field: str
    # The error code an unreadable history settles an occurrence `unconfirmed` with.
    unreadable_code: str
    # A rotation's members, as this platform names people.
    people: tuple[str, ...]

    def where(self, channel: str) -> dict[str, Any]: ...

    def unparseable(self) -> tuple[dict[str, Any], str]: ...

    def posts(self) -> list[Posted]: ...

    def delivery_ids(self) -> list[str | None]: ...

    def lost_after_record(self) -> None: ...

    def slow_past_timeout(self) -> None: ...

    def server_error_before_record(self) -> None: ...

    def history_unreadable(self) -> None: ...

    def rate_limited_once(self, retry_after: int) -> None: ...

    def clear_faults(self) -> None: ...


class SlackChat:
    platform = "slack"
    post_id_field = "slack_ts"
    unreadable_code = "missing_scope"
    people: tuple[str, ...] = (ALICE, BOB, CAROL)

    def __init__(self, slack: SlackStandIn) -> None:
        self.slack = slack

    def where(self, channel: str) -> dict[str, Any]:
        return {"channel": channel}

    def unparseable(self) -> tuple[dict[str, Any], str]:
        """Stored fields the processor's own parsing rejects, and its code for them."""
        return {"channel": "not-a-channel"}, "invalid_channel"

    def posts(self) -> list[Posted]:
        return [Posted(p.delivery_id, p.ts, p.channel, p.text) for p in self.slack.posts()]

    def delivery_ids(self) -> list[str | None]:
        return self.slack.delivery_ids()

    def lost_after_record(self) -> None:
        self.slack.inject(SlackFault(kind="drop_after_receipt", times=1))

    def slow_past_timeout(self) -> None:
        self.slack.inject(SlackFault(kind="slow", delay=1.5, times=1))

    def server_error_before_record(self) -> None:
        self.slack.inject(SlackFault(kind="server_error", status=503, times=1))

    def history_unreadable(self) -> None:
        self.slack.inject(SlackFault(kind="error", code="missing_scope", method=HISTORY))

    def rate_limited_once(self, retry_after: int) -> None:
        self.slack.inject(SlackFault("rate_limit", retry_after=retry_after, times=1))

    def clear_faults(self) -> None:
        self.slack.clear_faults()


class TeamsChat:
    platform = "teams"
    post_id_field = "activity_id"
    unreadable_code = "Forbidden"
    people: tuple[str, ...] = ("29:1alice", "29:1bob", "29:1carol")

    def __init__(self, standin: TeamsStandIn, target: Any, slack: SlackStandIn) -> None:
        self.standin, self.target, self.slack = standin, target, slack
        self._installed: dict[str, str] = {}
        self._readable = True
        # The suite's own pacing is the processor's (processor.channel_slots); the clock
        # stands still here, so Teams' per-second limits would turn every race into 429s.
        standin.set_rate_limit(None, None)

    def where(self, channel: str) -> dict[str, Any]:
        return {"channel": None, "teams_conversation": self.conversation(channel)}

    def conversation(self, channel: str) -> str:
        """The Teams channel standing for the Slack channel id `channel`: one of the
        contract team's, installed and readable through Graph."""
        if channel not in self._installed:
            conversation = f"19:{channel.lower()}@thread.tacv2"
            self.standin.channel(conversation, name=channel, team_id=TEAM, aad_group_id=AAD_GROUP)
            assert set(install(self.target, self.standin, conversation)) == {200}
            self.standin.grant(conversation, CHANNEL_PERMISSION, granted=self._readable)
            self._installed[channel] = conversation
        return self._installed[channel]

    def unparseable(self) -> tuple[dict[str, Any], str]:
        return {"teams_conversation": "not a/conversation"}, "invalid_teams_conversation"

    def posts(self) -> list[Posted]:
        assert self.slack.posts() == []  # a Teams subject never reaches Slack
        return [
            Posted(a.delivery_id, a.id, a.conversation_id, a.activity.get("summary"))
            for a in self.standin.activities()
            if a.from_app_id == self.standin.app_id
        ]

    def delivery_ids(self) -> list[str | None]:
        return [p.delivery_id for p in self.posts()]

    def lost_after_record(self) -> None:
        self.standin.inject(TeamsFault("drop", after_record=True, times=1))

    def slow_past_timeout(self) -> None:
        self.standin.inject(TeamsFault("timeout", delay=1.5, after_record=True, times=1))

    def server_error_before_record(self) -> None:
        self.standin.inject(TeamsFault("server_error", status=503, times=1))

    def history_unreadable(self) -> None:
        """The team's resource-specific consent taken back: every Graph read is a 403."""
        self._readable = False
        for conversation in self._installed.values():
            self.standin.grant(conversation, CHANNEL_PERMISSION, granted=False)

    def rate_limited_once(self, retry_after: int) -> None:
        self.standin.inject(TeamsFault("rate_limit", retry_after=retry_after, times=1))

    def clear_faults(self) -> None:
        """Faults spent and permissions given back."""
        self.standin.clear_faults()
        self._readable = True
        for conversation in self._installed.values():
            self.standin.grant(conversation, CHANNEL_PERMISSION)
