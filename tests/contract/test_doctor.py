"""`doctor` finds a document of every kind that no pass will ever send as stored: a claimed
one whose lease is not a map (reconciliation never settles it), a waiting one whose
`next_run_at` is not a timestamp (the due query never finds it). A healthy one beside it is
not reported."""

from __future__ import annotations

import json

import pytest

from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.doctor import run_doctor
from tests.contract.subjects import CHANNEL

BROKEN = {"lease_not_a_map": "invalid_lease", "next_run_at_not_a_timestamp": "invalid_next_run_at"}


@pytest.mark.parametrize("broken", BROKEN)
def test_the_doctor_finds_a_broken_document_of_every_kind(rt, world, subject, broken, capsys):
    healthy = subject.seed(world, "C0HEALTHY", {})
    seeded = subject.seed(world, CHANNEL, {})
    ref = world.db.collection(subject.kind.collection).document(seeded.id)
    if broken == "lease_not_a_map":
        assert isinstance(claim_occurrence(rt, subject.kind, ref.get()), Claim)
        ref.update({"lease": "held by nobody"})
    else:
        ref.update({"next_run_at": "soon"})
    capsys.readouterr()

    assert run_doctor(rt, [subject.kind], apply=False, as_json=True) == 1

    findings = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(f["collection"], f["id"], f["code"]) for f in findings] == [
        (subject.kind.collection, seeded.id, BROKEN[broken])
    ]
    assert healthy.id != seeded.id
