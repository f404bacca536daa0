"""Which occurrence of a message an operator may settle (processor.settle; what each action
writes is processor.occurrence_kind's): only the occurrence the message is on, a `sending`
message's lease occurrence, or a parked (`unconfirmed`, `failed`) message's newest ledger
entry. Settling an older one would take the message back from a newer occurrence (perhaps in
flight) and post the old one as well. New ledger entries of a message are only ever written
together with the message, so the settle's precondition on the message read covers this
answer too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from core.documents.deliveries import LedgerField
from core.documents.leases import LeaseField, lease_of
from core.documents.messages import MessageField, Status
from core.models import message_delivery_id
from core.runtime import Runtime
from core.store import DELIVERIES
from processor.settle import SettleRefused


def refuse_unless_current(
    rt: Runtime, delivery_id: str, entry: dict[str, Any], data: dict[str, Any]
) -> None:
    message_id = str(entry.get(LedgerField.MESSAGE_ID))
    status = data.get(MessageField.STATUS)
    if status == Status.SENDING:
        current = lease_of(data).get(LeaseField.OCCURRENCE_AT)
    else:
        current = newest_occurrence(rt.db, message_id)
    if current != entry.get(LedgerField.OCCURRENCE_AT):
        on = message_delivery_id(message_id, current) if isinstance(current, datetime) else None
        raise SettleRefused(
            f"delivery {delivery_id!r} is not the current occurrence of message "
            f"{message_id!r}: the message is {status!r} on {on!r}; settle that one instead"
        )


def newest_occurrence(db: firestore.Client, message_id: str) -> Any:
    """The occurrence of the message's newest ledger entry (None without one), through the
    (message_id, occurrence_at desc) index that the deliveries listing uses."""
    query = (
        db.collection(DELIVERIES)
        .where(filter=FieldFilter(LedgerField.MESSAGE_ID, "==", message_id))
        .order_by(LedgerField.OCCURRENCE_AT, direction=firestore.Query.DESCENDING)
        .limit(1)
    )
    return next((s.get(LedgerField.OCCURRENCE_AT) for s in query.stream()), None)
