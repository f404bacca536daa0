"""`categories/{id}`: what kind of message a message is, for people's preferences and gates
(CONTRACT.md). Written by operators; read by the preferences API and the gates."""

from __future__ import annotations

import enum


class CategoryField(enum.StrEnum):
    LABEL = "label"  # shown to people in their preferences
    # 0 (default): exempt both ways. N > 0: not sent within N hours after another
    # quiet-window message to the same person, and once sent opens that window.
    QUIET_WINDOW_HOURS = "quiet_window_hours"
    DAILY_CAP = "daily_cap"  # optional: per person, per local day of the message's timezone
    OPT_OUT_ALLOWED = "opt_out_allowed"  # default true; false for must-read categories
