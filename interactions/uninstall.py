"""The Events API's word that the app lost its workspace: `app_uninstalled`, or
`tokens_revoked` naming a bot token. It stores `slack_installation/{team_id}` as
`uninstalled` (core.documents.slack_installation); from the next pass on nothing is posted to
Slack and due Slack occurrences end `failed` with `app_uninstalled` (processor.installation),
until a pass sees the app installed again."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core import logs
from core.documents.slack_installation import record_uninstalled
from core.runtime import Runtime


def app_uninstalled(rt: Runtime, body: dict[str, Any]) -> None:
    team_id, event_id = body.get("team_id"), str(body.get("event_id"))
    if not isinstance(team_id, str) or not team_id:
        logs.warning("event ignored", reason="no team_id", event_id=event_id)
        return
    at = _event_time(body) or rt.clock.now()
    if not record_uninstalled(rt.db, team_id, at, event_id):
        logs.info("event ignored", reason="older than the stored state", event_id=event_id)
        return
    logs.warning(
        "Slack app uninstalled: nothing is posted to Slack until it is installed again",
        team_id=team_id,
        event_id=event_id,
        event_type=_type(body),
    )


def tokens_revoked(rt: Runtime, body: dict[str, Any]) -> None:
    """Uninstalled when the revoked tokens include a bot token (a person's own token,
    `tokens.oauth`, is not ours to post with)."""
    event = body.get("event")
    tokens = event.get("tokens") if isinstance(event, dict) else None
    bots = tokens.get("bot") if isinstance(tokens, dict) else None
    if not bots:
        logs.info("event ignored", reason="no bot token revoked", event_id=body.get("event_id"))
        return
    app_uninstalled(rt, body)


def _event_time(body: dict[str, Any]) -> datetime | None:
    seconds = body.get("event_time")
    if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds <= 0:
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _type(body: dict[str, Any]) -> Any:
    event = body.get("event")
    return event.get("type") if isinstance(event, dict) else None
