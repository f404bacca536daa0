"""The small, flat exception hierarchy. Every message names the offending value.

`HttpError`s carry the status and the machine-readable code the contract's JSON error body
uses; `DocumentError` marks a stored document that cannot be processed, with the code that
lands in its `last_error.code`.
"""

from __future__ import annotations

from typing import Any


class AppError(Exception):
    """Base of everything this product raises on purpose."""


class SettingsError(AppError):
    """An environment variable is missing or out of range."""


class HttpError(AppError):
    status: int = 500
    code: str = "internal"

    def __init__(
        self,
        message: str,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or []
        self.headers = headers or {}  # response headers the status calls for

    def body(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, "details": self.details}


class BadRequest(HttpError):
    status, code = 400, "bad_request"


class Unauthorized(HttpError):
    status, code = 401, "unauthorized"


class NotFound(HttpError):
    status, code = 404, "not_found"


class MethodNotAllowed(HttpError):
    """A 405 names the methods the path takes: they are its answer's `Allow` header."""

    status, code = 405, "method_not_allowed"

    def __init__(self, message: str, allowed: list[str]) -> None:
        super().__init__(message, headers={"Allow": ", ".join(allowed)})


class Conflict(HttpError):
    status, code = 409, "conflict"


class PreconditionFailed(HttpError):
    status, code = 412, "precondition_failed"


class ValidationFailed(HttpError):
    status, code = 422, "validation_failed"


class Unavailable(HttpError):
    """A dependency (Slack) refused for now; nothing was done, and the same request may be
    made again: after `retry_after` seconds when the dependency said how long to wait
    (its answer's `Retry-After` header)."""

    status, code = 503, "unavailable"

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        wait = {} if retry_after is None else {"Retry-After": str(retry_after)}
        super().__init__(message, headers=wait)


class DocumentError(AppError):
    """A stored document that cannot be sent as it is (bad zone, rule, channel, text...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
