"""`preferences/{user id}`: what one person does not want (CONTRACT.md). Written through the
API (`PUT /preferences/{user}`); read by the opted-out gate."""

from __future__ import annotations

import enum


class PreferenceField(enum.StrEnum):
    OPTED_OUT = "opted_out"  # category ids this person does not want
