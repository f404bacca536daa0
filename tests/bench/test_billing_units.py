"""The benchmark's Firestore billing units (bench/rpc.py), counted at the client's channel
against the real emulator: what Firestore's pricing bills, not the RPCs."""

from __future__ import annotations

import pytest
from google.api_core.exceptions import Conflict
from google.cloud import firestore

from bench.rpc import CountedClient, RpcCounter


@pytest.fixture
def counted(project: str) -> tuple[CountedClient, RpcCounter]:
    counter = RpcCounter()
    return CountedClient(project, counter), counter


def test_a_query_bills_each_document_it_returns_and_one_when_it_returns_none(
    counted: tuple[CountedClient, RpcCounter], db: firestore.Client
) -> None:
    client, counter = counted
    for n in range(3):
        db.collection("things").document(f"t{n}").set({"n": n})
    list(client.collection("things").stream())
    list(client.collection("things").where(filter=firestore.FieldFilter("n", ">", 9)).stream())
    assert counter.snapshot()["billing"]["reads"] == 3 + 1


def test_gets_bill_one_read_per_document_found_or_missing(
    counted: tuple[CountedClient, RpcCounter], db: firestore.Client
) -> None:
    client, counter = counted
    db.collection("things").document("here").set({"n": 1})
    refs = [client.collection("things").document(d) for d in ("here", "gone")]
    list(client.get_all(refs))
    assert counter.snapshot()["billing"]["reads"] == 2


def test_writes_are_billed_per_document_and_a_refused_commit_bills_none(
    counted: tuple[CountedClient, RpcCounter],
) -> None:
    client, counter = counted
    batch = client.batch()
    for n in range(3):
        batch.set(client.collection("things").document(f"t{n}"), {"n": n})
    batch.commit()
    client.collection("things").document("t0").delete()
    refused = client.batch()
    refused.create(client.collection("things").document("t1"), {"n": 9})  # exists already
    refused.update(client.collection("things").document("t2"), {"n": 9})
    with pytest.raises(Conflict):
        refused.commit()
    billing = counter.snapshot()["billing"]
    assert (billing["writes"], billing["deletes"], billing["refused_writes"]) == (3, 1, 2)


def test_reads_and_writes_are_told_apart_by_collection(
    counted: tuple[CountedClient, RpcCounter], db: firestore.Client
) -> None:
    client, counter = counted
    db.collection("people").document("U1").set({"n": 1})
    db.collection("things").document("t").set({"n": 1})
    refs = [client.collection(c).document(d) for c, d in (("people", "U1"), ("people", "U2"))]
    list(client.get_all([*refs, client.collection("categories").document("nudge")]))
    list(client.collection("things").stream())
    client.collection("people").document("U1").set({"n": 2})
    snapshot = counter.snapshot()
    assert snapshot["reads_by_collection"] == {"people": 2, "categories": 1, "things": 1}
    assert snapshot["writes_by_collection"] == {"people": 1}
