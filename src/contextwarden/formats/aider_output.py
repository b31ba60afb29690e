"""What in aider's chat log is aider's own output though its lines do not say so: the rest of a
report whose first line alone is quoted, a message aider sent the model in the person's name, and
the linter a lint report ran.

Read from aider's source (``aider/io.py``, ``aider/gui.py``, ``aider/linter.py``,
``aider/coders/editblock_coder.py``, ``aider/prompts.py``), alike in 0.55 (September 2024) and
0.86:

- ``io.tool_output(text)`` writes ``> `` before the text once, so a multi-line message loses the
  mark after its first line. The one such message a chat routinely holds is a reply's failed
  SEARCH/REPLACE blocks (``base_coder.apply_updates`` shows ``str(err)``): "# N SEARCH/REPLACE
  block(s) failed to match!", each block, then "The SEARCH section must exactly match …" and,
  when others applied, "# The other N … were applied successfully." up to "Just reply with
  fixed versions of the …".
- aider answers a reply by itself (``coder.reflected_message``): with that failure report, with a
  lint report, or with ``prompts.added_files`` once the person lets it add the files a reply
  named. Its browser UI (``aider --gui``, ``gui.py``'s ``process_chat``) sends that message through
  ``run_stream``, which logs it with ``io.user_input``: as ``#### `` lines, as if typed, right after
  the same text shown as aider's output.
- A lint report (``linter.lint``, run after a reply's edits) opens with "# Fix any errors below, if
  possible." and names each command it ran on a "## Running: " line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

QUOTE, TYPED, STARTED = "> ", "####", "# aider chat started at"
"""How aider's log marks its output, the person's input and a chat's start (``io.py``)."""
EDIT_FAILURE = re.compile(r"# \d+ SEARCH/REPLACE blocks? failed to match!")
"""The first line of a reply's failed edits, the only one ``tool_output`` quotes."""
_FAILED_BLOCK = re.compile(
    r"## SearchReplaceNoExactMatch: "
    r"This SEARCH block failed to exactly match lines in (?P<path>\S.*)"
)
"""The heading of each block of a failed-edit report (``editblock_coder.apply_edits``): the file
whose lines the block's SEARCH section did not match."""
FAILURE_END = "The SEARCH section must exactly match an existing block of lines"
OTHERS_APPLIED = re.compile(r"# The other \d+ SEARCH/REPLACE blocks? were applied successfully\.")
RETRY = "Just reply with fixed versions of the "
"""The last line of a failure report when some of the reply's blocks were applied."""
ADDED_FILES = re.compile(
    r"I added these files to the chat: .*\nLet me know if there are others we should add\."
)
"""``prompts.added_files``: what aider tells the model once the person adds the files it named."""
LINT_REPORT = "# Fix any errors below, if possible."
RUNNING = "## Running: "


def unquoted_output(lines: Sequence[str]) -> frozenset[int]:
    """Indexes of the lines of ``lines`` (a log's raw lines) that continue a failure report whose
    first line alone is quoted. A report whose closing line is missing is left alone: what
    follows may be the model's reply."""
    found: set[int] = set()
    for start, line in enumerate(lines):
        if line.startswith(QUOTE) and EDIT_FAILURE.fullmatch(line[len(QUOTE) :].strip()):
            end = _report_end(lines, start + 1)
            if end is not None:
                found.update(range(start + 1, end + 1))
    return frozenset(found)


def _report_end(lines: Sequence[str], first: int) -> int | None:
    """The index of a failure report's last line, from ``first``, its second line."""
    for index in range(first, len(lines)):
        line = lines[index]
        if line.startswith((QUOTE, TYPED, STARTED)):
            return None
        if line.startswith(FAILURE_END):
            after = next((i for i in range(index + 1, len(lines)) if lines[i].strip()), None)
            if after is None or not OTHERS_APPLIED.fullmatch(lines[after].strip()):
                return index
        elif line.startswith(RETRY):
            return index
    return None


def reflected(typed: Sequence[str], shown: Sequence[str]) -> bool:
    """True when ``typed`` (a run of ``#### `` lines) is a message aider sent in the person's
    name: ``prompts.added_files``, or a lint or failed-edit report that repeats the lines of
    ``shown`` (the output just before it, or none), as its browser UI logs them. A line the
    person typed that aider had printed (a command it suggested) opens no report: it stays
    typed."""
    own = [line.strip() for line in typed if line.strip()]
    if not own:
        return False
    if ADDED_FILES.fullmatch("\n".join(own)):
        return True
    if own[0] != LINT_REPORT and not EDIT_FAILURE.fullmatch(own[0]):
        return False
    before = [line.strip() for line in shown if line.strip()]
    width = len(own)
    return any(before[i : i + width] == own for i in range(len(before) - width + 1))


def lint_command(shown: Sequence[str]) -> str | None:
    """The first command a lint report in ``shown`` (aider's output lines) ran, or None."""
    report = False
    for line in shown:
        text = line.strip()
        report = report or text == LINT_REPORT
        if report and text.startswith(RUNNING) and text[len(RUNNING) :].strip():
            return text[len(RUNNING) :].strip()
    return None


def failed_edits(text: str) -> tuple[str, ...]:
    """The lines of aider's failed-edit report in ``text`` (its output after a reply): the count
    (``EDIT_FAILURE``), then each failed block's heading (``_FAILED_BLOCK``), which names its
    file, each once; empty when ``text`` holds no report. The blocks' code and aider's advice
    after them ("The SEARCH section must exactly match …") say nothing of which edit failed."""
    lines = [line.strip() for line in text.splitlines()]
    start = next((i for i, line in enumerate(lines) if EDIT_FAILURE.fullmatch(line)), None)
    if start is None:
        return ()
    blocks = [line for line in lines[start + 1 :] if _FAILED_BLOCK.fullmatch(line)]
    return (lines[start], *dict.fromkeys(blocks))


def failed_edit_path(shown: Sequence[str]) -> str | None:
    """The file the first failed block of a failed-edit report in ``shown`` (aider's output
    lines) named, or None when ``shown`` holds no report."""
    for line in failed_edits("\n".join(shown))[1:]:
        found = _FAILED_BLOCK.fullmatch(line)
        if found is not None:
            return found.group("path").strip()
    return None
