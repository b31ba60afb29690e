"""How one line of the offline summary is written: on one line and clipped, indented, fenced,
a file's operations counted, a command's ``cd`` prefix shortened.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from contextwarden.summarizers.carry import EXCERPT_GAP
from contextwarden.summarizers.file_facts import LAST, FileFact


def operations(file: FileFact) -> str:
    counts = Counter(file.operations)
    ordered = list(dict.fromkeys(file.operations))
    done = ", ".join(f"{op} ({counts[op]})" if counts[op] > 1 else op for op in ordered)
    last = f"{LAST}{file.last_operation}" if len(ordered) > 1 else ""
    detail = f" ({file.detail})" if file.detail else ""
    return f"{done}{last}{detail}"


def ends(text: str, limit: int) -> str:
    """``text`` on one line; when longer than ``limit``, its head and tail (answers conclude)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return f"{text[:half]}{EXCERPT_GAP}{text[len(text) - half :]}"


def indent(text: str) -> str:
    return "\n".join(f"  {line}" if line else line for line in text.split("\n"))


def code_fence(code: str) -> str:
    """A Markdown fence longer than any backtick run in ``code``, so the code cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)


_CD_PREFIX = re.compile(r"^cd\s+(?P<dir>\"[^\"]+\"|'[^']+'|(?:\\ |\S)+)\s*(?:&&|;)\s*")
"""``cd DIR && `` (or ``;``) opening a command: agents start most commands by changing to the
project's folder, written out in full each time."""
_FOLDER_SEPARATOR = re.compile(r"(?<!\\)[/\\](?! )")
"""``/`` or ``\\``, not the backslash that escapes a space (``My\\ Drive``)."""


def where_shortened(command: str) -> str:
    """``command`` with the folder its ``cd`` prefix changes to cut to its last two parts
    (``cd /home/me/src/app/web && npm test`` → ``cd …/app/web && npm test``): the folder is in
    section 3's paths and the commands before, and the rest is what was run."""
    found = _CD_PREFIX.match(command)
    if found is None:
        return command
    folder = found["dir"].strip("\"'").rstrip("/\\")
    parts = _FOLDER_SEPARATOR.split(folder)
    if len(parts) <= 3:
        return command
    tail = "/".join(parts[-2:])
    return f"cd …/{tail} && {command[found.end() :]}"


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def numbers(listed: Sequence[int]) -> str:
    """User message numbers, runs as ranges: ``#1-#12, #15``."""
    runs: list[list[int]] = []
    for n in listed:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"#{r[0]}-#{r[-1]}" if len(r) > 1 else f"#{r[0]}" for r in runs)
