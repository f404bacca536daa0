"""The stored-document models (core.documents): statuses are enums that Firestore stores as
the contract's plain strings, and typed writes put exactly the keys, deletes and increments
they name on disk."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from enum import StrEnum
from typing import get_args

import pytest
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from composer.models import MessageDraft, RotationDraft
from composer.models import RotationStatus as ApiRotationStatus
from core.documents import channel_pacing, deliveries, idempotency_keys, messages, rotations
from core.documents.errors import StoredError
from core.documents.leases import Lease, LeaseField, LeasePatch
from core.documents.messages import WAITING, MessageField, MessageWrite, Status
from core.documents.write import DELETE, INCREMENT, UNSET, Write
from core.store import MESSAGES
from tests.fixtures.clock import T0


def test_an_enum_status_is_stored_read_and_queried_as_its_plain_string(
    db: firestore.Client,
) -> None:
    collection = db.collection(MESSAGES)
    collection.document("by-enum").set({"status": Status.RECURRING, "n": 1})
    collection.document("by-hand").set({"status": "recurring", "n": 2})

    stored = collection.document("by-enum").get().to_dict() or {}
    assert stored["status"] == "recurring"
    assert type(stored["status"]) is str  # read back as the contract's string, not an enum

    def ids(field_filter: FieldFilter) -> set[str]:
        return {snap.id for snap in collection.where(filter=field_filter).stream()}

    both = {"by-enum", "by-hand"}
    assert ids(FieldFilter(MessageField.STATUS, "==", Status.RECURRING)) == both
    assert ids(FieldFilter("status", "==", "recurring")) == both
    assert ids(FieldFilter(MessageField.STATUS, "in", list(WAITING))) == both
    assert ids(FieldFilter(MessageField.STATUS, "==", Status.PENDING)) == set()


def test_a_typed_write_stores_its_keys_deletes_increments_and_lease_paths(
    db: firestore.Client,
) -> None:
    ref = db.collection(MESSAGES).document("m1")
    ref.set(
        {
            "status": "sending",
            "sent_count": 2,
            "version": 7,
            "last_error": {"code": "x"},
            "lease": {"owner": "w1", "expires_at": T0},
        }
    )
    later = T0 + timedelta(minutes=5)
    write = MessageWrite(
        status=Status.SENT,
        sent_count=INCREMENT,
        version=INCREMENT,
        last_error=DELETE,
        lease=LeasePatch(expires_at=later, held_code="ledger_mismatch"),
    )
    ref.update(write.to_document())

    assert ref.get().to_dict() == {
        "status": "sent",
        "sent_count": 3,
        "version": 8,
        "lease": {"owner": "w1", "expires_at": later, "held_code": "ledger_mismatch"},
    }

    ref.update(MessageWrite(lease=Lease("w2", T0, occurrence_at=T0), attempts=0).to_document())
    stored = ref.get().to_dict() or {}
    assert stored["lease"] == {"owner": "w2", "expires_at": T0, "occurrence_at": T0}
    assert stored["attempts"] == 0


def test_an_error_map_keeps_the_contract_keys() -> None:
    assert StoredError("expired", "too late", T0).to_document() == {
        "code": "expired",
        "message": "too late",
        "at": T0,
    }
    assert LeaseField.EXPIRES_AT.path == "lease.expires_at"


_MODELS: list[tuple[type[Write], type[StrEnum]]] = [
    (messages.MessageWrite, messages.MessageField),
    (rotations.RotationWrite, rotations.RotationField),
    (deliveries.LedgerWrite, deliveries.LedgerField),
    (channel_pacing.SlotWrite, channel_pacing.PacingField),
    (idempotency_keys.KeyWrite, idempotency_keys.KeyField),
]


@pytest.mark.parametrize(("write", "names"), _MODELS)
def test_every_field_a_write_can_store_is_a_named_field_of_its_collection(
    write: type[Write], names: type[StrEnum]
) -> None:
    for field in dataclasses.fields(write):
        assert names(field.name).value == field.name
        assert field.default in (UNSET, dataclasses.MISSING)


def test_the_api_stores_only_fields_its_collections_name() -> None:
    """The API's bodies are stored field for field (composer.models): each is a field of
    its collection's model, and a rotation's `status` takes exactly RotationStatus's values."""
    for name in MessageDraft.model_fields:
        assert MessageField(name).value == name
    for name in RotationDraft.model_fields:
        assert rotations.RotationField(name).value == name
    assert set(get_args(ApiRotationStatus)) == set(rotations.RotationStatus)
