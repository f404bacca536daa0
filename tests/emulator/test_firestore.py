"""The Firestore emulator harness against the real emulator and the real client library."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud import firestore

from emulator import firestore as harness
from emulator.firestore import FirestoreEmulator
from tests.fixtures.runtime import ROOT

# Each test starts an emulator process (or the harness around one) of its own.
pytestmark = pytest.mark.emulator


@pytest.fixture(scope="module")
def emulator() -> Iterator[FirestoreEmulator]:
    emu = FirestoreEmulator()
    started = time.monotonic()
    emu.start()
    # Visible with -s or on failure; the startup cost every emulator-backed test pays.
    print(f"Firestore emulator started in {time.monotonic() - started:.2f}s on {emu.host_port}")
    try:
        yield emu
    finally:
        emu.stop()


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback http
        return response.status, response.read()


def _port_closed(host_port: str) -> bool:
    host, port = host_port.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return False
    except OSError:
        return True


def test_root_answers_ok(emulator: FirestoreEmulator) -> None:
    assert emulator.host_port == f"127.0.0.1:{emulator.port}"
    assert _get(f"http://{emulator.host_port}/") == (200, b"Ok\n")


def test_write_read_clear_is_isolated_by_project(
    emulator: FirestoreEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", emulator.host_port)
    client = firestore.Client(project="demo-test")
    other = firestore.Client(project="demo-other")
    try:
        doc = client.collection("scheduled_messages").document("m1")
        doc.set({"channel": "C123", "text": "hello", "minute": 540})
        other_doc = other.collection("scheduled_messages").document("m1")
        other_doc.set({"channel": "C999"})

        assert doc.get().to_dict() == {"channel": "C123", "text": "hello", "minute": 540}

        emulator.clear("demo-test")

        assert not doc.get().exists
        assert list(client.collection("scheduled_messages").stream()) == []
        assert other_doc.get().to_dict() == {"channel": "C999"}

        harness.clear(emulator.host_port, "demo-other")
        assert not other_doc.get().exists
    finally:
        client.close()
        other.close()


def test_context_manager_stops_the_whole_group() -> None:
    with FirestoreEmulator() as emu:
        assert emu._process is not None
        pgid = emu._process.pid
        log_path = emu.log_path
        assert log_path is not None and log_path.is_file()
        assert _get(f"http://{emu.host_port}/")[0] == 200
    # No process of the emulator's group is left, so nothing of it holds its port; the port
    # itself is not probed here, as any other test's server may take a freed port at once
    # (seen once in a full run: a listener answered on the port after the group was gone).
    assert not harness._group_alive(pgid)
    assert not log_path.exists()
    emu.stop()  # a second stop is harmless


def test_exit_before_ready_raises_with_output_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jar = tmp_path / "empty.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    monkeypatch.setenv(harness.BINARY_PATH_ENV, str(jar))

    emu = FirestoreEmulator()
    with pytest.raises(RuntimeError, match="exited with code") as info:
        emu.start(timeout=30)
    assert "Could not find or load main class" in str(info.value)
    assert emu._process is None


def test_timeout_kills_the_whole_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = tmp_path / "pgid"
    # A shell that never answers HTTP and has a child of its own, like gcloud -> java.
    script = f"echo $$ > {pid_file}; echo starting up; sleep 300 & sleep 300"
    monkeypatch.setattr(harness, "_command", lambda host, port: ["sh", "-c", script])

    emu = FirestoreEmulator()
    with pytest.raises(RuntimeError, match=r"did not answer .* within 1s") as info:
        emu.start(timeout=1)
    assert "starting up" in str(info.value)
    assert not harness._group_alive(int(pid_file.read_text()))


def test_port_in_use_is_refused() -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        with pytest.raises(RuntimeError, match="in use"):
            FirestoreEmulator(port=port).start()


def test_command_line_runs_until_sigterm() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "emulator.firestore", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        assert lines[1].startswith("export FIRESTORE_EMULATOR_HOST=127.0.0.1:"), lines
        host_port = lines[1].strip().split("=", 1)[1]
        assert _get(f"http://{host_port}/") == (200, b"Ok\n")

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert _port_closed(host_port)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
