"""Under DISPATCH=pubsub the `deliver` target holds Slack's posts while the app is
uninstalled, as a pass does: the pushed occurrence ends `failed` `app_uninstalled`, nothing
posted, and the push is acknowledged."""

from __future__ import annotations

from typing import Any

import pytest

from core.pubsub import DueOccurrence
from emulator.slack_faults import Fault
from interactions.dispatch import take_inbound
from interactions.inbound import classify
from processor.publish import publish
from tests.fixtures.clock import T0
from tests.fixtures.events_api import UNINSTALL, event_body
from tests.fixtures.messages import message, seed_message
from tests.fixtures.pubsub import Subscription, push
from tests.fixtures.runtime import make_runtime

pytestmark = pytest.mark.usefixtures("fresh_certs_cache")


@pytest.fixture
def rt(settings: Any, db: Any, clock: Any, pubsub: Subscription) -> Any:
    """The tick's runtime (settings read after the fixture set DISPATCH=pubsub)."""
    from core.settings import Settings

    return make_runtime(Settings.from_env(), db, clock, "tick")


def test_a_pushed_slack_occurrence_fails_app_uninstalled_and_posts_nothing(
    rt, pubsub, deliver, db, slack
):
    seed_message(db, "m1")
    slack.inject(Fault(kind="error", method="auth.test", code="token_revoked"))
    take_inbound(rt, classify(event_body(UNINSTALL)))
    publish(rt, [DueOccurrence("message", "m1", T0, "C0123ABCD")])
    (pulled,) = pubsub.pull()

    assert push(deliver, pulled) == 200

    assert slack.posts() == [] and slack.calls("chat.postMessage") == 0
    stored = message(db, "m1")
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "app_uninstalled")
