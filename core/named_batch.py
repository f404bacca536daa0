"""A Firestore write batch whose results are read back by the document each write was for,
not by its position in the batch: a claim's batch holds the subject's write, its ledger
entry's, a channel's pacing slots, missed records and a person's gates, and each part asks
for its own document's new update time (its fence for the writes that follow)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.cloud import firestore


@dataclass(frozen=True)
class Landed:
    """A committed batch: the update time it left on each document it wrote."""

    versions: dict[str, Any]

    def version(self, ref: firestore.DocumentReference) -> Any:
        return self.versions[ref.path]


class NamedBatch:
    """firestore.WriteBatch's create, update and set, one write per document."""

    def __init__(self, db: firestore.Client) -> None:
        self._batch = db.batch()
        self._paths: list[str] = []

    def create(self, ref: firestore.DocumentReference, fields: dict[str, Any]) -> None:
        self._batch.create(ref, fields)
        self._paths.append(ref.path)

    def update(
        self, ref: firestore.DocumentReference, fields: dict[str, Any], option: Any = None
    ) -> None:
        self._batch.update(ref, fields, option=option)
        self._paths.append(ref.path)

    def set(self, ref: firestore.DocumentReference, fields: dict[str, Any], merge: bool) -> None:
        self._batch.set(ref, fields, merge=merge)
        self._paths.append(ref.path)

    def commit(self) -> Landed:
        """Commit every write at once (or none: the client's exceptions as they come)."""
        results = self._batch.commit()
        return Landed({path: r.update_time for path, r in zip(self._paths, results, strict=True)})
