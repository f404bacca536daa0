"""Pieces every domain shares: Firestore store, Slack transport, clock, settings, errors,
schedule math. Nothing here imports processor/, composer/, rotations/ or formatting/."""
