"""`slack_installation/{team_id}` (CONTRACT.md, "Slack-native scheduling"): whether the Slack
app is installed in a workspace, as the Events API last said (`app_uninstalled`, or
`tokens_revoked` of a bot token) or a pass last saw (`auth.test` answering ok again: a
reinstall). Read by each pass (processor.installation); while a team is `uninstalled` and
`auth.test` fails, nothing is posted to Slack.

Each write lands only on the document as it was read (a create when absent, else an update
under its update time), and a write older than the one stored (`at`) changes nothing: an
uninstall and a pass seeing the reinstall never leave a mix, whichever lands first."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from core.documents.write import write_as_read
from core.store import SLACK_INSTALLATION

# Each retry follows a concurrent write of the same team's state; there are a handful.
_WRITE_TRIES = 5


class InstallationField(enum.StrEnum):
    STATUS = "status"  # an InstallationStatus
    AT = "at"  # when the state began: the event's `event_time`, or the pass's now
    EVENT_ID = "event_id"  # the event that uninstalled it (None: a pass saw the reinstall)


class InstallationStatus(enum.StrEnum):
    INSTALLED = "installed"
    UNINSTALLED = "uninstalled"


@dataclass(frozen=True)
class Installation:
    """One team's stored state, as read."""

    team_id: str
    status: str
    at: datetime | None
    update_time: Any


def uninstalled(db: firestore.Client) -> list[Installation]:
    """The teams whose app is uninstalled (one query; none in the usual case)."""
    status = FieldFilter(InstallationField.STATUS, "==", InstallationStatus.UNINSTALLED.value)
    query = db.collection(SLACK_INSTALLATION).where(filter=status)
    return [
        _installation(snap.id, snap.to_dict() or {}, snap.update_time) for snap in query.stream()
    ]


def record_uninstalled(db: firestore.Client, team_id: str, at: datetime, event_id: str) -> bool:
    """Stores `uninstalled` for `team_id` as of `at` (the event's time); False when the
    stored state is newer (a reinstall seen after it: it stays as it is)."""
    ref = db.collection(SLACK_INSTALLATION).document(team_id)
    fields = {
        InstallationField.STATUS.value: InstallationStatus.UNINSTALLED.value,
        InstallationField.AT.value: at,
        InstallationField.EVENT_ID.value: event_id,
    }
    for _ in range(_WRITE_TRIES):
        snap = ref.get()
        stored = _installation(team_id, snap.to_dict() or {}, snap.update_time)
        if snap.exists and stored.at is not None and stored.at > at:
            return False
        batch = db.batch()
        write_as_read(batch, ref, fields, snap.update_time if snap.exists else None)
        try:
            batch.commit()  # pragma: SYNCPOINT installation written
        except (AlreadyExists, FailedPrecondition):
            continue  # another write came in between: decide again on what it left
        return True
    raise RuntimeError(f"slack_installation/{team_id} kept changing under {_WRITE_TRIES} writes")


def reinstalled(db: firestore.Client, seen: Installation, at: datetime) -> bool:
    """Stores `installed` as of `at` over the uninstalled state `seen`, only if it is still
    the version read (False otherwise: an uninstall came in since, and stands)."""
    ref = db.collection(SLACK_INSTALLATION).document(seen.team_id)
    fields = {
        InstallationField.STATUS.value: InstallationStatus.INSTALLED.value,
        InstallationField.AT.value: at,
        InstallationField.EVENT_ID.value: None,
    }
    try:
        ref.update(fields, option=db.write_option(last_update_time=seen.update_time))
    except FailedPrecondition:
        return False
    return True


def _installation(team_id: str, data: dict[str, Any], update_time: Any) -> Installation:
    at = data.get(InstallationField.AT)
    return Installation(
        team_id,
        str(data.get(InstallationField.STATUS, "")),
        at if isinstance(at, datetime) else None,
        update_time,
    )
