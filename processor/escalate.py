"""Escalation: a delivery that ended `failed` or `unconfirmed` is never quiet.

Each one emits exactly one structured ERROR line and, when ALERT_CHANNEL is set, one alert
post there, in words: what it is (its id, destination by name, schedule in words), the
occurrence in the schedule's own zone, and the error catalog's title and action
(core.error_help), with the code and detail for the operator. An alert is best-effort and
never escalated itself: its own failure is a WARNING line, so alerts cannot alert about
alerts."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.api_core.exceptions import GoogleAPICallError

from core import logs
from core.directory import display_names
from core.documents.messages import MessageField
from core.documents.subjects import SubjectField
from core.error_help import help_for
from core.errors import DocumentError
from core.platform import Outcome
from core.rotation import Rotation
from core.runtime import Runtime
from core.schedule_words import draft_schedule_text, moment_text, rotation_schedule_text
from core.store import MESSAGES, ROTATIONS
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
    text = _alert_text(rt, subject, status, occurrence_at, error_code, detail)
    alert_id = f"alert:{fields.get('delivery_id') or rotation_id or event_id or message_id}"
    result = rt.slack.post(channel, text, alert_id)
    if result.outcome is not Outcome.DELIVERED:
        logs.warning(
            "alert post failed; not escalated further",
            **subject,
            alert_channel=channel,
            error_code=result.code,
        )


_DESTINATIONS = (SubjectField.CHANNEL, SubjectField.USER, SubjectField.TEAMS_CONVERSATION)
_TIMEZONE = MessageField.TIMEZONE  # a rotation's has the same name (RotationField)


def _alert_text(
    rt: Runtime,
    subject: dict[str, Any],
    status: str,
    occurrence_at: datetime | None,
    error_code: str | None,
    detail: str,
) -> str:
    """The alert post: ":warning: Scheduled message `m1` to #general (Every weekday at 9:30
    AM (America/New_York)) is *failed* for Tue 8 Dec 2026 at 9:30 AM (America/New_York).
    The app is not in #general: Invite the app: ... (`not_in_channel`: detail)"."""
    data = _subject_document(rt, subject)
    destination = next((data[f] for f in _DESTINATIONS if isinstance(data.get(f), str)), None)
    name = _name(rt, destination)
    timezone = data.get(_TIMEZONE)
    timezone = timezone if isinstance(timezone, str) else "UTC"
    words = _schedule_words(subject, data)
    entry = help_for(error_code).filled(name or "the conversation")
    if "rotation_id" in subject:
        what = f"Rotation `{escape(subject['rotation_id'])}`"
    elif "event_id" in subject:
        what = f"Event `{escape(str(subject['event_id']))}`"
    else:
        what = f"Scheduled message `{escape(str(subject.get('message_id')))}`"
    what += f" to {escape(name)}" if name else ""
    what += f" ({escape(words)})" if words else ""
    when = _moment(occurrence_at, timezone)
    return (
        f":warning: {what} is *{escape(status)}* for {escape(when)}. "
        f"{escape(entry.title)}: {escape(entry.action)} "
        f"(`{escape(error_code or 'unknown')}`: {escape(detail)})"
    )


def _subject_document(rt: Runtime, subject: dict[str, Any]) -> dict[str, Any]:
    """The message's or rotation's stored fields (an event's alert has none); {} when they
    cannot be read: an alert is best-effort and says what it knows."""
    if "rotation_id" in subject:
        ref = rt.db.collection(ROTATIONS).document(str(subject["rotation_id"]))
    elif subject.get("message_id") is not None:
        ref = rt.db.collection(MESSAGES).document(str(subject["message_id"]))
    else:
        return {}
    try:
        return ref.get().to_dict() or {}
    except GoogleAPICallError:
        return {}


def _schedule_words(subject: dict[str, Any], data: dict[str, Any]) -> str | None:
    if not data:
        return None
    if "rotation_id" not in subject:
        return draft_schedule_text(data)
    try:
        return rotation_schedule_text(Rotation.from_document(str(subject["rotation_id"]), data))
    except DocumentError:
        return None


def _name(rt: Runtime, destination: str | None) -> str | None:
    """The destination as people know it ("#general", "@Ana Lima"), else its id."""
    if destination is None:
        return None
    try:
        names: dict[str, str] = display_names(rt.db, [destination])
    except GoogleAPICallError:
        return destination
    return names.get(destination, destination)


def _moment(occurrence_at: datetime | None, timezone: str) -> str:
    if occurrence_at is None:
        return "an unknown occurrence"
    try:
        return moment_text(occurrence_at, timezone)
    except DocumentError:  # a zone the document misspells: the instant in UTC
        return moment_text(occurrence_at, "UTC")
