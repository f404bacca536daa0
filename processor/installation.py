"""Whether the pass may post to Slack: the app's installation state, read once per pass.

While a workspace's `slack_installation/{team_id}` says `uninstalled` (interactions.uninstall
stores it from the Events API), each pass asks Slack once whether the token works again
(`auth.test`):
- it does not: the Slack transport is held (core.slack.SlackTransport.hold), so every due
  Slack occurrence of the pass ends `failed` with `app_uninstalled` (one ERROR line each,
  processor.escalate) and nothing is posted; Teams sends are not concerned;
- it does (the app was installed again, and the deployment has its token): the team is
  stored `installed` again, logged, and the pass posts as usual.
With no workspace uninstalled (the usual case) this is one query that finds nothing."""

from __future__ import annotations

from datetime import timedelta

from core import logs
from core.documents.slack_installation import Installation, reinstalled, uninstalled
from core.runtime import Runtime
from core.slack import APP_UNINSTALLED


def check_installation(rt: Runtime) -> None:
    """Holds or frees the Slack transport for this pass by the stored installation state; a
    state that cannot be read leaves the transport as the last pass left it."""
    try:
        teams = uninstalled(rt.db)
    except Exception as exc:  # the pass goes on; the next one reads it again
        logs.warning(
            "the Slack installation state could not be read; kept as it was",
            error_code=type(exc).__name__,
            error_message=str(exc),
        )
        return
    if not teams:
        rt.slack.hold(None)
        return
    working = rt.slack.team()
    if not isinstance(working, str):
        rt.slack.hold(APP_UNINSTALLED)
        return
    _resumed(rt, [t for t in teams if not working or t.team_id == working])
    rt.slack.hold(None)


def _resumed(rt: Runtime, teams: list[Installation]) -> None:
    now = rt.clock.now()
    for seen in teams:
        if reinstalled(rt.db, seen, now):
            logs.warning(
                "Slack app installed again: posting to Slack resumes",
                team_id=seen.team_id,
                uninstalled_at=seen.at,
            )


def check_installation_lately(rt: Runtime) -> None:
    """check_installation for a delivery taken one at a time (DISPATCH=pubsub): at most once
    per RECHECK_AFTER per process, so a burst of deliveries reads the state once."""
    now = rt.clock.now()
    if rt.known_slots.get(_CHECKED, now) is not None:
        return
    check_installation(rt)
    rt.known_slots.put(_CHECKED, True, now + RECHECK_AFTER, now)


# How long a delivery taken one at a time trusts this process's last check.
RECHECK_AFTER = timedelta(minutes=1)
_CHECKED = "slack_installation:checked"  # its entry in the process's KnownDocuments
