"""What a stand-in answers an HTTP call with, as a value, and the request handler base that
sends it: both stand-ins (Slack's and Teams') answer through these."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0  # seconds to wait before answering (a slow or timeout fault)
    drop: bool = False  # close the connection with no answer


def json_reply(payload: Any, status: int = 200, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    return Reply(status, json.dumps(payload).encode(), headers=headers)


class ReplyingHandler(BaseHTTPRequestHandler):
    """A request handler that answers with a Reply and logs its access lines at debug level,
    under the logger of the module that defines the concrete handler."""

    def answer(self, reply: Reply, linger: Callable[[float], None]) -> None:
        """Wait the reply's delay (through `linger`), then close the connection unanswered if
        the reply drops it, else send it."""
        if reply.delay:
            linger(reply.delay)
        if reply.drop:
            self.close_connection = True
            return
        self.send(reply)

    def send(self, reply: Reply) -> None:
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up first, which is what slow and timeout faults are for.
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        logging.getLogger(type(self).__module__).debug("%s " + format, self.address_string(), *args)
