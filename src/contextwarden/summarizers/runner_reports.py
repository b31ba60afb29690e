"""A test runner's report read as a whole: which tests failed, by the layout the runner
documents, so a failed run's few kept lines name them rather than one assertion among many.

Mocha's ``spec`` reporter (its default; mochajs.org, "Reporters"): each test under its suite,
a failed one numbered in place of the tick (``    1) strips wrappers``), then the counts
(``  45 passing (5s)``, ``  3 failing``), then one block per failure (``  1) Suite`` then the
title indented, the error and its stack). pytest's closing count of what failed.
"""

from __future__ import annotations

import re

_MOCHA_FAILING = re.compile(r"^ +([1-9]\d*) failing\s*$", re.M)
"""Mocha's count of failed tests, under the listing."""
_MOCHA_LISTED = re.compile(r"^ +(\d+)\) (\S.*?)\s*$", re.M)
"""A failed test in the listing: its number where a passing test has its tick, then its title."""


_LIBTEST_COUNT = r"^\s*test result: FAILED\. \d+ passed; [1-9]\d* failed;"
"""Rust's libtest closing count of a test binary's run, when a test failed (``write_run_finish``
in its ``formatters/pretty.rs``: ``test result: FAILED. 0 passed; 1 failed; 0 ignored;
0 measured; 0 filtered out; finished in 0.10s``). ``cargo test`` runs one binary per target
(the library, each ``tests/*.rs``, the doc-tests) and prints this line for each: a failed test's
own line (``test src/lib.rs - (line 12) ... FAILED``) says nothing of how much of its binary
failed, and this one does (``0 passed``: none of it ran clean), so even one failure counts."""
COUNTED_VERDICT = re.compile(
    r"^\s*+=*+\s*+(?=[^\n]*\b(?:[2-9]|[1-9]\d+) (?:failed|errors)\b)"
    r"(?:\d+ (?:failed|passed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun)"
    r"(?:, |(?= in )))+ in [\d.]+s\b"  # pytest: "==== 8 failed, 6 passed in 1.00s ===="
    rf"|{_LIBTEST_COUNT}"
)
"""A pytest run's closing count of its tests, when several failed (its ``terminal`` plugin's
``summary_stats``: ``8 failed, 6 passed in 1.00s``, framed by ``=`` unless ``-q``). Unlike a
verdict alone it says how much of the run failed, which no failed test's line does: among the
few lines kept of a big run, it comes before the n-th failed test's name
(``failure_ranks.COUNT_RANK``). When one test failed, its line says as much, and the slot goes
to the second exception it raised. Jest's ``Tests:`` count is left a line with a failure word: in
its runs the slot goes to what a test logged, the error behind the failure. A terminal's row
saved as a line may open with the blanks that padded the row before it (SpecStory's saves of
Cursor's terminal, ``terminal_wrap``), so blanks may come before the frame. Rust libtest's count
is one too (``_LIBTEST_COUNT``). The frame is taken whole (possessive: a count opens with a
digit, never with a ``=`` or a blank given back), so a line of ``=`` is read once, not once per
``=`` it holds."""


def failing_tests(text: str) -> tuple[str, ...]:
    """One line naming the tests a Mocha run lists as failed, with the count it printed
    (``3 failing: 1) a; 2) b; 3) c``); empty when ``text`` holds no such run. The titles are
    the listing's, above the count (the blocks below it start with the suite's name)."""
    counts = list(_MOCHA_FAILING.finditer(text))
    if not counts:
        return ()
    count = counts[-1]
    listed = list(_MOCHA_LISTED.finditer(text, 0, count.start()))
    starts = [i for i, m in enumerate(listed) if m.group(1) == "1"]
    if not starts:
        return ()
    titles = "; ".join(f"{m.group(1)}) {m.group(2)}" for m in listed[starts[-1] :])
    return (f"{count.group(1)} failing: {titles}",)
