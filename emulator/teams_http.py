"""The Teams stand-in's HTTP plumbing: requests as values, Microsoft's error bodies, and one
server class that serves a handler over plain HTTP or TLS on a background thread (answers and
their sending: emulator/http_reply.py).

Error bodies follow each Microsoft service's shape: the Bot Connector and Graph answer
`{"error": {"code", "message"}}` (learn.microsoft.com/azure/bot-service/rest-api/
bot-framework-rest-connector-api-reference, "Error" object; learn.microsoft.com/graph/errors,
read 2026-12-03); Microsoft Entra's token endpoint answers OAuth2's `{"error",
"error_description", "error_codes"}` (RFC 6749 §5.2).
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from emulator.http_reply import Reply, ReplyingHandler, json_reply

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # percent-decoded
    query: dict[str, str]
    headers: Mapping[str, str]
    body: bytes

    @property
    def authorization(self) -> str | None:
        return self.headers.get("Authorization")

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def form(self) -> dict[str, str]:
        return dict(parse_qsl(self.body.decode(), keep_blank_values=True))


def error_reply(
    status: int, code: str, message: str, headers: tuple[tuple[str, str], ...] = ()
) -> Reply:
    """The Bot Connector's and Graph's error body: {"error": {"code", "message"}}."""
    return json_reply({"error": {"code": code, "message": message}}, status, headers)


class ServiceError(Exception):
    """A refusal the connector or Graph answers with its error body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message

    def reply(self) -> Reply:
        return error_reply(self.status, self.code, self.message)


Handler = Callable[[Request], Reply]


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # many workers post at once; the default 5 drops SYNs
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: Handler,
        linger: Callable[[float], None],
        tls: ssl.SSLContext | None,
    ) -> None:
        super().__init__(address, _RequestHandler)
        self.handler = handler
        self.linger = linger
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)


class BackgroundServer:
    """One HTTP(S) server on its own thread; stop() shuts it down and frees the port."""

    def __init__(
        self,
        host: str,
        port: int,
        handler: Handler,
        linger: Callable[[float], None],
        tls: ssl.SSLContext | None = None,
        name: str = "teams-standin",
    ) -> None:
        self._server = _Server((host, port), handler, linger, tls)
        # A short poll interval keeps stop() quick; tests start and stop one per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=name,
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return self._server.server_port

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class _RequestHandler(ReplyingHandler):
    server_version = "TeamsStandIn/1.0"
    protocol_version = "HTTP/1.1"  # keep-alive, as httpx and requests expect

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def do_PUT(self) -> None:
        self._route()

    def do_DELETE(self) -> None:
        self._route()

    def _route(self) -> None:
        assert isinstance(self.server, _Server)
        url = urlsplit(self.path)
        # Always read the whole body first: a dropped connection must have received it all.
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        request = Request(
            method=self.command,
            path=unquote(url.path),
            query=dict(parse_qsl(url.query, keep_blank_values=True)),
            headers={k: v for k, v in self.headers.items()},
            body=body,
        )
        try:
            reply = self.server.handler(request)
        except Exception:  # a bug in the stand-in: say so rather than hang the client
            _log.exception("teams stand-in failed on %s %s", self.command, self.path)
            reply = error_reply(500, "InternalServerError", "the stand-in failed")
        self.answer(reply, self.server.linger)
