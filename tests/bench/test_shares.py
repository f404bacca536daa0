"""bench.overlap's floor (the `shares` contender): N workers' shares of one due page are
disjoint and together the whole page, so the floor delivers everything once and no claim
of it can be lost to another worker."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from bench import seeding
from bench.contenders import Share
from tests.fixtures.clock import T0


def test_the_workers_shares_of_a_page_are_disjoint_and_cover_it(db: Any) -> None:
    seeded = seeding.seed(db, "sh-", 30, 30, T0, "SHARE", threads=2)
    now = T0 + timedelta(seconds=1)

    shares = [{snap.id for snap in Share.of(i, 3).due(db, now, 100)} for i in range(3)]

    assert sorted(id_ for share in shares for id_ in share) == sorted(s.doc_id for s in seeded)
    assert all(shares)  # 30 documents over 3 workers: none idle
