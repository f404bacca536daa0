"""core.snapshot_codec: a document as the emulator returned it comes back from its bytes
with the same data (every type Firestore stores), reference and times, and bytes that are
no snapshot of this database are refused."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest
from google.api_core.exceptions import FailedPrecondition
from google.cloud import firestore
from google.cloud.firestore_v1 import GeoPoint
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.types import Document
from google.cloud.firestore_v1.vector import Vector
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.snapshot_codec import Undecodable, decode, encode
from core.store import MESSAGES

_INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_TIMES = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    _INT64,
    st.floats(allow_nan=False),
    _TIMES,
    st.text(),
    st.binary(max_size=64),
    st.builds(
        GeoPoint,
        st.floats(min_value=-90, max_value=90),
        st.floats(min_value=-180, max_value=180),
    ),
)
_KEYS = st.text(min_size=1, max_size=8).filter(lambda k: not k.startswith("__"))
# Arrays hold no arrays directly (Firestore refuses them); maps hold anything.
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(st.one_of(_SCALARS, st.dictionaries(_KEYS, inner, max_size=3)), max_size=4),
        st.dictionaries(_KEYS, inner, max_size=4),
    ),
    max_leaves=12,
)


def read_back(db: firestore.Client, doc_id: str, fields: dict[str, Any]) -> Any:
    """The document written, as a query returns it (what a tick publishes from)."""
    db.collection(MESSAGES).document(doc_id).set(fields)
    same = FieldFilter("__name__", "==", db.document(MESSAGES, doc_id))
    (snap,) = db.collection(MESSAGES).where(filter=same).get()
    return snap


def assert_same(decoded: Any, snap: Any) -> None:
    assert decoded.exists
    assert decoded.reference == snap.reference
    assert decoded.reference.path == f"{MESSAGES}/{snap.id}"
    assert decoded.to_dict() == snap.to_dict()
    assert (decoded.create_time, decoded.update_time) == (snap.create_time, snap.update_time)
    assert decoded.update_time.nanosecond == snap.update_time.nanosecond


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(fields=st.dictionaries(_KEYS, _VALUES, max_size=6))
def test_any_stored_document_round_trips(db: firestore.Client, fields: dict[str, Any]) -> None:
    snap = read_back(db, "any", fields)

    assert_same(decode(db, encode(snap)), snap)


def test_every_firestore_type_round_trips_by_name(db: firestore.Client) -> None:
    fields = {
        "null": None,
        "bool": True,
        "int": -(2**63),
        "double": 2.5,
        "infinite": -math.inf,
        "timestamp": datetime(2027, 1, 4, 8, 30, 0, 123456, tzinfo=UTC),
        "string": "Grüße 👋 <@U0ALICE>",
        "bytes": b"\x00\xff",
        "reference": db.collection("channel_pacing").document("C0123ABCD"),
        "geo_point": GeoPoint(52.52, 13.405),
        "array": [1, "two", {"three": [3.0]}],
        "map": {"nested": {"deeper": [None, False]}},
        "empty_map": {},
        "empty_array": [],
        "vector": Vector([0.5, 1.5]),
    }
    snap = read_back(db, "every-type", fields)
    assert set(snap.to_dict()) == set(fields)

    decoded = decode(db, encode(snap))

    assert_same(decoded, snap)
    data = decoded.to_dict() or {}
    assert data["reference"].path == "channel_pacing/C0123ABCD"
    assert data["timestamp"] == fields["timestamp"]


def test_a_decoded_snapshot_keeps_the_version_it_was_read_at(db: firestore.Client) -> None:
    old = read_back(db, "edited", {"text": "before"})
    carried = encode(old)
    db.collection(MESSAGES).document("edited").update({"text": "after"})

    decoded = decode(db, carried)

    assert decoded.to_dict() == {"text": "before"}
    assert decoded.update_time == old.update_time
    with pytest.raises(FailedPrecondition):  # what a claim from it meets (processor.claim)
        decoded.reference.update(
            {"text": "claimed"}, option=db.write_option(last_update_time=decoded.update_time)
        )


def _document(db: firestore.Client, name: str, **times: Any) -> bytes:
    serialized: bytes = Document.serialize(Document(name=name, **times))
    return serialized


@pytest.mark.parametrize(
    ("blob", "detail"),
    [
        (b"\xff\xff\xff", "not a Firestore Document"),
        (b"", "names no document"),
        ("other-project", "names no document"),
        ("collection-only", "not a document's path"),
        ("no-times", "no create and update time"),
    ],
)
def test_bytes_that_are_no_snapshot_of_this_database_are_refused(
    db: firestore.Client, blob: Any, detail: str
) -> None:
    documents = f"{db._database_string}/documents"
    now = datetime(2027, 1, 4, tzinfo=UTC)
    times = {"create_time": now, "update_time": now}
    blobs = {
        "other-project": _document(
            db, f"projects/elsewhere/databases/(default)/documents/{MESSAGES}/m1", **times
        ),
        "collection-only": _document(db, f"{documents}/{MESSAGES}", **times),
        "no-times": _document(db, f"{documents}/{MESSAGES}/m1"),
    }

    with pytest.raises(Undecodable, match=detail):
        decode(db, blobs.get(blob, blob))
