"""`make run`'s parts that can be checked without starting it: what it prints once up, and
the examples it seeds, read back through the `api` target the page uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from emulator.run_local import EXAMPLE_ROTATION, banner, examples, local_data, seed
from tests.fixtures.api import call
from tests.fixtures.clock import T0

CHANNEL = "C0DEMO0001"


def test_the_banner_gives_the_pages_address_and_the_admin_token():
    text = banner(8081, "tok-123")

    assert "Composer page: http://127.0.0.1:8081/ (paste the admin token when" in text
    assert "ADMIN_TOKEN=tok-123" in text


def test_with_a_client_id_the_banner_says_to_sign_in_with_google():
    text = banner(9000, "tok-123", "123-page.apps.googleusercontent.com")

    assert "Composer page: http://localhost:9000/ (sign in with Google" in text
    assert "COMPOSER_CLIENT_ID=123-page.apps.googleusercontent.com" in text


def listed(api: Any) -> dict[str, dict[str, Any]]:
    status, page = call(api, "GET", "/messages?limit=200")
    assert status == 200, page
    assert page.get("next_cursor") is None
    return {row["id"]: row for row in page["messages"]}


def test_the_seeded_examples_are_on_the_page_at_once(api, db):
    seed(db, CHANNEL, T0)

    rows = listed(api)
    assert set(rows) == set(examples(T0, CHANNEL))
    assert rows["example-tomorrow"]["status"] == "pending"
    assert rows["example-weekly"]["status"] == "recurring"
    assert rows["example-weekly"]["next_run_at"] > T0.isoformat()
    status, rotation = call(api, "GET", f"/rotations/{EXAMPLE_ROTATION}")
    assert (status, rotation["members"]) == (200, ["U0DEMOANA", "U0DEMOBEN", "U0DEMOCEM"])


def test_a_seeded_example_can_be_edited_and_its_rotation_previewed(api, db):
    seed(db, CHANNEL, T0)

    status, edited = call(
        api, "PUT", "/messages/example-weekly", {"text": "moved"}, headers={"If-Match": "1"}
    )
    assert (status, edited["text"], edited["version"]) == (200, "moved", 2)
    status, preview = call(api, "POST", f"/rotations/{EXAMPLE_ROTATION}/preview", {})
    assert status == 200, preview


def test_seeding_again_keeps_what_an_earlier_run_changed(api, db):
    seed(db, CHANNEL, T0)
    status, _ = call(
        api, "PUT", "/messages/example-weekly", {"text": "moved"}, headers={"If-Match": "1"}
    )
    assert status == 200

    seed(db, CHANNEL, T0)  # the next `make run`, on the kept documents

    status, kept = call(api, "GET", "/messages/example-weekly")
    assert (status, kept["text"], kept["version"]) == (200, "moved", 2)
    assert set(listed(api)) == set(examples(T0, CHANNEL))


def test_reset_empties_the_kept_folder_and_only_when_asked(tmp_path: Path) -> None:
    folder = str(tmp_path / ".run")
    token = local_data({"LOCAL_DATA_DIR": folder}).admin_token()

    assert local_data({"LOCAL_DATA_DIR": folder, "RESET": "0"}).admin_token() == token
    assert local_data({"LOCAL_DATA_DIR": folder}).admin_token() == token
    kept = local_data({"LOCAL_DATA_DIR": folder, "RESET": "1"})  # make run RESET=1

    assert not kept.root.exists()
    assert kept.admin_token() != token
