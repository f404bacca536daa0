"""views.publish as the stand-in takes it (docs.slack.dev/reference/methods/views.publish):
`user_id` and a `view` of type `home` (an object, or JSON text when form-encoded) with at most
100 blocks; anything else is `invalid_arguments`, as Slack answers it, and is not published.
Publishing replaces the person's whole tab."""

from __future__ import annotations

import json
from typing import Any

from emulator.slack_limits import SlackError
from emulator.slack_users import is_user_id

# A view's block limit (Slack's Block Kit reference: 100 for modals and Home tabs).
MAX_VIEW_BLOCKS = 100


def published_view(params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The person and the Home tab view the call publishes, checked."""
    user = params.get("user_id")
    if not isinstance(user, str) or not user:
        raise SlackError("invalid_arguments", ("[ERROR] missing required field: user_id",))
    if not is_user_id(user):
        raise SlackError("user_not_found")
    view = params.get("view")
    if isinstance(view, str):
        try:
            view = json.loads(view)
        except ValueError:
            raise SlackError("invalid_arguments", ("[ERROR] view is not JSON",)) from None
    if not isinstance(view, dict) or view.get("type") != "home":
        raise SlackError("invalid_arguments", ("[ERROR] view.type must be home",))
    blocks = view.get("blocks")
    if not isinstance(blocks, list):
        raise SlackError("invalid_arguments", ("[ERROR] missing required field: blocks",))
    if len(blocks) > MAX_VIEW_BLOCKS:
        raise SlackError(
            "invalid_arguments",
            (f"[ERROR] no more than {MAX_VIEW_BLOCKS} items allowed [json-pointer:/view/blocks]",),
        )
    return user, view
