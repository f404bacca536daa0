"""`python -m emulator.serve_function --target api --source main.py --port 8081`: one target
served the way the `functions-framework` command serves it (its app, its gunicorn server:
one worker, gthread), with one setting changed: an idle keep-alive connection stays open
KEEPALIVE_SECONDS, not gunicorn's 2.

Why: a client that keeps idle connections in a pool (most do) can send its next request on
one at the very moment gunicorn closes it after 2 idle seconds; that request gets no answer
at all ("Remote end closed connection without response"), logs nothing, and never reaches
the function. With the server keeping idle connections longer than clients' pools keep them,
the client is the one that closes them. On Google Cloud, clients talk to Google's front end,
not to this server, so only local runs (`make run`, load tests) needed this.
"""

from __future__ import annotations

import argparse

import functions_framework
from functions_framework._http import create_server

# Longer than the idle time of common client pools (Go's net/http 90 s, aiohttp 15 s,
# httpx 5 s) and than Google's front end keeps an idle connection to a client (600 s).
KEEPALIVE_SECONDS = 620


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--host", default="0.0.0.0")  # noqa: S104 (as functions-framework)
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    # functions-framework is untyped; these are the two calls its own command makes.
    app = functions_framework.create_app(  # type: ignore[no-untyped-call]
        target=args.target, source=args.source
    )
    server = create_server(app, False, keepalive=KEEPALIVE_SECONDS)  # type: ignore[no-untyped-call]
    server.run(args.host, args.port)


if __name__ == "__main__":
    main()
