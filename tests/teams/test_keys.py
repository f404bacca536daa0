"""The validator's OpenID metadata: read once, read again after a day (on our monotonic
clock, injected here), and kept while it cannot be read again."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from core.errors import Unauthorized
from core.teams_auth import METADATA_LIFETIME_SECONDS, InboundValidator
from tests.fixtures.teams_inbound import APP_ID, CHANNEL, free_port, serving


class Ticking:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_metadata_is_read_again_after_a_day_and_kept_while_unreadable(standin: Any) -> None:
    metadata = httpx.get(standin.openid_metadata_url).json()
    document = {"current": metadata}
    port, clock = free_port(), Ticking()
    validator = InboundValidator(
        APP_ID, f"http://127.0.0.1:{port}/metadata", cooldown_seconds=0, clock=clock
    )
    install = standin.install_activity(CHANNEL)[0]
    bearer = f"Bearer {standin.sign(install)}"
    with serving(port, lambda: json.dumps(document["current"]).encode()):
        assert validator.claims(bearer, standin.service_url)["aud"] == APP_ID
        # The document now names a key set that does not exist: not read again within a day.
        document["current"] = metadata | {"jwks_uri": f"{standin.base_url}/no-keys"}
        clock.now += METADATA_LIFETIME_SECONDS - 1
        assert validator.claims(bearer, standin.service_url)["aud"] == APP_ID
        clock.now += 1
        with pytest.raises(Unauthorized, match="signing keys unavailable"):
            validator.claims(bearer, standin.service_url)
        document["current"] = metadata
        clock.now += METADATA_LIFETIME_SECONDS
        assert validator.claims(bearer, standin.service_url)["aud"] == APP_ID
    # No server now: the document cannot be read again, and the keys in hand still serve.
    clock.now += METADATA_LIFETIME_SECONDS
    assert validator.claims(bearer, standin.service_url)["aud"] == APP_ID
