"""What `make run` keeps between runs, in one git-ignored folder (`.run/` at the repository's
root): the Firestore emulator's documents and the run's admin token, so messages, rotations
and their history survive a restart, and a browser tab that holds the token stays signed in.
`make run RESET=1` deletes the folder first: a clean start with a new token.

The documents are exported when `make run` stops (Ctrl-C, SIGTERM) and imported when it
starts. The export goes to a fresh folder that replaces the kept one only once it is
complete, so a run killed mid-export still finds the previous export.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path
from typing import Any

from google.api_core.exceptions import AlreadyExists
from google.cloud import firestore

from emulator.firestore import export

TOKEN_FILE = "admin-token"  # noqa: S105 - a file name, not a secret
FIRESTORE_DIR = "firestore"
_WRITING = "firestore.writing"
_REPLACED = "firestore.old"


class LocalData:
    """The kept folder `root` (created on first use)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def reset(self) -> None:
        """Forget everything kept: the next run starts clean, with a new token."""
        shutil.rmtree(self.root, ignore_errors=True)

    def admin_token(self) -> str:
        """The kept token, or a new one kept from now on (readable by its owner only)."""
        path = self.root / TOKEN_FILE
        if path.is_file():
            kept = path.read_text().strip()
            if kept:
                return kept
        self.root.mkdir(parents=True, exist_ok=True)
        token = secrets.token_urlsafe(24)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(token + "\n")
        return token

    def firestore_import(self) -> Path | None:
        """The metadata file of the kept export (what the emulator imports), if any; the one
        being replaced when a run was killed between the two renames of save_firestore."""
        for name in (FIRESTORE_DIR, _REPLACED):
            found = sorted((self.root / name).glob("*/*.overall_export_metadata"))
            if found:
                return found[-1]
        return None

    def save_firestore(self, host_port: str, project: str) -> Path:
        """Export `project` from the emulator at host_port and keep it in place of the last
        export; returns the new export's metadata file."""
        writing, kept, old = (self.root / name for name in (_WRITING, FIRESTORE_DIR, _REPLACED))
        shutil.rmtree(writing, ignore_errors=True)
        writing.mkdir(parents=True)
        export(host_port, project, writing)
        shutil.rmtree(old, ignore_errors=True)
        if kept.exists():
            kept.rename(old)
        writing.rename(kept)
        shutil.rmtree(old, ignore_errors=True)
        found = self.firestore_import()
        assert found is not None  # export() raised otherwise
        return found


class SavedOnStop:
    """On `make run`'s stack just above the emulator: stopped before it, it exports the
    documents while the emulator still answers (and after every function server stopped, so
    nothing writes meanwhile)."""

    def __init__(self, data: LocalData, host_port: str, project: str) -> None:
        self.data, self.host_port, self.project = data, host_port, project

    def stop(self) -> None:
        # Never raises: the emulator below it on the stack must still be stopped.
        try:
            saved = self.data.save_firestore(self.host_port, self.project)
        except (RuntimeError, OSError) as exc:
            print(f"could not keep the emulator's documents: {exc}", flush=True)
        else:
            print(f"kept the emulator's documents in {saved.parent.parent}", flush=True)


def create_once(ref: firestore.DocumentReference, data: dict[str, Any], what: str) -> None:
    """Seed one example: created unless it exists (Firestore's create precondition), so one
    kept from an earlier run (edited, sent) stays as it is and is never sent again."""
    try:
        ref.create(data)
    except AlreadyExists:
        print(f"kept {ref.id} from an earlier run", flush=True)
    else:
        print(f"seeded {ref.id}: {what}", flush=True)
