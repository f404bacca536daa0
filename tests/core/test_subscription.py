"""The delivery subscriptions' one configuration (core/subscription.py) and the deploy docs
that quote it: the gcloud commands in docs/pubsub.md are the module's, flag for flag, and
their ack deadline is at least twice the Slack client timeout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.settings import Settings
from core.subscription import ack_deadline_seconds, delivery_subscriptions

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pubsub.md"
LOCAL = {"SLACK_API_URL": "http://127.0.0.1:1/api/"}
INVOKER = "pubsub-invoker@$PROJECT.iam.gserviceaccount.com"


def documented_commands() -> list[str]:
    """Each `gcloud pubsub subscriptions create` command in the docs, continuation lines
    joined as the module writes them."""
    text = DOCS.read_text()
    pattern = re.compile(r"^gcloud pubsub subscriptions create .*?(?<!\\)$", re.M | re.S)
    return pattern.findall(text)


def test_the_deploy_docs_quote_the_subscriptions_as_configured():
    timeout = Settings.from_env(LOCAL).slack_timeout_seconds
    configured = delivery_subscriptions(
        "$PROJECT",
        "due-occurrences",
        "$DELIVER_URL",
        slack_timeout_seconds=timeout,
        service_account=INVOKER,
        audience="$DELIVER_URL",
    )

    assert documented_commands() == [s.gcloud_command() for s in configured]


def test_the_documented_push_is_ordered_dead_lettered_and_outlasts_two_slack_timeouts():
    timeout = Settings.from_env(LOCAL).slack_timeout_seconds
    deliver, dead_letters = documented_commands()

    (deadline,) = re.findall(r"--ack-deadline=(\d+)", deliver)
    assert int(deadline) >= 2 * timeout
    assert "--enable-message-ordering" in deliver
    assert "--dead-letter-topic=due-occurrences-dead-letters" in deliver
    (attempts,) = re.findall(r"--max-delivery-attempts=(\d+)", deliver)
    assert 5 <= int(attempts) <= 100  # Pub/Sub's bounds
    assert "--topic=due-occurrences-dead-letters" in dead_letters
    for command in (deliver, dead_letters):
        assert f"--push-auth-service-account={INVOKER}" in command
        assert "--push-auth-token-audience=$DELIVER_URL" in command


def test_deliver_is_deployed_with_its_own_url_as_audience_and_the_pusher_allowed():
    text = DOCS.read_text()
    assert "--update-env-vars=TICK_AUDIENCE=$DELIVER_URL" in text
    deploy = text[text.index("gcloud functions deploy deliver") :]
    assert f"TRIGGER_SERVICE_ACCOUNTS={INVOKER}" in deploy.split("\n\n")[0]


@pytest.mark.parametrize("timeout", [1, 10, 30, 45, 120, 300])
def test_the_ack_deadline_is_at_least_twice_the_slack_timeout(timeout):
    deadline = ack_deadline_seconds(timeout)
    assert deadline >= 2 * timeout
    assert 10 <= deadline <= 600  # what Pub/Sub accepts


def test_a_slack_timeout_no_ack_deadline_can_cover_is_refused_naming_it():
    with pytest.raises(ValueError, match="SLACK_TIMEOUT_SECONDS=301"):
        ack_deadline_seconds(301)
