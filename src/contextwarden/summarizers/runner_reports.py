"""A test runner's report read as a whole: which tests failed, by the layout the runner
documents, so a failed run's few kept lines name them rather than one assertion among many.

Mocha's ``spec`` reporter (its default; mochajs.org, "Reporters"): each test under its suite,
a failed one numbered in place of the tick (``    1) strips wrappers``), then the counts
(``  45 passing (5s)``, ``  3 failing``), then one block per failure (``  1) Suite`` then the
title indented, the error and its stack).
"""

from __future__ import annotations

import re

_MOCHA_FAILING = re.compile(r"^ +([1-9]\d*) failing\s*$", re.M)
"""Mocha's count of failed tests, under the listing."""
_MOCHA_LISTED = re.compile(r"^ +(\d+)\) (\S.*?)\s*$", re.M)
"""A failed test in the listing: its number where a passing test has its tick, then its title."""


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
