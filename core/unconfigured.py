"""A platform this deployment has no credentials for (Teams without TEAMS_APP_ID): every
send is refused for good with `<platform>_not_configured`, and nothing can be read back, so
an occurrence addressed to it ends `failed` with that code instead of waiting forever."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from core.platform import HistoryPage, Lookup, Outcome, PostResult, Witness


class Unconfigured:
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def _refused(self) -> PostResult:
        code = f"{self._name}_not_configured"
        return PostResult(Outcome.FAILED, code, detail=f"no {self._name} bot is configured")

    def send(self, conversation: str, message: Any, delivery_id: str) -> PostResult:
        return self._refused()

    def edit(self, conversation: str, post_id: str, message: Any, delivery_id: str) -> PostResult:
        return self._refused()

    def send_waiting_until(self, conversation: str) -> datetime | None:
        return None

    def edit_waiting_until(self) -> datetime | None:
        return None

    def history_waiting_until(self) -> datetime | None:
        return None

    def history_page(
        self, conversation: str, oldest: datetime, latest: datetime, cursor: str | None
    ) -> HistoryPage:
        return HistoryPage(error=self._refused())

    def proof(
        self, conversation: str, messages: Sequence[dict[str, Any]], delivery_id: str
    ) -> Lookup | None:
        return Lookup(Witness.UNREADABLE, code=self._refused().code)
