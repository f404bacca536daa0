"""Structured JSON log lines on stdout, the shape Cloud Logging parses (`severity`,
`message`, anything else becomes jsonPayload fields)."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any, TextIO


def _default(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def log(severity: str, message: str, *, stream: TextIO | None = None, **fields: Any) -> None:
    record = {"severity": severity, "message": message, **fields}
    out = stream or sys.stdout
    out.write(json.dumps(record, default=_default, sort_keys=True) + "\n")
    out.flush()


def info(message: str, **fields: Any) -> None:
    log("INFO", message, **fields)


def warning(message: str, **fields: Any) -> None:
    log("WARNING", message, **fields)


def error(message: str, **fields: Any) -> None:
    log("ERROR", message, **fields)
