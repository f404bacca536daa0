"""Notify-once events (`POST /events`) as a kind of send on the one pipeline."""
