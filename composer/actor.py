"""Who is acting on a record, as its `created_by` / `updated_by` store it: the page's
sign-in email for a person, the service account's email for an OIDC caller, `admin` for
the admin token, or a Slack user id when the Slack side acts (given explicitly as `by`)."""

from __future__ import annotations

from typing import Any

import flask

from core.auth import Principal
from core.documents.subjects import SubjectWrite

ADMIN = "admin"


def actor(by: str | None = None) -> str | None:
    """`by` when given; else the request's principal (core.http puts it on `flask.g`);
    None outside a request with none, and then nothing is recorded."""
    if by is not None:
        return by
    principal = flask.g.get("principal") if flask.has_app_context() else None
    return _named(principal) if isinstance(principal, Principal) else None


def _named(principal: Principal) -> str | None:
    if principal.kind == "admin":
        return ADMIN
    return principal.email


def updated_by(by: str | None = None) -> dict[str, Any]:
    """The `updated_by` field of a change made by the actor (nothing when none is known)."""
    who = actor(by)
    return {} if who is None else SubjectWrite(updated_by=who).to_document()
