"""A test runner's report read as a whole: Mocha's spec reporter, as its documentation shows it."""

from __future__ import annotations

from contextwarden.model import FrozenDict, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failures import failure_lines
from contextwarden.summarizers.runner_reports import failing_tests

# mochajs.org, "Reporters" → "Spec": the listing, the counts, then one block per failure
MOCHA_SPEC = """
  Array
    #indexOf()
      \u2714 should return -1 when the value is not present
      1) should return the index when the value is present
    #concat()
      2) keeps the order of its arguments
      \u2714 returns a new array


  2 passing (9ms)
  2 failing

  1) Array
       #indexOf()
         should return the index when the value is present:

      AssertionError [ERR_ASSERTION]: -1 == 0
      + expected - actual

      --1
      +0

      at Context.<anonymous> (test/array.spec.js:9:14)

  2) Array
       #concat()
         keeps the order of its arguments:
     AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:
      at Context.<anonymous> (test/array.spec.js:15:14)

npm ERR! Test failed.  See above for more details.
"""


def test_mochas_failed_tests_are_named_with_their_count() -> None:
    assert failing_tests(MOCHA_SPEC) == (
        "2 failing: 1) should return the index when the value is present; "
        "2) keeps the order of its arguments",
    )


def test_a_numbered_list_or_a_passing_run_is_no_mocha_failure() -> None:
    assert failing_tests("Steps:\n  1) build\n  2) test\n") == ()
    assert failing_tests("  Array\n    \u2714 works\n\n  1 passing (2ms)\n") == ()


def test_a_failed_mocha_runs_kept_lines_name_every_failed_test() -> None:
    """Four lines of a run with many assertion errors: the failed tests' titles are among them,
    whatever the errors say (a summary and a cleared result keep these lines)."""
    call = ToolUseBlock("c", "Bash", FrozenDict({"command": "npm test"}))
    kept = failure_lines(call, ToolResultBlock("c", MOCHA_SPEC + "Exit code 1", True), 4)
    assert any(
        "1) should return the index" in line and "2) keeps the order" in line for line in kept
    )
