"""Names for the browser tests' ids, written to the directory cache in Firestore as a refresh
from Slack would leave them (core.documents.directory), so answers carry `names`."""

from __future__ import annotations

from typing import Any

from core.documents.directory import ChannelField, DirectoryList, RefreshField, UserField
from core.store import DIRECTORY_CHANNELS, DIRECTORY_REFRESH, DIRECTORY_USERS
from tests.fixtures.clock import T0
from tests.fixtures.rotations import ALICE, BOB, CAROL

PEOPLE = {
    ALICE: ("alice", "Alice Adams"),
    BOB: ("bob", "Bob Brown"),
    CAROL: ("carol", "Carol Chen"),
}
CHANNELS = {"C0123ABCD": "ops"}


def name_workspace(db: Any) -> None:
    """The rotations fixtures' people and channel, named, in lists refreshed to their end at
    T0 (so no read refreshes them from the Slack stand-in)."""
    for which in DirectoryList:
        db.collection(DIRECTORY_REFRESH).document(which).set(
            {RefreshField.GENERATION: 1, RefreshField.COMPLETED_AT: T0}
        )
    for ident, (handle, real_name) in PEOPLE.items():
        db.collection(DIRECTORY_USERS).document(ident).set(
            {
                UserField.NAME: handle,
                UserField.REAL_NAME: real_name,
                UserField.SORT_KEY: real_name.lower(),
                UserField.GENERATION: 1,
                UserField.UPDATED_AT: T0,
            }
        )
    for ident, name in CHANNELS.items():
        db.collection(DIRECTORY_CHANNELS).document(ident).set(
            {
                ChannelField.NAME: name,
                ChannelField.SORT_KEY: name,
                ChannelField.IS_PRIVATE: False,
                ChannelField.IS_MEMBER: True,
                ChannelField.GENERATION: 1,
                ChannelField.UPDATED_AT: T0,
            }
        )
