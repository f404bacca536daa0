"""Settings come from the environment (the contract's list, plus the few additions the
README documents). Bad values fail loudly with the variable's name, never silently default."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from core.errors import SettingsError

APP_ENVS = ("production", "staging", "development")
REAL_SLACK_API = "https://slack.com/api/"
GOOGLE_CERTS_URL = "https://www.googleapis.com/oauth2/v1/certs"
# Microsoft's defaults for a multi-tenant bot (CONTRACT.md, "Microsoft Teams").
TEAMS_TOKEN_URL = "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token"  # noqa: S105 (a URL, not a secret)
TEAMS_OPENID_METADATA_URL = "https://login.botframework.com/v1/.well-known/openidconfiguration"
GRAPH_API_URL = "https://graph.microsoft.com/v1.0/"
# How due occurrences reach a sender (docs/pubsub.md): in the tick's own pass, or one
# Pub/Sub message each to the `deliver` target.
INLINE, PUBSUB = "inline", "pubsub"
DISPATCHERS = (INLINE, PUBSUB)
# Pub/Sub's resource names: a topic id, alone or in its full path.
_TOPIC_ID = r"[A-Za-z][A-Za-z0-9._~+%-]{2,254}"
_TOPIC_PATH = re.compile(rf"projects/[^/\s]+/topics/{_TOPIC_ID}")


@dataclass(frozen=True)
class Settings:
    project: str
    app_env: str
    slack_bot_token: str | None
    slack_api_url: str
    slack_signing_secret: str | None
    slack_timeout_seconds: int
    admin_token: str | None
    tick_audience: str | None
    trigger_service_accounts: frozenset[str]
    oidc_certs_url: str
    lease_seconds: int
    tick_limit: int
    tick_budget_seconds: int
    max_attempts: int
    history_calls_per_pass: int
    alert_channel: str | None
    dispatch: str = INLINE
    # The full path, projects/<project>/topics/<id>; set whenever dispatch is pubsub.
    pubsub_topic: str | None = None
    # How many shards the due scan is split into (core.shards, docs/sharding.md).
    shards: int = 1
    # The composer page's Google sign-in (docs/web.md): the OAuth client id its ID tokens
    # are minted for, and who may sign in: emails, or `@domain` for a whole domain.
    composer_client_id: str | None = None
    composer_users: frozenset[str] = frozenset()
    # Microsoft Teams (docs/teams.md): the bot's Entra ID app, where its tokens come from,
    # the keys inbound activities are signed with, and Graph for proof of delivery.
    teams_app_id: str | None = None
    teams_app_password: str | None = None
    teams_tenant_id: str | None = None
    teams_token_url: str = TEAMS_TOKEN_URL
    teams_openid_metadata_url: str = TEAMS_OPENID_METADATA_URL
    graph_api_url: str = GRAPH_API_URL
    # A CA bundle (path) trusted for Teams' token endpoint, connector and Graph instead of
    # the system's roots: ours, for the stand-in's self-signed certificate.
    teams_ca_bundle: str | None = None
    # The directory cache (core.directory, docs/operations.md): refreshed once older than
    # this, at most this many list pages a minute per list (Slack's Tier 2: 20+).
    directory_max_age_seconds: int = 3600
    directory_pages_per_minute: int = 10
    # Slack user ids who may cancel or send now anyone's message from Slack (the Home tab);
    # everyone else acts only on what they created.
    slack_admins: frozenset[str] = frozenset()

    @property
    def is_production(self) -> bool:
        return self.app_env == "production"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        app_env = _text(env, "APP_ENV") or "development"
        if app_env not in APP_ENVS:
            raise SettingsError(f"APP_ENV must be one of {', '.join(APP_ENVS)}, got {app_env!r}")
        settings = cls(
            project=_text(env, "GOOGLE_CLOUD_PROJECT") or "demo-scheduler",
            app_env=app_env,
            slack_bot_token=_text(env, "SLACK_BOT_TOKEN"),
            slack_api_url=_text(env, "SLACK_API_URL") or REAL_SLACK_API,
            slack_signing_secret=_text(env, "SLACK_SIGNING_SECRET"),
            slack_timeout_seconds=_int(env, "SLACK_TIMEOUT_SECONDS", 10, minimum=1),
            admin_token=_text(env, "ADMIN_TOKEN"),
            tick_audience=_text(env, "TICK_AUDIENCE"),
            trigger_service_accounts=frozenset(
                e.strip() for e in env.get("TRIGGER_SERVICE_ACCOUNTS", "").split(",") if e.strip()
            ),
            oidc_certs_url=_text(env, "OIDC_CERTS_URL") or GOOGLE_CERTS_URL,
            lease_seconds=_int(env, "LEASE_SECONDS", 300, minimum=1),
            tick_limit=_int(env, "TICK_LIMIT", 500, minimum=1),
            tick_budget_seconds=_int(env, "TICK_BUDGET_SECONDS", 50, minimum=1),
            max_attempts=_int(env, "MAX_ATTEMPTS", 5, minimum=1),
            history_calls_per_pass=_int(env, "HISTORY_CALLS_PER_PASS", 20, minimum=1),
            alert_channel=_text(env, "ALERT_CHANNEL"),
            dispatch=_dispatch(env),
            shards=shards_from_env(env),
            composer_client_id=_text(env, "COMPOSER_CLIENT_ID"),
            composer_users=_composer_users(env),
            teams_app_id=_text(env, "TEAMS_APP_ID"),
            teams_app_password=_text(env, "TEAMS_APP_PASSWORD"),
            teams_tenant_id=_text(env, "TEAMS_TENANT_ID"),
            teams_token_url=_text(env, "TEAMS_TOKEN_URL") or TEAMS_TOKEN_URL,
            teams_openid_metadata_url=(
                _text(env, "TEAMS_OPENID_METADATA_URL") or TEAMS_OPENID_METADATA_URL
            ),
            graph_api_url=_text(env, "GRAPH_API_URL") or GRAPH_API_URL,
            teams_ca_bundle=_text(env, "TEAMS_CA_BUNDLE"),
            directory_max_age_seconds=_int(env, "DIRECTORY_MAX_AGE_SECONDS", 3600, minimum=60),
            directory_pages_per_minute=_int(
                env, "DIRECTORY_PAGES_PER_MINUTE", 10, minimum=1, maximum=20
            ),
            slack_admins=_slack_admins(env),
        )
        settings = replace(settings, pubsub_topic=_topic(env, settings.project, settings.dispatch))
        # A lease must outlive the send it guards, or a slow post still in flight would be
        # taken for a dead worker and the occurrence sent twice.
        if settings.lease_seconds < 2 * settings.slack_timeout_seconds:
            raise SettingsError(
                f"LEASE_SECONDS={settings.lease_seconds} must be at least twice "
                f"SLACK_TIMEOUT_SECONDS={settings.slack_timeout_seconds}"
            )
        # A Teams-only deployment has no Slack token: Slack-addressed documents then fail
        # with Slack's own `invalid_auth`, never silently.
        real_slack = settings.slack_api_url == REAL_SLACK_API
        if not settings.slack_bot_token and real_slack and not settings.teams_app_id:
            raise SettingsError(
                "SLACK_BOT_TOKEN is required to send to real Slack (or TEAMS_APP_ID, for a"
                " deployment that sends to Teams only)"
            )
        if settings.teams_app_id and not settings.teams_app_password:
            raise SettingsError("TEAMS_APP_PASSWORD is required with TEAMS_APP_ID")
        _check_sign_in(settings)
        return settings


def shards_from_env(env: Mapping[str, str] | None = None) -> int:
    """SHARDS (default 1): the due query reads it here, as its callers pass no settings."""
    return _int(os.environ if env is None else env, "SHARDS", 1, minimum=1, maximum=MAX_SHARDS)


# Each shard is one query of every due scan: past this, a scan costs more than it spreads.
MAX_SHARDS = 64


def _dispatch(env: Mapping[str, str]) -> str:
    dispatch = _text(env, "DISPATCH") or INLINE
    if dispatch not in DISPATCHERS:
        raise SettingsError(f"DISPATCH must be one of {', '.join(DISPATCHERS)}, got {dispatch!r}")
    return dispatch


def _topic(env: Mapping[str, str], project: str, dispatch: str) -> str | None:
    """PUBSUB_TOPIC as a full path: a bare topic id is in GOOGLE_CLOUD_PROJECT."""
    topic = _text(env, "PUBSUB_TOPIC")
    if topic is None:
        if dispatch == PUBSUB:
            raise SettingsError("PUBSUB_TOPIC is required when DISPATCH=pubsub")
        return None
    path = topic if topic.startswith("projects/") else f"projects/{project}/topics/{topic}"
    if not _TOPIC_PATH.fullmatch(path) or topic.startswith("goog"):
        raise SettingsError(
            "PUBSUB_TOPIC must be a topic id (a letter, then 2-254 of letters, digits and "
            f"-_.~+%, not starting with goog) or projects/<project>/topics/<id>, got {topic!r}"
        )
    return path


def _composer_users(env: Mapping[str, str]) -> frozenset[str]:
    """COMPOSER_USERS, lower-cased: emails, or `@domain` for a whole Workspace domain."""
    users = frozenset(
        e.strip().lower() for e in env.get("COMPOSER_USERS", "").split(",") if e.strip()
    )
    for user in sorted(users):
        if not _COMPOSER_USER.fullmatch(user):
            raise SettingsError(f"COMPOSER_USERS entries must be emails or @domain, got {user!r}")
    return users


def _slack_admins(env: Mapping[str, str]) -> frozenset[str]:
    """SLACK_ADMINS: comma-separated Slack user ids (U… or W…)."""
    admins = frozenset(u.strip() for u in env.get("SLACK_ADMINS", "").split(",") if u.strip())
    for admin in sorted(admins):
        if not _SLACK_USER.fullmatch(admin):
            raise SettingsError(f"SLACK_ADMINS entries must be Slack user ids, got {admin!r}")
    return admins


_SLACK_USER = re.compile(r"[UW][A-Z0-9]{2,}")
_COMPOSER_USER = re.compile(r"[^@\s]*@[^@\s.]+(\.[^@\s.]+)+")


def _check_sign_in(settings: Settings) -> None:
    """Outside development, Google sign-in is configured whole or not at all: a client id
    nobody may use, or a list of people who cannot sign in, is a mistake to report now."""
    client_id, users = settings.composer_client_id, settings.composer_users
    if client_id is not None and client_id == settings.tick_audience:
        # One audience for both would have a trigger's token judged as a person's (api) too.
        raise SettingsError("COMPOSER_CLIENT_ID must differ from TICK_AUDIENCE")
    if settings.app_env == "development":
        return
    if users and client_id is None:
        raise SettingsError(
            "COMPOSER_USERS is set but COMPOSER_CLIENT_ID is not: nobody could sign in"
        )
    if client_id is not None and not users:
        raise SettingsError(
            "COMPOSER_CLIENT_ID is set but COMPOSER_USERS is empty: nobody could sign in"
        )


def _text(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def _int(
    env: Mapping[str, str], name: str, default: int, *, minimum: int, maximum: int | None = None
) -> int:
    raw = _text(env, name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise SettingsError(f"{name} must be at most {maximum}, got {value}")
    return value
