"""`names` in answers: each record an answer carries (a message, a rotation, a delivery, a
preview) gains `"names": {id: "#name" | "@Name" | a Teams conversation's name}` for the ids it
shows: `channel`, `user`, `teams_conversation`, `members`, `member`, `created_by`,
`updated_by`, and the `<@U…>` and `<#C…>` mentions of its `text`. From the directory cache
only (core.directory), in one batched read per answer, a page's records included. An id the
cache does not know is left out: the page shows the id."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from google.cloud import firestore

from core.directory import display_names, ids_in_text

# The answers whose body is itself a record to name, by answer model name.
_RECORDS = frozenset({"Message", "Rotation", "MessagePreview", "RotationTurns"})
# Where a body carries records to name: a page's list, or an action's record(s).
_LISTS = ("messages", "rotations", "deliveries")
_NESTED = ("message", "series", "rotation")
_ID_FIELDS = ("channel", "user", "teams_conversation", "member")
# Who made and last changed a record: a Slack user id is named (an email or `admin` is not).
_ACTOR_FIELDS = ("created_by", "updated_by")

B = TypeVar("B")


def named(db: firestore.Client, answer_model: str, body: B, extra: Iterable[str] = ()) -> B:
    """`body` with `names` on each record it carries (records that have them already are
    left as they are); `extra` ids (a draft's destination) count as the body's own."""
    if not isinstance(body, dict):
        return body
    records = _records(answer_model, body)
    wanted = {id(record): _ids_of(record) for record in records}
    if answer_model in _RECORDS:
        wanted[id(body)] = wanted.get(id(body), set()) | set(extra)
    every = set().union(*wanted.values()) if wanted else set()
    known = display_names(db, every) if every else {}
    for record in records:
        ids = wanted[id(record)]
        record["names"] = {ident: known[ident] for ident in sorted(ids) if ident in known}
        _name_help(record, known)
    return body


def _name_help(record: dict[str, Any], known: dict[str, str]) -> None:
    """`last_error.help` names the destination by its id (composer.serialize): by its name
    where the cache knows it ("Invite the app: /invite @Scheduler in #general")."""
    error = record.get("last_error")
    words = error.get("help") if isinstance(error, dict) else None
    destination = next((record[f] for f in _ID_FIELDS if isinstance(record.get(f), str)), None)
    if not isinstance(words, dict) or destination not in known:
        return
    for part in ("title", "action"):
        if isinstance(words.get(part), str):
            words[part] = words[part].replace(destination, known[destination])


def draft_ids(draft: Any) -> set[str]:
    """A draft's destination ids (channel, user, teams_conversation)."""
    return {v for f in _ID_FIELDS if isinstance(v := getattr(draft, f, None), str)}


def _records(answer_model: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = [body] if answer_model in _RECORDS else []
    for key in _LISTS:
        items = body.get(key)
        if isinstance(items, list):
            found.extend(item for item in items if isinstance(item, dict))
    for key in _NESTED:
        item = body.get(key)
        if isinstance(item, dict) and "id" in item:
            found.append(item)
    return [record for record in found if "names" not in record]


def _ids_of(record: dict[str, Any]) -> set[str]:
    ids = {v for f in _ID_FIELDS + _ACTOR_FIELDS if isinstance(v := record.get(f), str) and v}
    members = record.get("members")
    if isinstance(members, list):
        ids |= {m for m in members if isinstance(m, str) and m}
    turns = record.get("turns")
    if isinstance(turns, list):
        ids |= {m for t in turns if isinstance(t, dict) and isinstance(m := t.get("member"), str)}
    text = record.get("text")
    return ids | ids_in_text(text if isinstance(text, str) else None)
