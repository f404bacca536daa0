"""People's opt-outs written the way a person writes them:

    python -m bench.people_api CONFIG_JSON

`PUT /preferences/{user}` for each person of the config's `opted_out` ({user: [category
ids]}), through functions-framework's own app for main.py's `api` target, with the admin
token, in the run's project (the environment the bench gives this process). Through the
API, not straight to Firestore, so whatever the API keeps beside `preferences/{user}` (a copy
on the person's `people` document, say) is there as it would be in use. Exits non-zero, with
the answer, on the first PUT that is not a 200."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

MAIN = Path(__file__).resolve().parent.parent / "main.py"


def main(config: dict[str, Any]) -> None:
    import functions_framework

    app = functions_framework.create_app(target="api", source=str(MAIN))  # type: ignore[no-untyped-call]
    client = app.test_client()
    headers = {"Authorization": f"Bearer {config['token']}"}
    for user, categories in config["opted_out"].items():
        response = client.put(
            f"/preferences/{user}", json={"opted_out": categories}, headers=headers
        )
        if response.status_code != 200:
            raise SystemExit(f"PUT /preferences/{user}: {response.status_code} {response.text}")


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
