"""Where the bot's tokens come from: the MSAL authority from TEAMS_TOKEN_URL and
TEAMS_TENANT_ID (the grant itself, through MSAL and the stand-in, is in test_transport.py)."""

from __future__ import annotations

from core.settings import Settings
from core.teams_token import authority

LOCAL = {"SLACK_API_URL": "http://127.0.0.1:1/api/"}


def test_a_multi_tenant_bot_asks_botframework_com():
    settings = Settings.from_env(LOCAL)
    assert authority(settings) == "https://login.microsoftonline.com/botframework.com"


def test_a_single_tenant_bot_asks_its_own_tenant():
    settings = Settings.from_env({**LOCAL, "TEAMS_TENANT_ID": "72f988bf-86f1-41af"})
    assert authority(settings) == "https://login.microsoftonline.com/72f988bf-86f1-41af"


def test_a_token_url_set_by_hand_is_taken_as_it_is():
    url = "https://127.0.0.1:8776/tenant-a/oauth2/v2.0/token"
    settings = Settings.from_env({**LOCAL, "TEAMS_TOKEN_URL": url, "TEAMS_TENANT_ID": "other"})
    assert authority(settings) == "https://127.0.0.1:8776/tenant-a"
