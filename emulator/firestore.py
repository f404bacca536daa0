"""Run the Cloud Firestore emulator that ships with the Google Cloud CLI.

Tests and `make run` need a real Firestore to talk to; the emulator is the official one,
so what passes here behaves like production rather than like a hand-written fake.

How the emulator is launched, first match wins:

1. ``FIRESTORE_EMULATOR_BINARY_PATH`` names a local jar (the Firebase CLI reads the same
   variable, so one setting serves both tools); it is run with ``java``.
2. ``gcloud`` on PATH: ``gcloud emulators firestore start --host-port=HOST:PORT``.
3. The jar inside a Cloud SDK found on disk, run with ``java`` as the SDK's own
   ``cloud_firestore_emulator`` script does.

Command line: ``python -m emulator.firestore --port 8686`` runs it in the foreground until
Ctrl-C or SIGTERM and prints the ``FIRESTORE_EMULATOR_HOST`` line to export.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from types import FrameType
from typing import Self

from emulator.service import Service

__all__ = ["BINARY_PATH_ENV", "FirestoreEmulator", "clear", "export"]

BINARY_PATH_ENV = "FIRESTORE_EMULATOR_BINARY_PATH"

# The SDK jar has no Main-Class in its manifest, so `java -jar` refuses it; this is the
# class the SDK's cloud_firestore_emulator script names with -cp.
_MAIN_CLASS = "com.google.cloud.datastore.emulator.firestore.CloudFirestore"
_JAR_IN_SDK = Path("platform", "cloud-firestore-emulator", "cloud-firestore-emulator.jar")
# Where installers put the SDK when there is no gcloud on PATH to ask.
_SDK_ROOTS = (
    Path("/usr/lib/google-cloud-sdk"),
    Path("/usr/share/google-cloud-sdk"),
    Path("/opt/google-cloud-sdk"),
    Path.home() / "google-cloud-sdk",
)
_READY_BODY = b"Ok"
_TAIL_LINES = 30
_STOP_GRACE = 10.0

# A developer's HTTP(S)_PROXY must not swallow requests meant for a loopback emulator.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _free_port(host: str) -> int:
    with socket.create_server((host, 0), family=_family(host)) as sock:
        port: int = sock.getsockname()[1]
        return port


def _port_in_use(host: str, port: int) -> bool:
    # Without this, a stranger already answering "Ok" on the port would pass the readiness
    # check while our own emulator dies on the bind.
    try:
        with socket.create_server((host, port), family=_family(host)):
            return False
    except OSError:
        return True


def _java() -> str:
    # JAVA is what the SDK's own launcher script honours, so follow it too.
    java = os.environ.get("JAVA") or shutil.which("java")
    if not java:
        raise RuntimeError("java not found: the Firestore emulator jar needs a JRE on PATH")
    return java


def _java_command(jar: Path, host: str, port: int) -> list[str]:
    # Firebase's jar is runnable with -jar, the SDK's only with -cp and the class name.
    try:
        with zipfile.ZipFile(jar) as archive:
            manifest = archive.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except KeyError:
        manifest = ""
    except zipfile.BadZipFile as exc:
        raise RuntimeError(f"{jar} is not a jar: {exc}") from exc
    launch = ["-jar", str(jar)] if "Main-Class:" in manifest else ["-cp", str(jar), _MAIN_CLASS]
    # The emulator only has English messages; the flag matches the SDK's launcher.
    return [_java(), "-Duser.language=en", *launch, "start", f"--host={host}", f"--port={port}"]


def _sdk_jar() -> Path | None:
    for root in _SDK_ROOTS:
        if (root / _JAR_IN_SDK).is_file():
            return root / _JAR_IN_SDK
    return None


def _command(host: str, port: int) -> list[str]:
    """The argv that starts the emulator on host:port, in the order the module doc gives."""
    override = os.environ.get(BINARY_PATH_ENV)
    if override:
        jar = Path(override).expanduser()
        if not jar.is_file():
            raise RuntimeError(f"{BINARY_PATH_ENV}={override} is not a file")
        return _java_command(jar, host, port)
    gcloud = shutil.which("gcloud")
    if gcloud:
        # --quiet: a prompt (e.g. to install a component) would hang with no terminal.
        return [
            gcloud,
            "--quiet",
            "emulators",
            "firestore",
            "start",
            f"--host-port={_authority(host, port)}",
        ]
    sdk_jar = _sdk_jar()
    if sdk_jar is None:
        raise RuntimeError(
            "Firestore emulator not found: install the Google Cloud CLI with its "
            f"cloud-firestore-emulator component, or set {BINARY_PATH_ENV} to the jar"
        )
    return _java_command(sdk_jar, host, port)


def _request(method: str, url: str, timeout: float) -> tuple[int, bytes]:
    request = urllib.request.Request(url, method=method)  # noqa: S310 - an http URL built here
    with _opener.open(request, timeout=timeout) as response:
        status: int = response.status
        return status, response.read()


def clear(host_port: str, project: str) -> None:
    """Delete every document of `project` in the emulator at host_port (other projects stay)."""
    url = (
        f"http://{host_port}/emulator/v1/projects/{urllib.parse.quote(project, safe='')}"
        "/databases/(default)/documents"
    )
    try:
        status, body = _request("DELETE", url, timeout=30)
    except urllib.error.URLError as exc:
        raise RuntimeError(f"clearing Firestore emulator at {host_port} failed: {exc}") from exc
    if status != 200:
        raise RuntimeError(f"clearing Firestore emulator at {host_port}: HTTP {status} {body!r}")


def export(host_port: str, project: str, directory: Path) -> Path:
    """Write every document of `project` to a new folder inside `directory` (which must exist),
    as the emulator's own export does; returns the export's metadata file, the path that
    `FirestoreEmulator(import_data=...)` loads. `--export-on-exit` is not used: the emulator
    this SDK ships writes nothing when it is stopped by a signal."""
    url = f"http://{host_port}/emulator/v1/projects/{urllib.parse.quote(project, safe='')}:export"
    body = {
        "database": f"projects/{project}/databases/(default)",
        "export_directory": str(directory.resolve()),
    }
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with _opener.open(request, timeout=60) as response:
            response.read()
    except urllib.error.URLError as exc:
        raise RuntimeError(f"exporting Firestore emulator at {host_port} failed: {exc}") from exc
    found = sorted(directory.glob("*/*.overall_export_metadata"))
    if not found:
        raise RuntimeError(f"the Firestore emulator at {host_port} wrote no export to {directory}")
    return found[-1]


def _signal_group(pgid: int, signum: int) -> None:
    # The whole group may already be gone; that is the outcome we wanted.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


def _group_alive(pgid: int) -> bool:
    # An exited child of an exited parent can sit as a zombie in the group until init reaps
    # it, and killpg(pgid, 0) still finds zombies; /proc tells them apart where it exists.
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for stat in proc.glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        # The command name in parentheses may contain spaces; fields resume after ')'.
        fields = text[text.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


class FirestoreEmulator(Service):
    """One emulator process (group) on host:port; port 0 picks a free one. Another emulator
    of the Cloud SDK that answers `GET /` with "Ok" is run the same way by overriding `name`
    and `command` (emulator.pubsub)."""

    name = "Firestore emulator"

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        rules: Path | None = None,
        import_data: Path | None = None,
    ) -> None:
        self.host = host
        self.port = port or _free_port(host)
        # Security rules apply to client-SDK requests only; server clients bypass them.
        self.rules = rules
        # An export's metadata file (`export()` returns it): loaded before the first request.
        self.import_data = import_data
        self._process: subprocess.Popen[bytes] | None = None
        self._log_dir: Path | None = None

    @property
    def host_port(self) -> str:
        """The value for FIRESTORE_EMULATOR_HOST."""
        return _authority(self.host, self.port)

    @property
    def pid(self) -> int | None:
        """The group leader's pid, which is also the group's id (None when not running)."""
        return None if self._process is None else self._process.pid

    @property
    def log_path(self) -> Path | None:
        """The emulator's combined stdout/stderr while it runs (removed by stop())."""
        return None if self._log_dir is None else self._log_dir / "emulator.log"

    def start(self, timeout: float = 60) -> None:
        """Launch the emulator and return once it answers; RuntimeError if it never does."""
        if self._process is not None:
            raise RuntimeError(f"{self.name} already started on {self.host_port}")
        if _port_in_use(self.host, self.port):
            raise RuntimeError(f"cannot start {self.name}: {self.host_port} is in use")
        command = self.command()
        self._log_dir = Path(tempfile.mkdtemp(prefix="emulator-"))
        log_path = self._log_dir / "emulator.log"
        # A file, not a PIPE: nobody drains a pipe while tests run, and a full pipe would
        # block the emulator mid-write.
        with log_path.open("wb") as log:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Anything the emulator drops in its working directory lands with its log.
                cwd=self._log_dir,
                # gcloud runs a shell script that runs java: a group of its own lets stop()
                # reach all three, and keeps a terminal's Ctrl-C for our process alone.
                start_new_session=True,
            )
        atexit.register(self.stop)
        self._wait_ready(command, timeout)

    def command(self) -> list[str]:
        """The argv that starts the emulator on host:port."""
        command = _command(self.host, self.port)
        if self.rules is not None:
            command.append(f"--rules={self.rules.resolve()}")  # gcloud and the jar agree
        if self.import_data is not None:
            command.append(f"--import-data={self.import_data.resolve()}")  # so do these
        return command

    def _wait_ready(self, command: list[str], timeout: float) -> None:
        assert self._process is not None
        url = f"http://{self.host_port}/"
        deadline = time.monotonic() + timeout
        while True:
            code = self._process.poll()
            if code is not None:
                message = self._failure(f"exited with code {code} before answering", command)
                self.stop()
                raise RuntimeError(message)
            try:
                status, body = _request("GET", url, timeout=2)
                if status == 200 and body.strip() == _READY_BODY:
                    return
            except (urllib.error.URLError, OSError):
                pass  # not listening yet
            if time.monotonic() >= deadline:
                message = self._failure(f"did not answer {url} within {timeout:g}s", command)
                self.stop()
                raise RuntimeError(message)
            time.sleep(0.1)

    def _failure(self, what: str, command: list[str]) -> str:
        return (
            f"{self.name} {what}\ncommand: {' '.join(command)}\n"
            f"last lines of its output:\n{self._tail()}"
        )

    def _tail(self, lines: int = _TAIL_LINES) -> str:
        """The last lines the emulator printed, for error messages."""
        path = self.log_path
        if path is None or not path.is_file():
            return "(no output)"
        with path.open("rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - 16_384))
            text = log.read().decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-lines:]) or "(no output)"

    def stop(self) -> None:
        """Terminate the whole process group and wait for it; safe to call twice."""
        process, self._process = self._process, None
        atexit.unregister(self.stop)
        try:
            if process is not None:
                self._stop_group(process)
        finally:
            if self._log_dir is not None:
                shutil.rmtree(self._log_dir, ignore_errors=True)
                self._log_dir = None

    @staticmethod
    def _stop_group(process: subprocess.Popen[bytes]) -> None:
        # The group id is the leader's pid (start_new_session), and stays valid after the
        # leader exits for as long as java, its grandchild, lives.
        pgid = process.pid
        _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + _STOP_GRACE
        # The leader is our child: until poll() reaps it, it counts as alive in the group.
        while process.poll() is None or _group_alive(pgid):
            if time.monotonic() >= deadline:
                _signal_group(pgid, signal.SIGKILL)
                process.wait()
                return
            time.sleep(0.05)

    def clear(self, project: str) -> None:
        """Delete every document of `project`; other projects keep theirs."""
        clear(self.host_port, project)

    def __enter__(self) -> Self:
        if self._process is None:
            self.start()
        return self


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m emulator.firestore",
        description="Run the Cloud Firestore emulator in the foreground until Ctrl-C/SIGTERM.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8686, help="0 picks a free port")
    parser.add_argument("--timeout", type=float, default=60, help="seconds to wait for it")
    args = parser.parse_args(argv)

    # SIGTERM (from make, docker, systemd) takes the same clean path as Ctrl-C.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    emulator = FirestoreEmulator(args.host, args.port)
    try:
        emulator.start(timeout=args.timeout)
        print(f"Firestore emulator running; log: {emulator.log_path}", flush=True)
        print(f"export FIRESTORE_EMULATOR_HOST={emulator.host_port}", flush=True)
        assert emulator._process is not None
        code = emulator._process.wait()
        print(f"Firestore emulator exited with code {code}:", file=sys.stderr)
        print(emulator._tail(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        emulator.stop()


if __name__ == "__main__":
    sys.exit(main())
