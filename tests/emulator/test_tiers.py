"""The `emulator` mark of tests/conftest.py: set on every test that needs an emulator, through
however many fixtures, and on no other, so `pytest -m "not emulator"` starts none."""

from __future__ import annotations

import pytest

PROBES = """
def test_on_the_runtime(rt):
    pass

def test_on_the_pubsub_deliver_target(deliver):
    pass

def test_on_the_clock_and_the_in_process_slack_standin(clock, slack):
    pass

def test_with_no_fixture():
    pass
"""


@pytest.fixture
def probes(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project of four tests on this repository's fixtures and collection hook."""
    pytester.makeconftest("from tests.conftest import *  # noqa: F403")
    pytester.makepyfile(test_probes=PROBES)
    return pytester


def test_tests_on_an_emulator_are_marked_through_their_fixtures(probes: pytest.Pytester) -> None:
    items, _ = probes.inline_genitems()

    marked = {item.name for item in items if item.get_closest_marker("emulator")}
    assert marked == {"test_on_the_runtime", "test_on_the_pubsub_deliver_target"}


def test_not_emulator_runs_only_the_tests_that_need_none(probes: pytest.Pytester) -> None:
    result = probes.runpytest("-m", "not emulator", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=2, deselected=2)
