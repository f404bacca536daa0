"""The error catalog: every code the product stores (`last_error.code`, a ledger entry's
`error.code` or `reason`) in words a team lead can act on: what went wrong (`title`) and what
to do (`action`). The API answers it beside `last_error` (`help`), the page shows it, and
alerts and the operator CLI print it.

`action` may name `{channel}`: the caller fills it with the conversation's name ("#general")
or, when it has none, its id. Codes come in families, so besides the table of exact codes a
few patterns cover whole families: `invalid_<field>` (a stored field the processor cannot
use) and `http_<status>` (an answer with no code of its own). Anything else gets a generic
entry that still says where to look. docs/operations.md lists the catalog.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorHelp:
    title: str  # what went wrong, in words
    action: str  # what to do; may name `{channel}`

    def filled(self, channel: str) -> ErrorHelp:
        """This help with `{channel}` replaced by `channel` ("#general")."""
        return ErrorHelp(
            self.title.replace("{channel}", channel), self.action.replace("{channel}", channel)
        )


# What happens by itself: said so, so nobody acts on it twice.
_AUTOMATIC = "Nothing to do: it is sent again automatically."
_CHECKED = (
    "Nothing to do yet: the scheduler checks whether it was posted and never posts twice."
    " If it ends unconfirmed, look in {channel} and tell your operator whether it arrived."
)
_REINSTALL = "Ask your operator to reinstall the app or renew its token, then Retry."
_NOT_SENT_BY_CHOICE = "Nothing to do: this occurrence was left out on purpose."
_EDIT = "Edit the message (the error's message says what is wrong), then save it."

_TABLE: dict[str, ErrorHelp] = {
    # Slack's ok:false codes (core.slack.OUTCOMES).
    "not_in_channel": ErrorHelp(
        "The app is not in {channel}",
        "Invite the app: /invite @Scheduler in {channel}, then Retry.",
    ),
    "channel_not_found": ErrorHelp(
        "The channel was not found",
        "Check {channel} still exists; a private channel needs /invite @Scheduler in it."
        " Then pick the channel again or Retry.",
    ),
    "is_archived": ErrorHelp(
        "{channel} is archived", "Unarchive {channel} or pick another channel, then Retry."
    ),
    "channel_is_archived": ErrorHelp(
        "{channel} is archived", "Unarchive {channel} or pick another channel, then Retry."
    ),
    "msg_too_long": ErrorHelp(
        "The text is too long for Slack",
        "Shorten the text (at most 40,000 characters), then Retry.",
    ),
    "no_text": ErrorHelp("The message has no text", "Add text to the message, then Retry."),
    "invalid_blocks": ErrorHelp(
        "Slack refused the message's layout",
        "Simplify the text's formatting or buttons, check the preview, then Retry.",
    ),
    "invalid_metadata_format": ErrorHelp(
        "Slack refused the post's hidden metadata",
        "This is the scheduler's fault, not yours: tell your operator, then Retry.",
    ),
    "invalid_auth": ErrorHelp("The app's Slack token is not valid", _REINSTALL),
    "not_authed": ErrorHelp("The app sent no Slack token", _REINSTALL),
    "token_revoked": ErrorHelp("The app's Slack token was revoked", _REINSTALL),
    "token_expired": ErrorHelp("The app's Slack token expired", _REINSTALL),
    "account_inactive": ErrorHelp("The app's Slack account is deactivated", _REINSTALL),
    "app_uninstalled": ErrorHelp("The app was removed from the workspace", _REINSTALL),
    "missing_scope": ErrorHelp(
        "The app lacks a Slack permission it needs",
        "Ask your operator to add the permission (scope) and reinstall the app, then Retry.",
    ),
    "restricted_action": ErrorHelp(
        "The workspace does not let the app post in {channel}",
        "Ask a workspace admin to allow it, or pick another channel, then Retry.",
    ),
    "user_not_found": ErrorHelp(
        "The person was not found in Slack", "Pick the person again (or someone else), then Retry."
    ),
    "user_disabled": ErrorHelp(
        "The person's Slack account is deactivated", "Pick someone else, or cancel the message."
    ),
    "user_not_visible": ErrorHelp(
        "The app cannot see this person",
        "They may be in another workspace or hidden from apps: ask a workspace admin, or pick"
        " someone else.",
    ),
    "cannot_dm_bot": ErrorHelp(
        "A bot cannot get direct messages", "Pick a person instead of a bot, then Retry."
    ),
    "dm_not_opened": ErrorHelp(
        "The app could not open a direct message with the person",
        "Check the person can get messages from apps, then Retry.",
    ),
    "ratelimited": ErrorHelp("Slack asked the app to slow down", _AUTOMATIC),
    "rate_limited": ErrorHelp("Slack asked the app to slow down", _AUTOMATIC),
    "connection_refused": ErrorHelp("Slack could not be reached", _AUTOMATIC),
    "fatal_error": ErrorHelp("Slack failed while posting", _CHECKED),
    "internal_error": ErrorHelp("Slack failed while posting", _CHECKED),
    "service_unavailable": ErrorHelp("Slack was unavailable while posting", _CHECKED),
    "request_timeout": ErrorHelp("Slack timed out while posting", _CHECKED),
    "timeout": ErrorHelp("The post timed out before an answer came", _CHECKED),
    "connection_error": ErrorHelp("The connection broke while posting", _CHECKED),
    "history_unfinished": ErrorHelp("Whether it was posted is not known yet", _CHECKED),
    "post_deadline_passed": ErrorHelp("Whether it was posted is not known yet", _CHECKED),
    "missing_ts": ErrorHelp("Slack answered without saying where it posted", _CHECKED),
    "missing_id": ErrorHelp("Teams answered without saying where it posted", _CHECKED),
    "internal_exception": ErrorHelp("The scheduler failed while posting", _CHECKED),
    "not_delivered": ErrorHelp("It was not found in {channel} after posting", _AUTOMATIC),
    "max_attempts": ErrorHelp(
        "It could not be posted after several attempts",
        "Check {channel} is reachable for the app, then Retry.",
    ),
    # Microsoft Teams' codes (core.teams_outcomes.ROWS).
    "BotNotInConversationRoster": ErrorHelp(
        "The app is not in the Teams conversation {channel}",
        "Add the app to {channel} in Teams, then Retry.",
    ),
    "ConversationBlockedByUser": ErrorHelp(
        "The person blocked the app in Teams", "Ask them to unblock it in Teams, then Retry."
    ),
    "InvalidBotApiHost": ErrorHelp(
        "The Teams conversation is on another Microsoft cloud",
        "Tell your operator: the app cannot post there as installed.",
    ),
    "ActivityNotFoundInConversation": ErrorHelp(
        "The Teams post was not found", "It was deleted in Teams; nothing to do."
    ),
    "conversation_not_installed": ErrorHelp(
        "The app is not installed in the Teams conversation",
        "Add the app to the conversation in Teams, then Retry.",
    ),
    "conversation_removed": ErrorHelp(
        "The app was removed from the Teams conversation",
        "Add the app to the conversation again in Teams, or pick another one, then Retry.",
    ),
    "channel_without_team": ErrorHelp(
        "The Teams channel's team is not known",
        "Add the app to the team again in Teams, then Retry.",
    ),
    "token_unavailable": ErrorHelp("The app could not get a Teams token", _AUTOMATIC),
    "token_refused": ErrorHelp(
        "Microsoft refused the app's Teams credentials",
        "Ask your operator to check the app's Teams id and secret, then Retry.",
    ),
    # The processor's own codes.
    "expired": ErrorHelp(
        "It was not sent before its expiry time",
        "If it is still needed, edit its send time or expiry.",
    ),
    "operator_failed": ErrorHelp(
        "An operator ended this send by hand",
        "The error's message says why; edit the message to send it again.",
    ),
    "dead_lettered": ErrorHelp(
        "The send kept failing and was set aside", "Tell your operator (docs/operations.md)."
    ),
    # Why an occurrence was never sent (core.documents.deliveries.LedgerReason).
    "missed": ErrorHelp(
        "Nothing ran while it was due",
        "Nothing to do for this one; if it happens again, tell your operator.",
    ),
    "day_ended": ErrorHelp(
        "The rotation's day ended before its turn was posted",
        "Nothing to do: the order goes on with the next turn.",
    ),
    "everyone_skipped": ErrorHelp(
        "Every member was away that day", "Check the rotation's away dates if this is unexpected."
    ),
    "cancelled": ErrorHelp("The message was cancelled before this was sent", _NOT_SENT_BY_CHOICE),
    "rescheduled": ErrorHelp("The message was moved before this was sent", _NOT_SENT_BY_CHOICE),
    "opted_out": ErrorHelp(
        "The person opted out of this category", "Nothing to do: they chose not to get these."
    ),
    "quiet_window": ErrorHelp(
        "Another message reached the person shortly before",
        "Nothing to do: the category's quiet window held this one back.",
    ),
    "daily_cap": ErrorHelp(
        "The person already got the category's daily limit",
        "Nothing to do, or raise the category's daily cap.",
    ),
    "already_sent": ErrorHelp("This occurrence was already sent", "Nothing to do."),
    # A stored document the processor cannot send (core.errors.DocumentError).
    "empty_text": ErrorHelp("The message has no text", _EDIT),
    "unknown_category": ErrorHelp(
        "The message's category does not exist",
        "Pick an existing category (or none) for the message, then save it.",
    ),
    "text_too_long": ErrorHelp("The text is too long", "Shorten the text, then save it."),
    "missing_channel": ErrorHelp("The message names no channel or person", _EDIT),
    "channel_and_user": ErrorHelp("The message names both a channel and a person", _EDIT),
    "teams_and_slack": ErrorHelp("The message names both a Teams and a Slack destination", _EDIT),
    "no_pinned_post": ErrorHelp(
        "The event names no post to update", "Send the event again with the post it updates."
    ),
    "no_pinned_template": ErrorHelp(
        "The event names no template", "Send the event again with its template."
    ),
}
_INVALID = re.compile(r"\Ainvalid_([a-z_]+)\Z")
_HTTP = re.compile(r"\Ahttp_([1-5][0-9]{2})\Z")


def help_for(code: str | None) -> ErrorHelp:
    """The catalog's entry for `code`; a generic one for a code it does not know."""
    if code is None:
        return ErrorHelp(
            "It failed for an unknown reason", "Retry; if it fails again, tell your operator."
        )
    if code in _TABLE:
        return _TABLE[code]
    invalid = _INVALID.match(code)
    if invalid is not None:
        field = invalid.group(1).replace("_", " ")
        return ErrorHelp(f"The {field} is not valid", _EDIT)
    http = _HTTP.match(code)
    if http is not None:
        status = int(http.group(1))
        if status >= 500:
            return ErrorHelp(f"The chat service failed while posting (HTTP {status})", _CHECKED)
        return ErrorHelp(
            f"The chat service refused the post (HTTP {status})",
            "Tell your operator the code; Retry once it is fixed.",
        )
    return ErrorHelp(
        f"It failed ({code})",
        "The error's message says why; Retry once it is fixed, or tell your operator.",
    )


def catalog() -> dict[str, ErrorHelp]:
    """Every exact code the catalog has words for (docs/operations.md lists them)."""
    return dict(_TABLE)
