"""`POST /messages/{id}/send-now`: the next occurrence posted during the request, exactly
once however often it is asked for, under the scheduled occurrence's ledger entry; a series
then goes on with the occurrence after it.

The races run through every interleaving of the `# pragma: SYNCPOINT edit` comments (the
pin's commit in composer/versions.py, and composer/send_now.py between the pin and the
claim): two calls at once, and a call beside a pass."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from composer.send_now import pin_now
from core.models import message_delivery_id
from emulator.slack_users import dm_id
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message, seed_series
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import Rounds, orchestrate

DAY = timedelta(days=1)
TOMORROW = T0 + DAY  # the daily series' next occurrence, 09:00 UTC


def _posts_of(slack: Any, mid: str) -> list[str | None]:
    return [d for d in slack.delivery_ids() if (d or "").startswith(f"m:{mid}:")]


def test_a_series_sends_its_next_occurrence_now_and_goes_on_after_it(api, db, slack):
    mid = seed_series(db, next_run_at=TOMORROW)

    status, answer = call(
        api, "POST", f"/messages/{mid}/send-now", {"occurrence_at": TOMORROW.isoformat()}
    )

    assert status == 200, answer
    assert answer["status"] == "sent"
    assert answer["delivery_id"] == message_delivery_id(mid, TOMORROW)
    assert _posts_of(slack, mid) == [message_delivery_id(mid, TOMORROW)]
    assert answer["message"]["status"] == "recurring"
    assert message(db, mid)["next_run_at"] == TOMORROW + DAY


def test_a_second_call_for_the_same_occurrence_is_409_and_posts_nothing(api, db, slack):
    mid = seed_series(db, next_run_at=TOMORROW)
    seen = {"occurrence_at": TOMORROW.isoformat()}
    assert call(api, "POST", f"/messages/{mid}/send-now", seen)[0] == 200

    status, answer = call(api, "POST", f"/messages/{mid}/send-now", seen)

    assert status == 409
    assert answer["details"][0]["field"] == "occurrence_at"
    assert len(_posts_of(slack, mid)) == 1


def test_a_one_off_ends_sent_and_cannot_be_sent_again(api, db, slack):
    mid = seed_message(db, send_at=T0 + DAY, next_run_at=T0 + DAY)

    status, answer = call(api, "POST", f"/messages/{mid}/send-now")

    assert (status, answer["status"], answer["message"]["status"]) == (200, "sent", "sent")
    status, again = call(api, "POST", f"/messages/{mid}/send-now")
    assert status == 409
    assert again["details"] == [{"field": "status", "message": "sent"}]
    assert len(_posts_of(slack, mid)) == 1


def test_a_message_not_waiting_is_409_naming_its_status(api, db, slack):
    for state in ("paused", "cancelled", "sending", "completed"):
        mid = seed_message(db, status=state)
        status, answer = call(api, "POST", f"/messages/{mid}/send-now")
        assert status == 409, state
        assert answer["details"] == [{"field": "status", "message": state}]
    assert call(api, "POST", "/messages/nope/send-now")[0] == 404
    assert slack.posts() == []


def test_a_bad_occurrence_at_is_422_naming_it(api, db):
    mid = seed_series(db, next_run_at=TOMORROW)
    status, answer = call(api, "POST", f"/messages/{mid}/send-now", {"occurrence_at": "soon"})
    assert status == 422
    assert [d["field"] for d in answer["details"]] == ["occurrence_at"]


def test_a_crash_between_the_pin_and_the_send_is_sent_by_the_next_pass_once(
    api, db, slack, rt, clock
):
    mid = seed_series(db, next_run_at=TOMORROW)
    pin_now(rt, mid, TOMORROW)  # the request died here

    clock.advance(timedelta(seconds=30))
    run_kind(rt, MESSAGE_KIND)
    run_kind(rt, MESSAGE_KIND)

    assert _posts_of(slack, mid) == [message_delivery_id(mid, TOMORROW)]
    assert message(db, mid)["next_run_at"] == TOMORROW + DAY
    seen = {"occurrence_at": TOMORROW.isoformat()}
    assert call(api, "POST", f"/messages/{mid}/send-now", seen)[0] == 409


def test_two_calls_at_once_post_the_occurrence_once(api_app, api, db, slack):
    rounds = Rounds(lambda: seed_series(db, next_run_at=TOMORROW))
    answers: dict[str, list[int]] = {}

    def click() -> None:
        mid = rounds.message_for_this_round()
        seen = {"occurrence_at": TOMORROW.isoformat()}
        status, _ = call(api_app.test_client(), "POST", f"/messages/{mid}/send-now", seen)
        answers.setdefault(mid, []).append(status)

    orchestrate(click, click, name="edit")

    assert rounds.messages
    for mid in rounds.messages:
        assert _posts_of(slack, mid) == [message_delivery_id(mid, TOMORROW)]
        assert sorted(answers[mid]) == [200, 409]


def test_a_pass_at_the_same_time_never_posts_twice(api_app, api, settings, db, slack, clock):
    rounds = Rounds(lambda: seed_series(db, next_run_at=TOMORROW))
    rt = make_runtime(settings, db, clock, "worker-b")
    answers: dict[str, dict[str, Any]] = {}

    def click() -> None:
        mid = rounds.message_for_this_round()
        status, answer = call(api_app.test_client(), "POST", f"/messages/{mid}/send-now")
        answers[mid] = answer | {"http": status}

    def tick() -> None:
        rounds.message_for_this_round()
        run_kind(rt, MESSAGE_KIND)

    orchestrate(click, tick, name="edit")

    run_kind(rt, MESSAGE_KIND)  # whatever a round left due
    for mid in rounds.messages:
        assert _posts_of(slack, mid) == [message_delivery_id(mid, TOMORROW)]
        assert answers[mid]["http"] == 200
        assert answers[mid]["status"] in ("sent", "sending")
        entry = ledger(db)[message_delivery_id(mid, TOMORROW)]
        assert entry["status"] == "sent"


def test_a_message_to_a_person_is_sent_now_to_their_dm(api, db, slack):
    mid = seed_message(db, channel=None, user="U0ANA1234", send_at=T0 + DAY, next_run_at=T0 + DAY)

    status, answer = call(api, "POST", f"/messages/{mid}/send-now")

    assert (status, answer["status"]) == (200, "sent"), answer
    (post,) = slack.posts()
    assert post.channel == dm_id("U0ANA1234")
    assert post.delivery_id == message_delivery_id(mid, T0 + DAY)
