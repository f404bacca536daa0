"""What `make run` keeps between runs (emulator/local_data.py), against the real emulator:
documents written in one run are there in the next, the admin token stays the same, and
RESET forgets both."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from google.cloud import firestore

from emulator.firestore import FirestoreEmulator
from emulator.local_data import LocalData, SavedOnStop

# Each test starts emulator processes of its own (a restart is what is tested).
pytestmark = pytest.mark.emulator

PROJECT = "demo-kept"


def client(emulator: FirestoreEmulator, monkeypatch: pytest.MonkeyPatch) -> firestore.Client:
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", emulator.host_port)
    return firestore.Client(project=PROJECT)


def run_once(
    kept: LocalData, monkeypatch: pytest.MonkeyPatch, write: dict[str, dict[str, object]]
) -> dict[str, dict[str, object] | None]:
    """One `make run`: start on what is kept, read every document, write `write`, stop."""
    emulator = FirestoreEmulator(import_data=kept.firestore_import())
    with emulator:
        db = client(emulator, monkeypatch)
        seen = {doc.id: doc.to_dict() for doc in db.collection("scheduled_messages").stream()}
        for doc_id, data in write.items():
            db.collection("scheduled_messages").document(doc_id).set(data)
        SavedOnStop(kept, emulator.host_port, PROJECT).stop()
    return seen


def test_documents_written_in_one_run_are_read_in_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = LocalData(tmp_path / ".run")

    assert run_once(kept, monkeypatch, {"m1": {"text": "first run"}}) == {}
    second = run_once(kept, monkeypatch, {"m2": {"text": "second run"}})
    third = run_once(kept, monkeypatch, {})

    assert second == {"m1": {"text": "first run"}}
    assert third == {"m1": {"text": "first run"}, "m2": {"text": "second run"}}


def test_reset_starts_clean_with_a_new_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = LocalData(tmp_path / ".run")
    token = kept.admin_token()
    run_once(kept, monkeypatch, {"m1": {"text": "kept"}})

    kept.reset()

    assert kept.firestore_import() is None
    assert run_once(kept, monkeypatch, {}) == {}
    assert kept.admin_token() != token


def test_the_admin_token_is_kept_and_readable_by_its_owner_only(tmp_path: Path) -> None:
    kept = LocalData(tmp_path / ".run")

    token = kept.admin_token()

    assert len(token) >= 32
    assert LocalData(tmp_path / ".run").admin_token() == token  # the next run's
    mode = stat.S_IMODE((tmp_path / ".run" / "admin-token").stat().st_mode)
    assert mode == 0o600
