"""Channel state in the Slack stand-in, and the errors Slack answers from it.

A channel is known or not, archived or not, and the bot is a member or not; a channel never
set is known, not archived, with the bot in it. Codes, from chat.postMessage's and
conversations.history's reference (slackapi/slack-api-specs web-api; docs.slack.dev/reference/
methods): `channel_not_found` for an unknown channel, `is_archived` for a post to an archived
one, `not_in_channel` for a post or a history read by a bot that is not a member (the history
case is what Slack answers bots in practice, e.g. slackapi/deno-slack-sdk#128: the
channels:history scope covers only conversations the bot is in). Slack documents no error for
reading an archived channel's history, and archived channels keep their history readable to
members, so a member reads an archived channel as any other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChannelState:
    exists: bool = True
    archived: bool = False
    member: bool = True

    def post_error(self) -> str | None:
        if not self.exists:
            return "channel_not_found"
        if self.archived:
            return "is_archived"
        return None if self.member else "not_in_channel"

    def read_error(self) -> str | None:
        if not self.exists:
            return "channel_not_found"
        return None if self.member else "not_in_channel"
