"""Buttons on a view (interactions.dispatch's VIEW_ACTIONS row): the Home tab's Cancel, Send
now and preference toggles, through the API's own code paths (composer.messages.cancel_message,
composer.send_now.send_now, composer.preferences.put_preferences) and so their validation.

Who may act: on a message, the person who created it (`created_by`), or anyone listed in
SLACK_ADMINS; on preferences, only the person's own. The check and the write are one
decision: a cancel is conditioned on the version the check read (`if_match`), so an edit
in between refuses it rather than acting on what was not checked; `created_by` never changes
after creation. A refused or failed action changes nothing and says why at the top of the
tab; every action ends with the tab published again, as the documents now stand.

A view with no response_url has no ephemeral reply: the notice on the tab is the answer."""

from __future__ import annotations

import flask

from composer.messages import cancel_message
from composer.models import PreferencesEdit
from composer.preferences import get_preferences, put_preferences
from composer.send_now import send_now
from core import logs
from core.documents.messages import MessageField
from core.errors import HttpError
from core.models import USER_ID
from core.runtime import Runtime
from core.store import MESSAGES, is_document_id
from interactions.acknowledge import ok
from interactions.home import publish_home
from interactions.home_view import CANCEL, OPT_IN, OPT_OUT, SEND_NOW, send_now_target
from interactions.inbound import Inbound


def take_view_action(rt: Runtime, inbound: Inbound) -> flask.Response:
    """A button on a view: the Home tab's acted on here; any other view's acknowledged."""
    view = inbound.fields.get("view")
    user = inbound.fields.get("user")
    actions = inbound.fields.get("actions")
    user_id = user.get("id") if isinstance(user, dict) else None
    if not isinstance(view, dict) or view.get("type") != "home":
        logs.info("view action ignored", reason="not the home tab")
        return ok()
    if not isinstance(user_id, str) or not USER_ID.match(user_id):
        logs.warning("view action ignored", reason="no user id")
        return ok()
    if not isinstance(actions, list) or not actions or not isinstance(actions[0], dict):
        logs.warning("view action ignored", reason="malformed", user=user_id)
        return ok()
    action = actions[0]
    action_id, value = action.get("action_id"), action.get("value")
    notice = act(rt, user_id, str(action_id), value if isinstance(value, str) else "")
    publish_home(rt, user_id, notice)
    return ok()


def act(rt: Runtime, user: str, action_id: str, value: str) -> str:
    """Take one Home tab action for `user`; the notice that says what it did or why not."""
    try:
        if action_id in (CANCEL, SEND_NOW):
            return _on_message(rt, user, action_id, value)
        if action_id in (OPT_OUT, OPT_IN):
            return _toggle(rt, user, value, opt_out=action_id == OPT_OUT)
    except HttpError as exc:
        logs.info("home action refused", user=user, action=action_id, id=value, reason=exc.code)
        return f"Nothing changed: {exc.message}"
    logs.warning("home action ignored", user=user, action=action_id, reason="unknown action")
    return "Nothing changed: that button is not known here any more."


def _on_message(rt: Runtime, user: str, action_id: str, value: str) -> str:
    seen = None
    if action_id == SEND_NOW:
        target = send_now_target(value)
        if target is None:
            return "Nothing changed: that button names no message."
        value, seen = target
    message_id = value
    known = is_document_id(message_id)
    snap = rt.db.collection(MESSAGES).document(message_id).get() if known else None
    data = snap.to_dict() if snap is not None and snap.exists else None
    if data is None or data.get(MessageField.DELETED) is True:
        return "Nothing changed: that message no longer exists."
    owner = data.get(MessageField.CREATED_BY)
    if owner != user and user not in rt.settings.slack_admins:
        logs.warning(
            "home action refused",
            user=user,
            action=action_id,
            message_id=message_id,
            reason="not_creator",
        )
        return "Nothing changed: you can act only on messages you created."
    if action_id == CANCEL:
        version = data.get(MessageField.VERSION)
        checked = version if isinstance(version, int) else None
        cancel_message(rt, message_id, checked, by=user)  # pragma: SYNCPOINT edit
        logs.info("home action taken", user=user, action=action_id, message_id=message_id)
        return "Cancelled: it will not be sent."
    answer = send_now(rt, message_id, seen, by=user)
    logs.info(
        "home action taken",
        user=user,
        action=action_id,
        message_id=message_id,
        delivery_id=answer["delivery_id"],
        status=answer["status"],
    )
    return f"Send now: {answer['status']}."


def _toggle(rt: Runtime, user: str, category: str, *, opt_out: bool) -> str:
    current: list[str] = list(get_preferences(rt.db, user)["opted_out"])
    wanted = [*current, category] if opt_out else [c for c in current if c != category]
    put_preferences(rt.db, user, PreferencesEdit(opted_out=wanted))
    logs.info(
        "home action taken", user=user, action="opt_out" if opt_out else "opt_in", category=category
    )
    return f"Opted out of {category}." if opt_out else f"Opted back in to {category}."
