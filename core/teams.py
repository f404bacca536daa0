"""The Teams transport: one activity posted (or updated) through the Bot Connector with the
Teams SDK's `ApiClient`, classified into what it means for delivery (core.teams_outcomes),
and the conversation read back through Graph for proof (core.teams_graph).

- Where to post is the conversation's stored `teams_conversations` document, looked up
  through a callable the caller hands in: an unknown conversation is FAILED
  `conversation_not_installed`, a removed one `conversation_removed`, without calling Teams.
- Every activity carries its delivery id: the card's body is wrapped in one Container whose
  id is the delivery id, which Graph's copy of the message shows (proof of delivery).
- No retries below us: the httpx client is built here with `retries=0` (retries of a
  connection that never opened only) and the SDK adds none, so a post whose connection
  dropped after Teams had it is AMBIGUOUS, never sent twice.
- One `ApiClient` per `asyncio.run`: its httpx pool belongs to that event loop.
- Teams limits each bot per conversation (docs/teams-limits.md). A 429 makes this process
  wait out its Retry-After for that conversation (every post and update to it; Graph reads
  of it, on their own): until then the transport does not call it and answers RETRY_LATER
  `ratelimited` itself (core.slack.MethodWaits, on the injected clock).
"""

from __future__ import annotations

import asyncio
import copy
import math
import ssl
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

import httpx
from google.cloud import firestore
from microsoft_teams.api import ApiClient
from microsoft_teams.api.activities.message import MessageActivityInput
from microsoft_teams.api.models import Attachment
from microsoft_teams.common import Client, ClientOptions

from core import logs, teams_graph
from core.clock import Clock, SystemClock
from core.documents.teams_conversations import ConversationType, read_conversation
from core.platform import (
    DEFAULT_RETRY_AFTER,
    TEAMS,
    HistoryPage,
    Lookup,
    Outcome,
    PostResult,
    Witness,
)
from core.settings import Settings
from core.slack import MethodWaits
from core.teams_outcomes import RATELIMITED, classify_exception, classify_response
from core.teams_token import GRAPH_SCOPE, MsalTokens, TokenUnavailable, session
from formatting.teams_message import TeamsMessage

CARD = teams_graph.CARD
CHANNEL = "channel"
# What a 429 holds back, per conversation: the connector's calls, and Graph's reads.
CONNECTOR, GRAPH = "teams.connector", "teams.graph"
# The SDK's stand-in id when Teams answers a post without one.
_PLACEHOLDER_ID = "DO_NOT_USE_PLACEHOLDER_ID"

_Answer = TypeVar("_Answer")
# Under Teams' 50 a second per app per tenant, with room for the updates of answered cards.
TENANT_SENDS_PER_SECOND = 40
TENANT_INTERVAL = timedelta(seconds=1) / TENANT_SENDS_PER_SECOND


@dataclass(frozen=True)
class ConversationRef:
    """What the transport needs of a stored `teams_conversations` document."""

    service_url: str
    conversation_type: str  # channel | groupChat | personal
    aad_group_id: str | None = None  # channels: Graph's team id
    channel_id: str | None = None  # channels: Graph's channel id
    # Graph's id of the chat when it is not the conversation id (a personal chat's `a:…`
    # id is the Bot Framework's own); None: the conversation id.
    chat_id: str | None = None
    removed: bool = False
    tenant_id: str | None = None  # whose 50 requests a second it shares (TenantPace)


Conversations = Callable[[str], ConversationRef | None]


class TenantPace:
    """At most TENANT_SENDS_PER_SECOND connector calls a second per tenant from this process:
    Teams allows an app 50 a second per tenant (docs/teams-limits.md), and one worker with
    warm connections posts faster than that. Each call takes the tenant's next free instant
    and sleeps until it, on the caller's clock; workers in other processes are held by
    Teams' own 429, waited out per conversation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[str | None, datetime] = {}

    def take(self, tenant: str | None, clock: Clock) -> None:
        now = clock.now()
        with self._lock:
            at = max(self._next.get(tenant, now), now)
            self._next = {t: n for t, n in self._next.items() if n > now}
            self._next[tenant] = at + TENANT_INTERVAL
        if at > now:
            clock.sleep((at - now).total_seconds())


def wrapped_card(message: TeamsMessage, delivery_id: str) -> dict[str, Any]:
    """The renderer's card with its body inside one Container whose id is `delivery_id`,
    and its mentions as the card's `msteams.entities`."""
    card = dict(message.card)
    card["body"] = [{"type": "Container", "id": delivery_id, "items": list(card.get("body", []))}]
    if message.mentions:
        msteams = card.get("msteams")
        extra = msteams if isinstance(msteams, dict) else {}
        card["msteams"] = {**extra, "entities": list(message.mentions)}
    return card


def activity(message: TeamsMessage, delivery_id: str) -> MessageActivityInput:
    """The message activity: the wrapped card, and the text as its `summary` (what Teams
    shows where the card cannot be: notifications, the activity feed)."""
    attachment = Attachment(content_type=CARD, content=wrapped_card(message, delivery_id))
    # `summary` is not a field of the SDK's input model (it allows extra fields).
    sent = MessageActivityInput.model_validate({"summary": message.text})
    return sent.add_attachments(attachment)


class TeamsTransport:
    def __init__(
        self,
        settings: Settings,
        conversations: Conversations,
        timeout_seconds: float,
        clock: Clock | None = None,
    ) -> None:
        self._settings = settings
        self._app_id = settings.teams_app_id or ""
        self._conversations = conversations
        self._timeout = timeout_seconds
        self._tokens = MsalTokens(settings)
        self._graph = session(settings.teams_ca_bundle)
        ca_bundle = settings.teams_ca_bundle
        self._tls = (
            ssl.create_default_context(cafile=ca_bundle)
            if ca_bundle
            else httpx.create_ssl_context()
        )
        self._clock: Clock = clock or SystemClock()
        self._tenants = TenantPace()
        self._waits = MethodWaits()

    def with_clock(self, clock: Clock) -> TeamsTransport:
        """This transport on another clock: the same tokens, sessions and waits."""
        other = copy.copy(self)
        other._clock = clock
        return other

    def waiting_until(self, conversation_id: str) -> datetime | None:
        """When the conversation may be posted to again after a 429, None if it may be now."""
        return self._waits.until((CONNECTOR, conversation_id), self._clock.now())

    def post(self, conversation_id: str, message: TeamsMessage, delivery_id: str) -> PostResult:
        """Post `message` as a new activity; DELIVERED with the activity id as `ts`."""
        return self._send(conversation_id, activity(message, delivery_id), None)

    def update(
        self, conversation_id: str, activity_id: str, message: TeamsMessage, delivery_id: str
    ) -> PostResult:
        """Replace our activity `activity_id` with `message` (its card still carrying the
        delivery id); DELIVERED when Teams took it."""
        return self._send(conversation_id, activity(message, delivery_id), activity_id)

    def _send(
        self, conversation_id: str, sent: MessageActivityInput, activity_id: str | None
    ) -> PostResult:
        ref = self._installed(conversation_id)
        if isinstance(ref, PostResult):
            return ref
        self._tenants.take(ref.tenant_id, self._clock)
        answer = self._call(
            CONNECTOR,
            conversation_id,
            lambda: asyncio.run(self._connector(ref, conversation_id, sent, activity_id)),
        )
        if isinstance(answer, PostResult):
            return answer
        if activity_id is not None:
            return PostResult(Outcome.DELIVERED, ts=activity_id)
        if not answer or answer == _PLACEHOLDER_ID:
            return PostResult(Outcome.AMBIGUOUS, "missing_id", detail="Teams answered no id")
        return PostResult(Outcome.DELIVERED, ts=answer)

    async def _connector(
        self,
        ref: ConversationRef,
        conversation_id: str,
        sent: MessageActivityInput,
        activity_id: str | None,
    ) -> str:
        """One create (or update) through a new ApiClient on this event loop; the id Teams
        answered."""
        async with self._http() as http:
            # Ours (no retries, no environment proxies), handed in: the SDK's own default
            # client would load the CA certificates again on every post.
            options = Client(ClientOptions(timeout=self._timeout), _http=http)
            api = ApiClient(ref.service_url, options, token_provider=self._tokens)
            if activity_id is None:
                created = await api.conversations.create_activity(conversation_id, sent)
                return created.id
            await api.conversations.update_activity(conversation_id, activity_id, sent)
            return activity_id

    def _http(self) -> httpx.AsyncClient:
        """A client for one event loop (its pool is that loop's), on the transport's one TLS
        context: loading the CA certificates is most of a post's CPU otherwise."""
        transport = httpx.AsyncHTTPTransport(verify=self._tls, retries=0, trust_env=False)
        return httpx.AsyncClient(
            transport=transport, timeout=httpx.Timeout(self._timeout), trust_env=False
        )

    def history_page(
        self, conversation_id: str, oldest: datetime, latest: datetime, cursor: str | None
    ) -> HistoryPage:
        """One page of the conversation's messages through Graph, newest first, from
        `cursor` (None: the newest before `latest`); `next_cursor` None once the window
        from `oldest` is read."""
        ref = self._installed(conversation_id, reading=True)
        if isinstance(ref, PostResult):
            return HistoryPage(error=ref)
        url = cursor or self._first_page(ref, conversation_id, latest)
        if url is None or not url.startswith(self._settings.graph_api_url):
            # Never send our token anywhere but Graph: a cursor we did not get from it is void.
            return HistoryPage(error=PostResult(Outcome.FAILED, "invalid_cursor"))
        page = self._call(
            GRAPH, conversation_id, lambda: self._read(url, oldest, resumed=cursor is not None)
        )
        return HistoryPage(error=page) if isinstance(page, PostResult) else page

    def _first_page(self, ref: ConversationRef, conversation_id: str, latest: datetime) -> str:
        base = self._settings.graph_api_url
        if ref.conversation_type == CHANNEL:
            group, channel = ref.aad_group_id or "", ref.channel_id or conversation_id
            return teams_graph.channel_messages_url(base, group, channel)
        return teams_graph.chat_messages_url(base, ref.chat_id or conversation_id, latest)

    def _read(self, url: str, oldest: datetime, resumed: bool) -> HistoryPage | PostResult:
        token = self._tokens.get_app_token(GRAPH_SCOPE)
        page = teams_graph.read_page(self._graph, url, token, self._timeout, oldest, resumed)
        # A 429 goes back through _call, which waits it out for this conversation.
        return page.error if page.error is not None and page.error.code == RATELIMITED else page

    def proves(self, message: dict[str, Any], delivery_id: str) -> str | None:
        """The activity id when the Graph message `message` is our bot's post carrying
        `delivery_id`, else None."""
        return teams_graph.proves(self._app_id, message, delivery_id)

    # The platform seam's names for the same calls (core.platform.Platform).

    @property
    def name(self) -> str:
        return TEAMS

    def send(self, conversation: str, message: TeamsMessage, delivery_id: str) -> PostResult:
        return self.post(conversation, message, delivery_id)

    def edit(
        self, conversation: str, post_id: str, message: TeamsMessage, delivery_id: str
    ) -> PostResult:
        return self.update(conversation, post_id, message, delivery_id)

    def send_waiting_until(self, conversation: str) -> datetime | None:
        return self.waiting_until(conversation)

    def edit_waiting_until(self) -> datetime | None:
        """None: Teams limits each conversation on its own, and an update to a conversation
        that waits answers `ratelimited` itself without calling Teams."""
        return None

    def history_waiting_until(self) -> datetime | None:
        """None: Graph's reads wait per conversation; a read of one that waits answers
        `ratelimited` itself without calling Graph."""
        return None

    def proof(
        self, conversation: str, messages: Sequence[dict[str, Any]], delivery_id: str
    ) -> Lookup | None:
        """FOUND with the activity id when our bot's post of `delivery_id` is among
        `messages`; None otherwise (another app's card carrying the id is logged)."""
        for message in messages:
            activity_id = self.proves(message, delivery_id)
            if activity_id is not None:
                return Lookup(Witness.FOUND, ts=activity_id)
            if teams_graph.carries(message, delivery_id):
                logs.warning(
                    "a message by another app carries this delivery_id; not taken as proof",
                    delivery_id=delivery_id,
                    teams_conversation=conversation,
                    activity_id=message.get("id"),
                    app_id=teams_graph.sender_app_id(message),
                )
        return None

    def _installed(
        self, conversation_id: str, reading: bool = False
    ) -> ConversationRef | PostResult:
        """The stored conversation, or the FAILED answer when it is not (or no longer) ours."""
        ref = self._conversations(conversation_id)
        if ref is None:
            return PostResult(Outcome.FAILED, "conversation_not_installed")
        if ref.removed:
            return PostResult(Outcome.FAILED, "conversation_removed")
        if reading and ref.conversation_type == CHANNEL and not ref.aad_group_id:
            return PostResult(Outcome.FAILED, "channel_without_team")
        return ref

    def _call(
        self, scope: str, conversation_id: str, call: Callable[[], _Answer | PostResult]
    ) -> _Answer | PostResult:
        """Teams' answer to `call`, or what went wrong: a 429 makes the process wait out its
        Retry-After for `scope` in this conversation, and meanwhile it is not called."""
        now = self._clock.now()
        until = self._waits.until((scope, conversation_id), now)
        if until is not None:
            return PostResult(
                Outcome.RETRY_LATER,
                RATELIMITED,
                retry_after=max(1, math.ceil((until - now).total_seconds())),
                detail=f"waits out Teams' Retry-After until {until.isoformat()}",
            )
        answer = _attempt(call)
        if isinstance(answer, PostResult) and answer.code == RATELIMITED:
            now = self._clock.now()
            wait = timedelta(seconds=answer.retry_after or DEFAULT_RETRY_AFTER)
            self._waits.wait((scope, conversation_id), now + wait, now)
        return answer


def _attempt(call: Callable[[], _Answer | PostResult]) -> _Answer | PostResult:
    """`call`'s answer, or the classified failure it raised."""
    try:
        return call()
    except TokenUnavailable as exc:  # before any request to Teams: never half-sent
        return exc.result
    except httpx.HTTPStatusError as exc:
        response = exc.response
        return classify_response(response.status_code, _json(response), response.headers)
    except Exception as exc:  # classified: a dropped connection is AMBIGUOUS, not a crash
        return classify_exception(exc)


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def stored_conversations(db: firestore.Client, app_id: str) -> Conversations:
    """The transport's lookup of `teams_conversations/{id}` (one read per call: an uninstall
    is seen by the next send). A personal chat is read in Graph by the id Graph gives a
    one-to-one chat with a bot, `19:{person's Entra id}_{app id}@unq.gbl.spaces`."""

    def lookup(conversation_id: str) -> ConversationRef | None:
        stored = read_conversation(db, conversation_id)
        if stored is None:
            return None
        place = stored.place
        chat_id = None
        if place.conversation_type is ConversationType.PERSONAL and place.user_aad_id:
            chat_id = f"19:{place.user_aad_id}_{app_id}@unq.gbl.spaces"
        return ConversationRef(
            service_url=place.service_url,
            conversation_type=place.conversation_type.value,
            aad_group_id=place.aad_group_id,
            channel_id=place.channel_id,
            chat_id=chat_id,
            removed=not stored.installed,
            tenant_id=place.tenant_id,
        )

    return lookup
