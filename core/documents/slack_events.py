"""`slack_events/{event_id}`: an Events API `event_callback` already taken (ours). Created
once, by the `interactions` target, before the event is acted on: the create is what makes a
retry or a duplicate delivery of the same event change nothing. The collection's TTL policy
on `expires_at` deletes it a day later (Slack retries an event for about an hour)."""

from __future__ import annotations

import enum


class SlackEventField(enum.StrEnum):
    TYPE = "type"  # the inner event's type (`app_uninstalled`, ...)
    TEAM_ID = "team_id"
    RECEIVED_AT = "received_at"
    EXPIRES_AT = "expires_at"
