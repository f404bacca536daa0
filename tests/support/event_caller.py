"""A process that makes one `POST /events` request to the `api` target (functions-framework's
own app for main.py), held at its claim until told to go, so that many such processes race
the same claim:

    python -m tests.support.event_caller '<JSON body>'

It prints `ready` once its request is about to claim (the event not found, its DM opened),
waits for a line on stdin, and then prints the answer as `<status> <JSON body>`. Everything
up to and after the claim is the production code, unchanged."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import functions_framework

import events.notify as notify
from tests.fixtures.runtime import MAIN

_real_claim = getattr(notify, "claim_new")  # noqa: B009 (rebound below)


def _held_claim(*args: Any) -> Any:
    print("ready", flush=True)
    sys.stdin.readline()
    return _real_claim(*args)


if __name__ == "__main__":
    setattr(notify, "claim_new", _held_claim)  # noqa: B010
    client = functions_framework.create_app(target="api", source=MAIN).test_client()
    response = client.post(
        "/events",
        data=sys.argv[1],
        content_type="application/json",
        headers={"Authorization": f"Bearer {os.environ['ADMIN_TOKEN']}"},
    )
    print(response.status_code, json.dumps(response.get_json()), flush=True)
