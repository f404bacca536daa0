"""The local function servers (`make run`) keep an idle connection open past gunicorn's 2 s,
so a client reusing one from its pool is answered: with functions-framework's defaults, a
request sent as the server closed an idle connection got no answer at all, and no log line
(a loopback load test saw 8 of 69,000 requests so)."""

from __future__ import annotations

import http.client
import os
import socket
import time
from typing import Any

import pytest

from emulator.run_local import serve, wait_for_function

TOKEN = "serve-function-token-0123"


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port: int = sock.getsockname()[1]
        return port


def ask(conn: http.client.HTTPConnection) -> Any:
    conn.request("GET", "/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"})
    response = conn.getresponse()
    response.read()
    return response.status


@pytest.mark.slow
def test_a_connection_idle_longer_than_gunicorns_default_is_still_answered(
    firestore_host: str,
) -> None:
    port = free_port()
    env = os.environ | {
        "FIRESTORE_EMULATOR_HOST": firestore_host,
        "GOOGLE_CLOUD_PROJECT": "serve-function",
        "ADMIN_TOKEN": TOKEN,
        "SLACK_BOT_TOKEN": "xoxb-test",
        "APP_ENV": "development",
    }
    process = serve("api", port, env)
    try:
        wait_for_function(port, process)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        assert ask(conn) == 200
        time.sleep(3.5)  # idle past gunicorn's 2 s keep-alive (and its 1 s sweep)
        assert ask(conn) == 200  # the same connection: it was not closed under the client
        conn.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
