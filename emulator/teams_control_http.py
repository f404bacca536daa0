"""The Teams stand-in's control API over HTTP, for a stand-in run as a process (`make run`,
workers in other processes): the same controls as in-process, as JSON.

GET  /_control/activities        -> [RecordedActivity as JSON] (RecordedActivity.from_json)
GET  /_control/updates           -> the same, for every update taken
GET  /_control/conversations     -> [Conversation as JSON]
GET  /_control/calls?operation=&conversation=  -> {"calls": n}
GET  /_control/env               -> the TEAMS_* settings pointing at this stand-in
POST /_control/reset
POST /_control/conversations     a Conversation as JSON ({"id", "conversation_type", ...})
POST /_control/channel | group_chat | personal   the in-process helpers' arguments
POST /_control/rosters           {"conversation", "installed"?, "blocked"?}
POST /_control/grants            {"conversation", "permission", "granted"?: true}
POST /_control/faults            a Fault as JSON, e.g. {"kind": "server_error", "status": 504,
                                 "after_record": true}
POST /_control/rate_limits       {"windows": [[7, 1], [8, 2]] | null, "tenant"?: [[50, 1]]}
POST /_control/pagination        {"short_pages": true}
POST /_control/messages          add_message's arguments -> {"id"}
POST /_control/rotate_keys       -> {"kid"}
POST /_control/install | remove  {"conversation", "target_url"} -> {"statuses": [...]}
POST /_control/invoke            {"verb", "data", "user", "target_url", "activity_id"?} ->
                                 {"status", "body"}; without activity_id: our latest card
                                 holding an Action.Execute with that verb

A bad body is 400 {"error": {"code": "BadRequest", "message": <what is wrong>}}.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from emulator.http_reply import Reply, json_reply
from emulator.teams_connector import cards
from emulator.teams_conversations import Conversation
from emulator.teams_faults import Fault
from emulator.teams_http import Request, error_reply

if TYPE_CHECKING:
    from emulator.teams_standin import TeamsStandIn

Action = Callable[["TeamsStandIn", dict[str, Any]], Any]


def control(standin: TeamsStandIn, request: Request) -> Reply:
    name = request.path.removeprefix("/_control/").strip("/")
    table = _GETS if request.method == "GET" else _POSTS
    action = table.get(name)
    if action is None:
        return error_reply(404, "NotFound", f"no {request.method} /_control/{name}")
    try:
        spec = request.query if request.method == "GET" else (request.json() or {})
        if not isinstance(spec, dict):
            raise ValueError("the body must be a JSON object")
        return json_reply(action(standin, spec))
    except (ValueError, TypeError, KeyError) as error:
        return error_reply(400, "BadRequest", str(error))


def _only(
    spec: dict[str, Any], required: set[str], optional: frozenset[str] | set[str] = frozenset()
) -> None:
    missing = required - set(spec)
    if missing:
        raise ValueError(f"missing {', '.join(sorted(missing))}")
    unknown = set(spec) - required - optional
    if unknown:
        raise ValueError(f"unknown fields: {', '.join(sorted(unknown))}")


def _calls(standin: TeamsStandIn, spec: dict[str, Any]) -> Any:
    _only(spec, set(), {"operation", "conversation"})
    return {"calls": standin.calls(spec.get("operation"), spec.get("conversation"))}


def _roster(standin: TeamsStandIn, spec: dict[str, Any]) -> Any:
    _only(spec, {"conversation"}, {"installed", "blocked"})
    standin.set_roster(
        spec["conversation"], installed=spec.get("installed"), blocked=spec.get("blocked")
    )
    return {"ok": True}


def _grant(standin: TeamsStandIn, spec: dict[str, Any]) -> Any:
    _only(spec, {"conversation", "permission"}, {"granted"})
    standin.grant(spec["conversation"], spec["permission"], bool(spec.get("granted", True)))
    return {"ok": True}


def _rate_limits(standin: TeamsStandIn, spec: dict[str, Any]) -> Any:
    _only(spec, {"windows"}, {"tenant"})
    standin.set_rate_limit(_windows(spec["windows"]), _windows(spec.get("tenant")))
    return {"ok": True}


def _windows(value: Any) -> list[tuple[int, float]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise ValueError("windows must be a list of [calls, per_seconds] or null")
    return [(w[0], w[1]) if isinstance(w, list) and len(w) == 2 else w for w in value]


def _pagination(standin: TeamsStandIn, spec: dict[str, Any]) -> Any:
    _only(spec, {"short_pages"})
    standin.set_short_pages(bool(spec["short_pages"]))
    return {"ok": True}


def _lifecycle(install: bool) -> Action:
    def act(standin: TeamsStandIn, spec: dict[str, Any]) -> Any:
        _only(spec, {"conversation", "target_url"})
        move = standin.install if install else standin.remove
        return {"statuses": [d.status for d in move(spec["conversation"], spec["target_url"])]}

    return act


def _invoke(standin: TeamsStandIn, spec: dict[str, Any]) -> Any:
    _only(spec, {"verb", "user", "target_url"}, {"data", "activity_id", "name"})
    activity_id = spec.get("activity_id") or _latest_with_verb(standin, spec["verb"])
    activity = standin.invoke_action(
        activity_id, spec["verb"], spec.get("data"), spec["user"], name=spec.get("name")
    )
    delivered = standin.deliver(spec["target_url"], activity)
    return {"status": delivered.status, "body": delivered.body, "activity_id": activity_id}


def _latest_with_verb(standin: TeamsStandIn, verb: str) -> str:
    for recorded in reversed(standin.activities()):
        for card in cards(recorded.activity) if recorded.from_app_id == standin.app_id else []:
            if any(a.get("verb") == verb for a in card.get("actions") or []):
                return recorded.id
    raise KeyError(f"none of our cards has an Action.Execute with verb {verb!r}")


def _conversation(standin: TeamsStandIn, spec: dict[str, Any]) -> Any:
    return standin.add_conversation(Conversation.from_json(spec)).to_json()


def _reset(standin: TeamsStandIn, spec: dict[str, Any]) -> Any:
    standin.reset()
    return {"ok": True}


def _fault(standin: TeamsStandIn, spec: dict[str, Any]) -> Any:
    standin.inject(Fault.from_json(spec))
    return {"ok": True}


def _message(standin: TeamsStandIn, spec: dict[str, Any]) -> Any:
    _only(spec, {"conversation"}, {"text", "card", "user", "user_name", "app_id", "app_name"})
    conversation = spec.pop("conversation")
    return {"id": standin.add_message(conversation, **spec)}


_GETS: dict[str, Action] = {
    "activities": lambda s, _: [a.to_json() for a in s.activities()],
    "updates": lambda s, _: [a.to_json() for a in s.updates()],
    "conversations": lambda s, _: [c.to_json() for c in s.conversations()],
    "calls": _calls,
    "env": lambda s, _: s.env(),
}
_POSTS: dict[str, Action] = {
    "reset": _reset,
    "conversations": _conversation,
    "channel": lambda s, spec: s.channel(**spec).to_json(),
    "group_chat": lambda s, spec: s.group_chat(**spec).to_json(),
    "personal": lambda s, spec: s.personal(**spec).to_json(),
    "rosters": _roster,
    "grants": _grant,
    "faults": _fault,
    "rate_limits": _rate_limits,
    "pagination": _pagination,
    "messages": _message,
    "rotate_keys": lambda s, _: {"kid": s.rotate_keys()},
    "install": _lifecycle(install=True),
    "remove": _lifecycle(install=False),
    "invoke": _invoke,
}
