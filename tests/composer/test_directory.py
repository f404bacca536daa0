"""The names the composer shows: `GET /directory/channels`, `GET /directory/users` and `GET /me`
over the seeded Slack stand-in, and `names` in message, rotation, delivery and preview answers.
Names come from the directory cache; the first read of a list never refreshed fills one page."""

from __future__ import annotations

from typing import Any

import pytest

from core.directory import display_names
from core.directory_refresh import refresh_lists
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call, encode_cursor, fields_of
from tests.fixtures.clock import T0
from tests.fixtures.messages import ONE_OFF, seed_message
from tests.fixtures.oidc import CLIENT_ID, CertsServer, mint_person
from tests.fixtures.rotations import ROTATION
from tests.fixtures.tick import at, bearer, tick

STANDUP, LEADS, RELEASES = "C0ENGSTAND1", "C0LEADS0001", "C0RELEASES1"
ANA, BEN, OLIVIA = "U0ANAGARCIA", "U0BENCARTER", "U0OLIVIALEE"


@pytest.fixture
def workspace(slack: Any) -> Any:
    slack.seed_workspace()
    return slack


@pytest.fixture
def cached(workspace: Any, db: Any, settings: Any, clock: Any) -> None:
    """The cache as the tick fills it."""
    refresh_lists(db, clock, settings, "tick-worker")


def test_the_tick_steps_each_list_after_its_pass_and_a_dry_run_does_not(
    tick_app, env, workspace, db
):
    client = tick_app.test_client()

    dry = tick(client, headers=bearer(), body=at(T0) | {"dry_run": True})
    calls = workspace.calls("conversations.list") + workspace.calls("users.list")
    real = tick(client, headers=bearer(), body=at(T0))

    assert (dry.status_code, real.status_code, calls) == (200, 200, 0)
    assert display_names(db, [STANDUP, ANA]) == {STANDUP: "#eng-standup", ANA: "@Ana García"}


def walk(api: Any, path: str, key: str) -> list[list[str]]:
    """Every page's ids, following next_cursor."""
    pages, cursor = [], None
    while True:
        sep = "&" if "?" in path else "?"
        status, answer = call(api, "GET", path + (f"{sep}cursor={cursor}" if cursor else ""))
        assert status == 200, answer
        pages.append([item["id"] for item in answer[key]])
        cursor = answer["next_cursor"]
        if cursor is None:
            return pages


def test_channels_come_by_name_from_a_first_read_that_fills_the_cache(api, workspace):
    status, answer = call(api, "GET", "/directory/channels")

    assert status == 200
    names = [c["name"] for c in answer["channels"]]
    assert names == sorted(names)
    assert len(names) == 12
    leads = next(c for c in answer["channels"] if c["id"] == LEADS)
    assert leads == {
        "id": LEADS,
        "name": "team-leads",
        "is_private": True,
        "is_member": True,
        "platform": "slack",
    }
    assert workspace.calls("conversations.list") == 1
    call(api, "GET", "/directory/channels")
    assert workspace.calls("conversations.list") == 1  # cached: no call


def test_q_matches_part_of_a_name_in_any_case_and_pages_follow_cursors(api, cached):
    _, answer = call(api, "GET", "/directory/channels?q=STAND")
    assert [c["name"] for c in answer["channels"]] == ["eng-standup"]

    _, answer = call(api, "GET", "/directory/users?q=garc")
    assert answer["users"] == [{"id": ANA, "name": "ana", "real_name": "Ana García"}]

    everyone = walk(api, "/directory/users", "users")[0]
    pages = walk(api, "/directory/users?limit=4", "users")
    assert [len(p) for p in pages] == [4, 4, 4, 3]
    assert [ident for page in pages for ident in page] == everyone


def test_installed_teams_conversations_follow_slack_channels(api, db, cached):
    for ident, name, status in (
        ("19:ops@thread.tacv2", "Ops", "installed"),
        ("19:old@thread.tacv2", "Old", "removed"),
    ):
        db.collection("teams_conversations").document(ident).set(
            {
                "service_url": "https://smba.example.test/",
                "tenant_id": "tenant",
                "conversation_type": "channel",
                "name": name,
                "status": status,
            }
        )

    pages = walk(api, "/directory/channels?limit=5", "channels")

    listed = [ident for page in pages for ident in page]
    assert listed[-1] == "19:ops@thread.tacv2"
    assert "19:old@thread.tacv2" not in listed
    assert len(listed) == 13
    _, found = call(api, "GET", "/directory/channels?q=ops")
    assert found["channels"] == [
        {
            "id": "19:ops@thread.tacv2",
            "name": "Ops",
            "is_private": False,
            "is_member": True,
            "platform": "teams",
        }
    ]


@pytest.mark.parametrize("path", ["/directory/channels", "/directory/users", "/me"])
def test_no_token_is_401(api, path):
    status, answer = call(api, "GET", path, auth=False)
    assert (status, answer["error"]) == (401, "unauthorized")


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("cursor=not-a-cursor", "cursor"),
        (f"cursor={encode_cursor({'k': 'a', 'id': 'x/y', 's': 'slack'})}", "cursor"),
        (f"cursor={encode_cursor({'k': 'a', 'id': 'C1', 's': 'irc'})}", "cursor"),
        ("limit=0", "limit"),
        ("q=" + "x" * 101, "q"),
        ("sort=name", "sort"),
    ],
)
def test_a_bad_query_is_422_naming_the_field(api, query, field):
    status, answer = call(api, "GET", f"/directory/users?{query}")
    assert status == 422
    assert fields_of(answer) == [field]


def test_me_is_nobody_for_the_admin_token(api):
    assert call(api, "GET", "/me") == (200, {"email": None, "slack_user": None})


@pytest.fixture
def sign_in(
    env: dict[str, str], certs_server: CertsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OIDC_CERTS_URL", certs_server.url)
    monkeypatch.setenv("COMPOSER_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("COMPOSER_USERS", "ana.garcia@example.com,zoe@example.com")


@pytest.mark.usefixtures("fresh_certs_cache", "sign_in")
@pytest.mark.parametrize("cache", [True, False])
def test_me_is_the_signed_in_persons_slack_account(
    api, workspace, db, settings, clock, signing_key, cache
):
    if cache:
        refresh_lists(db, clock, settings, "tick-worker")
    ana = mint_person(signing_key, email="ana.garcia@example.com")
    zoe = mint_person(signing_key, email="zoe@example.com")

    status, me = call(api, "GET", "/me", auth=False, headers={"Authorization": f"Bearer {ana}"})
    _, nobody = call(api, "GET", "/me", auth=False, headers={"Authorization": f"Bearer {zoe}"})

    assert (status, me) == (
        200,
        {
            "email": "ana.garcia@example.com",
            "slack_user": {"id": ANA, "name": "ana", "real_name": "Ana García"},
        },
    )
    assert nobody == {"email": "zoe@example.com", "slack_user": None}
    assert workspace.calls("users.lookupByEmail") == (1 if cache else 2)


# --- names in answers ----------------------------------------------------------------------


def test_a_message_answer_names_its_channel_and_the_people_its_text_mentions(api, cached):
    draft = ONE_OFF | {"channel": STANDUP, "text": f"<@{ANA}> hosts, <@U0NOBODY00> too"}

    _, created = call(api, "POST", "/messages", draft)
    _, read = call(api, "GET", f"/messages/{created['id']}")
    _, page = call(api, "GET", "/messages")
    _, preview = call(api, "POST", "/preview", draft)

    names = {STANDUP: "#eng-standup", ANA: "@Ana García"}
    assert created["names"] == read["names"] == page["messages"][0]["names"] == names
    assert preview["names"] == names


def test_a_rotation_and_its_preview_name_channel_and_members(api, cached):
    draft = ROTATION | {"channel": RELEASES, "members": [ANA, BEN, OLIVIA]}

    _, created = call(api, "POST", "/rotations", draft)
    _, page = call(api, "GET", "/rotations")
    _, preview = call(api, "POST", f"/rotations/{created['id']}/preview")

    names = {
        RELEASES: "#releases",
        ANA: "@Ana García",
        BEN: "@Ben Carter",
        OLIVIA: "@Olivia Lee",
    }
    assert created["names"] == page["rotations"][0]["names"] == names
    assert preview["names"] == names


def test_a_direct_messages_deliveries_name_the_person(api, db, rt, cached):
    mid = seed_message(db, channel=None, user=OLIVIA)
    run_kind(rt, MESSAGE_KIND)

    status, answer = call(api, "GET", f"/messages/{mid}/deliveries")

    assert status == 200
    (delivery,) = answer["deliveries"]
    assert delivery["names"] == {OLIVIA: "@Olivia Lee"}
