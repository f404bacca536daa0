"""The real parts the benchmark runs against: the official Firestore emulator and the Slack
stand-in, each in a process of its own (so neither shares a GIL with a worker)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Loopback only: a developer's HTTP(S)_PROXY must not see the stand-in's traffic.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port: int = sock.getsockname()[1]
        return port


class StandInProcess:
    """`python -m emulator.slack_standin` with a post latency, driven over its control API."""

    def __init__(self, latency_ms: float) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/api/"
        self._control = f"http://127.0.0.1:{self.port}/_control/"
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "emulator.slack_standin",
                "--port",
                str(self.port),
                "--latency-ms",
                str(latency_ms),
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                self.posts()
                return
            except OSError:
                if time.monotonic() > deadline or self._process.poll() is not None:
                    self.stop()
                    raise RuntimeError("the Slack stand-in did not start") from None
                time.sleep(0.05)

    @property
    def pid(self) -> int:
        return self._process.pid

    def _call(self, method: str, path: str) -> Any:
        # Always our own http://127.0.0.1 control URL, built above.
        request = urllib.request.Request(self._control + path, method=method)  # noqa: S310
        with _opener.open(request, timeout=60) as response:
            return json.loads(response.read())

    def posts(self) -> list[dict[str, Any]]:
        posts: list[dict[str, Any]] = self._call("GET", "posts")
        return posts

    def reset(self) -> None:
        self._call("POST", "reset")

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
