"""Settings: defaults, the contract's variables, and loud failures naming the variable."""

from __future__ import annotations

import pytest

from core.errors import SettingsError
from core.settings import Settings

LOCAL = {"SLACK_API_URL": "http://127.0.0.1:1/api/"}


def test_defaults_are_the_contracts():
    s = Settings.from_env(LOCAL)
    assert (s.lease_seconds, s.tick_limit, s.max_attempts) == (300, 500, 5)
    assert s.app_env == "development"
    assert s.trigger_service_accounts == frozenset()


def test_service_accounts_are_split_and_trimmed():
    s = Settings.from_env({**LOCAL, "TRIGGER_SERVICE_ACCOUNTS": " a@x.test, ,b@x.test "})
    assert s.trigger_service_accounts == {"a@x.test", "b@x.test"}


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"APP_ENV": "prod"}, "APP_ENV"),
        ({"TICK_LIMIT": "lots"}, "TICK_LIMIT"),
        ({"MAX_ATTEMPTS": "0"}, "MAX_ATTEMPTS"),
        ({"LEASE_SECONDS": "19", "SLACK_TIMEOUT_SECONDS": "10"}, "LEASE_SECONDS=19"),
    ],
)
def test_bad_values_fail_naming_the_variable(env, named):
    with pytest.raises(SettingsError, match=named):
        Settings.from_env({**LOCAL, **env})


def test_a_lease_of_exactly_twice_the_slack_timeout_is_accepted():
    s = Settings.from_env({**LOCAL, "LEASE_SECONDS": "20", "SLACK_TIMEOUT_SECONDS": "10"})
    assert s.lease_seconds == 20


def test_real_slack_needs_a_bot_token():
    with pytest.raises(SettingsError, match="SLACK_BOT_TOKEN"):
        Settings.from_env({})
    assert Settings.from_env({"SLACK_BOT_TOKEN": "xoxb-1"}).slack_api_url == (
        "https://slack.com/api/"
    )


def test_dispatch_is_inline_unless_set_to_pubsub_with_a_topic():
    assert Settings.from_env(LOCAL).dispatch == "inline"
    s = Settings.from_env(
        {**LOCAL, "DISPATCH": "pubsub", "PUBSUB_TOPIC": "due", "GOOGLE_CLOUD_PROJECT": "p-1"}
    )
    assert (s.dispatch, s.pubsub_topic) == ("pubsub", "projects/p-1/topics/due")
    full = "projects/other/topics/due-occurrences"
    assert Settings.from_env({**LOCAL, "PUBSUB_TOPIC": full}).pubsub_topic == full


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"DISPATCH": "kafka"}, "DISPATCH must be one of inline, pubsub, got 'kafka'"),
        ({"DISPATCH": "pubsub"}, "PUBSUB_TOPIC is required when DISPATCH=pubsub"),
        ({"DISPATCH": "pubsub", "PUBSUB_TOPIC": "a b"}, "PUBSUB_TOPIC .* got 'a b'"),
        ({"PUBSUB_TOPIC": "goog-topic"}, "PUBSUB_TOPIC"),
        ({"PUBSUB_TOPIC": "projects/p/subscriptions/x"}, "PUBSUB_TOPIC"),
    ],
)
def test_bad_dispatch_settings_fail_naming_the_variable(env, named):
    with pytest.raises(SettingsError, match=named):
        Settings.from_env({**LOCAL, **env})


# --- the composer page's Google sign-in ----------------------------------------------------

CLIENT = "123-page.apps.googleusercontent.com"


def test_composer_users_are_split_trimmed_and_lower_cased():
    s = Settings.from_env({**LOCAL, "COMPOSER_USERS": " Ana@Example.test, ,@Corp.example.test "})
    assert s.composer_users == {"ana@example.test", "@corp.example.test"}


@pytest.mark.parametrize("entry", ["example.test", "ana", "@localhost", "a@b@example.test", "@"])
def test_a_composer_user_that_is_no_email_or_domain_is_refused(entry):
    with pytest.raises(SettingsError, match=f"COMPOSER_USERS entries .* got '{entry}'"):
        Settings.from_env({**LOCAL, "COMPOSER_USERS": f"ana@example.test,{entry}"})


@pytest.mark.parametrize("app_env", ["production", "staging"])
@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"COMPOSER_USERS": "ana@example.test"}, "COMPOSER_USERS is set but COMPOSER_CLIENT_ID"),
        ({"COMPOSER_CLIENT_ID": CLIENT}, "COMPOSER_CLIENT_ID is set but COMPOSER_USERS is empty"),
    ],
)
def test_half_a_sign_in_is_refused_outside_development(app_env, env, message):
    with pytest.raises(SettingsError, match=message):
        Settings.from_env({**LOCAL, "APP_ENV": app_env, **env})


def test_sign_in_configured_whole_is_accepted_in_production():
    env = {"APP_ENV": "production", "COMPOSER_CLIENT_ID": CLIENT, "COMPOSER_USERS": "@x.test"}
    s = Settings.from_env({**LOCAL, **env})
    assert (s.composer_client_id, s.composer_users) == (CLIENT, frozenset({"@x.test"}))


def test_development_takes_a_client_id_alone():
    # Trying the page's Google button locally needs no allow-list yet.
    assert Settings.from_env({**LOCAL, "COMPOSER_CLIENT_ID": CLIENT}).composer_users == set()


def test_the_page_client_id_must_not_be_the_tick_audience():
    with pytest.raises(SettingsError, match="COMPOSER_CLIENT_ID must differ from TICK_AUDIENCE"):
        Settings.from_env({**LOCAL, "COMPOSER_CLIENT_ID": CLIENT, "TICK_AUDIENCE": CLIENT})


def test_a_teams_only_deployment_needs_no_slack_token():
    bot = {"TEAMS_APP_ID": "00000000-0000-0000-0000-00000000b07", "TEAMS_APP_PASSWORD": "p"}
    settings = Settings.from_env(bot)
    assert (settings.slack_bot_token, settings.teams_app_id) == (
        None,
        "00000000-0000-0000-0000-00000000b07",
    )
    with pytest.raises(SettingsError, match="TEAMS_APP_PASSWORD is required"):
        Settings.from_env({"TEAMS_APP_ID": "00000000-0000-0000-0000-00000000b07"})


def test_slack_admins_are_split_and_trimmed():
    s = Settings.from_env({**LOCAL, "SLACK_ADMINS": " U0ANA1234, ,W0BEN5678 "})
    assert s.slack_admins == frozenset({"U0ANA1234", "W0BEN5678"})
    assert Settings.from_env(LOCAL).slack_admins == frozenset()


def test_a_slack_admin_that_is_no_user_id_is_refused():
    with pytest.raises(SettingsError, match=r"SLACK_ADMINS entries .* got 'ana@example\.test'"):
        Settings.from_env({**LOCAL, "SLACK_ADMINS": "U0ANA1234,ana@example.test"})
