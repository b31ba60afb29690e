"""The lines a browser's own logging prints above a test run's output: noise, never what
failed, so ``failure_ranks`` ranks them last.
"""

from __future__ import annotations

import re

CHROMIUM_LOG = re.compile(
    r"^\[(?:\d+:){0,2}\d{4}/\d{6}\.\d+:(?:[A-Z]+\d*):[^\]\s]+(?:\(\d+\)|:\d+)\] "
)
"""Chromium's log line (base/logging: ``[pid:tid:MMDD/HHMMSS.micro:LEVEL:file(line)] message``,
``file:line`` in newer builds), as the VS Code extension test host prints it above a run's own
output (``[35346:0410/160412.435203:ERROR:net/cert/…:807] Error parsing certificate:``): the
browser's noise, ranked last; a message ending in a colon goes on to the next blank line."""


def browser_logged(lines: list[str]) -> set[int]:
    """The positions of Chromium's log lines (``CHROMIUM_LOG``), with the lines a message ending
    in a colon goes on over, up to the next blank line."""
    logged: set[int] = set()
    going_on = False
    for i, line in enumerate(lines):
        going_on = going_on and bool(line.strip())
        if CHROMIUM_LOG.match(line):
            going_on = line.rstrip().endswith(":")
            logged.add(i)
        elif going_on:
            logged.add(i)
    return logged
