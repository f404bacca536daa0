"""Escalation: a delivery that ended `failed` or `unconfirmed` is never quiet.

Each one emits exactly one structured ERROR line and, when ALERT_CHANNEL is set, one alert
post there. An alert is best-effort and never escalated itself: its own failure is a
WARNING line, so alerts cannot alert about alerts."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core import logs
from core.platform import Outcome
from core.runtime import Runtime
from formatting.slack_text import escape


def escalate(
    rt: Runtime,
    *,
    status: str,
    message_id: str | None = None,
    rotation_id: str | None = None,
    event_id: str | None = None,
    occurrence_at: datetime | None,
    error_code: str | None,
    detail: str,
    **fields: Any,
) -> None:
    if rotation_id is not None:
        subject: dict[str, Any] = {"rotation_id": rotation_id}
    elif event_id is not None:
        subject = {"event_id": event_id}
    else:
        subject = {"message_id": message_id}
    logs.error(
        f"delivery {status}",
        **subject,
        occurrence_at=occurrence_at,
        status=status,
        error_code=error_code,
        error_message=detail,
        **fields,
    )
    channel = rt.settings.alert_channel
    if not channel:
        return
    when = occurrence_at.isoformat() if occurrence_at else "unknown occurrence"
    if rotation_id:
        what = f"Rotation `{escape(rotation_id)}`"
    elif event_id:
        what = f"Event `{escape(event_id)}`"
    else:
        what = f"Scheduled message `{escape(str(message_id))}`"
    text = (
        f":warning: {what} ({escape(when)}) is *{status}*: "
        f"`{escape(error_code or 'unknown')}` {escape(detail)}"
    )
    alert_id = f"alert:{fields.get('delivery_id') or rotation_id or event_id or message_id}"
    result = rt.slack.post(channel, text, alert_id)
    if result.outcome is not Outcome.DELIVERED:
        logs.warning(
            "alert post failed; not escalated further",
            **subject,
            alert_channel=channel,
            error_code=result.code,
        )
