"""People's preferences through the API: the categories a message may have (`categories/{id}`,
written by operators or other services) and which of them each person opted out of
(`preferences/{user id}`, written only here).

Category documents are read defensively: another service may have written one badly. Such a
document is still listed, with the contract's defaults for what is missing or malformed and a
WARNING naming the fields; a malformed `opt_out_allowed` counts as `false`, so that nobody can
opt out of what may be a must-read category. A `PUT` replaces the person's whole list; the
last write wins (no version: one person edits their own list, and each write is complete).
The list is written on `people/{user}` too, where the gates read it (processor.gates).
"""

from __future__ import annotations

from typing import Any

from google.cloud import firestore

from composer.answers import Category, CategoryList, Preferences
from composer.models import PreferencesEdit
from composer.serialize import dump
from composer.validation import Problems
from core import logs
from core.documents.categories import CategoryField, quiet_window_hours
from core.documents.people import PersonField
from core.documents.preferences import PreferenceField
from core.errors import DocumentError, NotFound
from core.models import TEAMS_USER_ID, USER_ID
from core.store import CATEGORIES, PEOPLE, PREFERENCES, Snapshot, is_document_id

# Far more than any team defines; a listing never reads an unbounded collection.
MAX_CATEGORIES = 500


def list_categories(db: firestore.Client) -> dict[str, Any]:
    docs = db.collection(CATEGORIES).limit(MAX_CATEGORIES).stream()
    categories = [_category(doc.id, doc.to_dict() or {}) for doc in docs]
    return dump(CategoryList(categories=categories))


def get_preferences(db: firestore.Client, user: str) -> dict[str, Any]:
    _check_user(user)
    snap = db.collection(PREFERENCES).document(user).get()
    return _answer(db, user, opted_out_of(user, snap.to_dict() or {}))


def put_preferences(db: firestore.Client, user: str, edit: PreferencesEdit) -> dict[str, Any]:
    _check_user(user)
    wanted = list(dict.fromkeys(edit.opted_out))  # a repeated id counts once
    known = _categories_named(db, wanted)
    problems = Problems()
    for index, ident in enumerate(edit.opted_out):
        category = known.get(ident)
        if category is None:
            problems.add(f"opted_out.{index}", f"{ident!r} is not a category")
        elif not category.opt_out_allowed:
            problems.add(
                f"opted_out.{index}", f"{ident!r} is a must-read category: no one can opt out"
            )
    problems.raise_if_any()
    store_opted_out(db, user, wanted)
    logs.info("preferences written", user=user, opted_out=wanted)
    return _answer(db, user, wanted)


def store_opted_out(db: firestore.Client, user: str, opted_out: list[str]) -> None:
    """Write a person's opt-outs: `preferences/{user}` (the contract's), and the same list on
    `people/{user}`, the one document the gates read per person, in one batch. That write
    changes the version a claim's reservation is conditioned on, so a claim that read the
    person before an opt-out fails and is planned again against it."""
    batch = db.batch()
    write_opted_out(db, batch, user, opted_out)
    batch.commit()


def write_opted_out(
    db: firestore.Client,
    batch: firestore.WriteBatch,
    user: str,
    opted_out: list[str],
    read: Snapshot | None = None,
) -> None:
    """store_opted_out's writes, added to `batch`; with `read` (the person's preferences as
    a change was decided on), under its version: the commit fails if they changed since."""
    reference = db.collection(PREFERENCES).document(user)
    stored = {PreferenceField.OPTED_OUT.value: opted_out}
    if read is None:
        batch.set(reference, stored)
    elif read.exists:
        batch.update(reference, stored, option=db.write_option(last_update_time=read.update_time))
    else:
        batch.create(reference, stored)
    person = {PersonField.OPTED_OUT.value: opted_out}
    batch.set(db.collection(PEOPLE).document(user), person, merge=True)


def _answer(db: firestore.Client, user: str, opted_out: list[str]) -> dict[str, Any]:
    categories = list_categories(db)["categories"]
    return dump(Preferences(user=user, opted_out=opted_out, categories=categories))


def _check_user(user: str) -> None:
    """A person is named by their Slack or Teams user id (their gates on each platform are
    their own); any other path names nobody (404)."""
    if not USER_ID.match(user) and not TEAMS_USER_ID.match(user):
        raise NotFound(f"{user!r} is not a Slack user id such as U0123ABCD or a Teams one")


def _categories_named(db: firestore.Client, ids: list[str]) -> dict[str, Category]:
    references = [db.collection(CATEGORIES).document(i) for i in ids if is_document_id(i)]
    snaps = db.get_all(references) if references else []
    return {snap.id: _category(snap.id, snap.to_dict() or {}) for snap in snaps if snap.exists}


def _category(ident: str, data: dict[str, Any]) -> Category:
    """A stored category with the contract's defaults; malformed fields logged, never fatal."""
    bad: list[str] = []
    label = data.get(CategoryField.LABEL, ident)
    if not isinstance(label, str) or not label.strip():
        bad.append(CategoryField.LABEL.value)
        label = ident
    allowed = data.get(CategoryField.OPT_OUT_ALLOWED, True)
    if not isinstance(allowed, bool):
        bad.append(CategoryField.OPT_OUT_ALLOWED.value)
        allowed = False  # the safe reading: perhaps must-read
    hours = data.get(CategoryField.QUIET_WINDOW_HOURS, 0)
    try:
        quiet_window_hours(data)  # the gates' reading: NaN or Infinity are unreadable
    except DocumentError:
        hours = None
    if hours is None or (isinstance(hours, int | float) and hours < 0):
        bad.append(CategoryField.QUIET_WINDOW_HOURS.value)
        hours = None
    cap = data.get(CategoryField.DAILY_CAP)
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 0):
        bad.append(CategoryField.DAILY_CAP.value)
        cap = None
    if bad:
        logs.warning(
            "category fields malformed: answered with defaults", category=ident, fields=bad
        )
    return Category(
        id=ident, label=label, opt_out_allowed=allowed, quiet_window_hours=hours, daily_cap=cap
    )


def opted_out_of(user: str, data: dict[str, Any]) -> list[str]:
    """The category ids a `preferences` document lists (malformed entries left out)."""
    stored = data.get(PreferenceField.OPTED_OUT, [])
    kept = [item for item in stored if isinstance(item, str)] if isinstance(stored, list) else []
    if not isinstance(stored, list) or len(kept) != len(stored):
        logs.warning("preferences malformed: non-text opt-outs left out", user=user)
    return kept
