"""Reading a Teams conversation through Microsoft Graph, to learn whether an ambiguous post
went out (issue 31, proof of delivery).

- A channel: `GET teams/{aad group id}/channels/{channel id}/messages` (resource-specific
  consent `ChannelMessage.Read.Group`); Graph takes only `$top` (at most 50) there.
- A chat (group or personal): `GET chats/{chat id}/messages` (`ChatMessage.Read.Chat`), newest
  first (`$orderby=createdDateTime desc`), before the window's end (`$filter=createdDateTime
  lt …`: the only operator Graph takes on that property).
- Pages follow `@odata.nextLink`, newest first. The window ends at the first page whose last
  message was last modified before its start: a message is modified no earlier than it is
  created, so whether Graph orders by creation (chats) or by last activity (channels, where
  Microsoft does not document the order), every message after it was created before the
  window too.
- Proof is only our bot's message (`from.application.id` is TEAMS_APP_ID) whose Adaptive
  Card holds, at the top of its body, the Container whose id is the delivery id
  (core.teams wraps every card in it). A person or another app quoting the id proves nothing.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

import requests

from core.platform import HistoryPage, Outcome, PostResult
from core.teams_outcomes import classify_response

CARD = "application/vnd.microsoft.card.adaptive"
PAGE_SIZE = 50  # Graph's maximum `$top` for both reads


def channel_messages_url(base: str, aad_group_id: str, channel_id: str) -> str:
    return (
        f"{base}teams/{_segment(aad_group_id)}/channels/{_segment(channel_id)}/messages"
        f"?$top={PAGE_SIZE}"
    )


def chat_messages_url(base: str, chat_id: str, latest: datetime) -> str:
    query = urlencode(
        {
            "$top": PAGE_SIZE,
            "$orderby": "createdDateTime desc",
            "$filter": f"createdDateTime lt {graph_time(latest)}",
        },
        quote_via=quote,
        safe="$:",
    )
    return f"{base}chats/{_segment(chat_id)}/messages?{query}"


def read_page(
    http: requests.Session,
    url: str,
    token: str,
    timeout: float,
    oldest: datetime,
    resumed: bool = False,
) -> HistoryPage:
    """One page of messages at `url`; its `next_cursor` is Graph's next link, None once the
    window (from `oldest`) is read. A failed read is safe to ask again; a next link Graph
    refuses (400, `resumed`) is `invalid_cursor`: the window is read again from the top."""
    try:
        answer = http.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout)
    except requests.Timeout as exc:
        return HistoryPage(error=PostResult(Outcome.AMBIGUOUS, "timeout", detail=repr(exc)))
    except requests.RequestException as exc:
        failure = PostResult(Outcome.AMBIGUOUS, "connection_error", detail=repr(exc))
        return HistoryPage(error=failure)
    body = _json(answer)
    if answer.status_code == 400 and resumed:
        return HistoryPage(error=PostResult(Outcome.FAILED, "invalid_cursor"))
    if answer.status_code != 200:
        return HistoryPage(error=classify_read(answer.status_code, body, answer.headers))
    raw = body.get("value") if isinstance(body, dict) else None
    messages = tuple(m for m in raw or [] if isinstance(m, dict))
    next_link = body.get("@odata.nextLink") if isinstance(body, dict) else None
    if not isinstance(next_link, str) or not next_link or _before(messages, oldest):
        next_link = None
    return HistoryPage(messages, next_link)


def classify_read(status: int, body: Any, headers: Any) -> PostResult:
    """A Graph error answer, in the connector's classes: 4xx (403 without the RSC
    permission) cannot be cured by asking again; 429 waits Retry-After; 5xx: ask later."""
    return classify_response(status, body, dict(headers))


def proves(app_id: str, message: dict[str, Any], delivery_id: str) -> str | None:
    """The message's id when it is our bot's post of `delivery_id`, else None."""
    if sender_app_id(message) != app_id or not carries(message, delivery_id):
        return None
    ident = message.get("id")
    return ident if isinstance(ident, str) and ident else None


def carries(message: dict[str, Any], delivery_id: str) -> bool:
    """Whether one of the message's cards is wrapped in the delivery id's Container,
    whoever posted it."""
    attachments = message.get("attachments")
    items = attachments if isinstance(attachments, list) else []
    return any(_card_of(a, delivery_id) for a in items)


def sender_app_id(message: dict[str, Any]) -> str | None:
    """The app that posted the message (`from.application.id`); None for a person."""
    sender = message.get("from")
    application = sender.get("application") if isinstance(sender, dict) else None
    ident = application.get("id") if isinstance(application, dict) else None
    return ident if isinstance(ident, str) else None


def _card_of(attachment: Any, delivery_id: str) -> bool:
    """Whether `attachment` is an Adaptive Card whose body starts with our Container."""
    if not isinstance(attachment, dict) or attachment.get("contentType") != CARD:
        return False
    content = attachment.get("content")
    if isinstance(content, str):  # Graph gives the card as a JSON string
        try:
            content = json.loads(content)
        except ValueError:
            return False
    body = content.get("body") if isinstance(content, dict) else None
    return any(
        isinstance(item, dict) and item.get("type") == "Container" and item.get("id") == delivery_id
        for item in (body if isinstance(body, list) else [])
    )


def _before(messages: tuple[dict[str, Any], ...], oldest: datetime) -> bool:
    """Whether the page's last (oldest) message was last modified before `oldest`."""
    if not messages:
        return False
    last = messages[-1]
    stamp = last.get("lastModifiedDateTime") or last.get("createdDateTime")
    when = parse_graph_time(stamp)
    return when is not None and when < oldest


def graph_time(instant: datetime) -> str:
    """An instant as Graph writes them: UTC, milliseconds, `Z`."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_graph_time(raw: Any) -> datetime | None:
    if not isinstance(raw, str):
        return None
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _segment(raw: str) -> str:
    # Teams' ids hold `:` and `@`, which Graph's own examples leave as they are.
    return quote(raw, safe=":@")


def _json(answer: requests.Response) -> Any:
    try:
        return answer.json()
    except ValueError:
        return None
