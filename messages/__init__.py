"""Scheduled messages: one kind of send (processor.abc.Kind), its claim, its catch-up after
an outage and its pass."""
