"""Working days of one country (and optionally one of its subdivisions): its public holidays
and its own weekend, both from the `holidays` package.

Nothing here is hard-coded: the weekend comes from the country's calendar (Fri-Sat in Saudi
Arabia, Sat-Sun in Germany, Friday alone in Iran, and the UAE's switch from Fri-Sat to Sat-Sun
in 2022 by date), and so do weekend days that a country declares working days (China's
make-up Saturdays)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import holidays
from holidays.holiday_base import HolidayBase

from core.errors import DocumentError

SKIP = "skip"
NEXT_WORKING_DAY = "next_working_day"
POLICIES = (SKIP, NEXT_WORKING_DAY)

# The longest run of non-working days any calendar has (New Year in Russia, Spring Festival
# in China) is well under this; a day with no working day this far ahead is skipped instead.
MAX_SHIFT = timedelta(days=31)


@functools.lru_cache(maxsize=64)
def _calendar(country: str, subdivision: str | None) -> HolidayBase:
    # One calendar per place per process: it fills in years as they are asked for.
    return holidays.country_holidays(country, subdiv=subdivision)


@dataclass(frozen=True)
class WorkingDays:
    """Which days of a place are working days, and what a series does on the others."""

    country: str
    subdivision: str | None = None
    policy: str = SKIP
    _calendar: HolidayBase = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            calendar = _calendar(self.country, self.subdivision)
        except NotImplementedError as exc:
            raise DocumentError("invalid_working_days", f"working_days: {exc}") from None
        if self.policy not in POLICIES:
            raise DocumentError(
                "invalid_on_non_working_day",
                f"on_non_working_day must be one of {', '.join(POLICIES)}, got {self.policy!r}",
            )
        object.__setattr__(self, "_calendar", calendar)

    @classmethod
    def from_fields(cls, working_days: object, on_non_working_day: object = None) -> WorkingDays:
        """From the stored fields `working_days` ({"country": "DE", "subdivision": "BY"}) and
        `on_non_working_day` ("skip" when absent)."""
        if not isinstance(working_days, Mapping):
            raise DocumentError(
                "invalid_working_days",
                f"working_days must be a map with a country, got {working_days!r}",
            )
        fields: Mapping[str, Any] = working_days
        unknown = sorted(set(fields) - {"country", "subdivision"})
        country = fields.get("country")
        subdivision = fields.get("subdivision")
        if unknown or not isinstance(country, str) or not country.strip():
            raise DocumentError(
                "invalid_working_days",
                f"working_days needs a country code and at most a subdivision, got {fields!r}",
            )
        if subdivision is not None and (not isinstance(subdivision, str) or not subdivision):
            raise DocumentError(
                "invalid_working_days", f"working_days.subdivision {subdivision!r} is not a code"
            )
        policy = SKIP if on_non_working_day is None else on_non_working_day
        if not isinstance(policy, str):
            raise DocumentError(
                "invalid_on_non_working_day", f"on_non_working_day {policy!r} is not a string"
            )
        return cls(country.strip().upper(), subdivision, policy)

    def is_working_day(self, day: date) -> bool:
        return bool(self._calendar.is_working_day(day))

    def place(self, day: date) -> date | None:
        """The day an occurrence falling on `day` happens on: `day` itself if it is a working
        day; otherwise None (skip), or the next working day under `next_working_day`."""
        if self.is_working_day(day):
            return day
        if self.policy == SKIP:
            return None
        candidate = day + timedelta(days=1)
        while candidate - day <= MAX_SHIFT:
            if self.is_working_day(candidate):
                return candidate
            candidate += timedelta(days=1)
        return None
