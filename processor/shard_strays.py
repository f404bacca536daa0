"""Due documents in no shard of the due scan, put in their shard by the pass (SHARDS above 1).

CONTRACT.md lets other services write `scheduled_messages` straight to Firestore, and they
need not know the `shard` field that the sharded due scan filters on (docs/sharding.md); a
document may also keep a shard from a larger SHARDS. No shard's query finds such a document,
and Firestore cannot query for a field a document lacks. So the oldest due page is read
through the unsharded (status, next_run_at) index (core.queues.Queue.outside_shards), and
each stray found there is put in its shard (`shard_of` its id), one log line each (`status:
adopted`); every later occurrence of a series is in its shard from then on.

- The inline pass adopts before each due scan (processor.kind_pass), whose due scan then
  finds the stray: no later than a pass with SHARDS=1 would have, when it is among the
  oldest TICK_LIMIT due.
- Under DISPATCH=pubsub, the scan of shard 0 adopts when its sweep runs (processor.scan,
  every SWEEP_EVERY), not every tick: the read costs about one document per waiting
  document, which a tick must not pay during a backlog. The adoption stamps `updated_at`,
  so the next scan of the stray's shard publishes it as written since.

The write is conditioned on the version read, so an edit or a claim in between wins and the
next pass looks again; a failed read or write is counted in the pass's `errors` and logged,
and does not keep the pass from what is due.
"""

from __future__ import annotations

from collections import Counter

from google.api_core.exceptions import FailedPrecondition, NotFound

from core import logs
from core.documents.subjects import SubjectField, SubjectWrite
from core.runtime import Runtime
from core.shards import shard_of
from core.store import Snapshot
from processor.abc import Kind
from processor.pass_counts import io_error


def adopt_strays(rt: Runtime, kind: Kind, shards: int) -> Counter[str]:
    """Put `kind`'s due documents that no query of `shards` shards finds in their shard; the
    pass's counts (`errors` when the read or a write failed). Nothing is read with one
    shard."""
    counts: Counter[str] = Counter()
    try:
        strays = kind.queue.outside_shards(rt.db, rt.clock.now(), rt.settings.tick_limit, shards)
        for snap in strays:
            _adopt(rt, kind, snap, shard_of(snap.id, shards))
    except Exception as exc:
        what = "putting due documents without a usable shard in their shard failed"
        io_error(counts, what, exc, collection=kind.collection)
    return counts


def _adopt(rt: Runtime, kind: Kind, snap: Snapshot, shard: int) -> None:
    stored = (snap.to_dict() or {}).get(SubjectField.SHARD)
    try:
        snap.reference.update(
            SubjectWrite(shard=shard).stamped(rt.clock.now()).to_document(),
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
    except (FailedPrecondition, NotFound):
        return  # written since it was read: the next pass looks again
    logs.info(
        "due document in no shard of the due scan; put in its shard",
        collection=kind.collection,
        **{kind.id_field: snap.id},
        stored_shard=stored,
        shard=shard,
        status="adopted",
    )
