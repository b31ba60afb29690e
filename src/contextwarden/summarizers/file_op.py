"""What one tool call did to a file: the ``FileOp`` value, and line counts as a summary says them.

``tools`` reads a call's input for these, ``shell_files`` a shell command's words; the summary's
facts (``file_facts``) are built from them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FileOp:
    """What one tool call did to a file: ``operation`` is read, wrote, edited, deleted, searched."""

    path: str
    operation: str
    detail: str = ""
    """Line counts where known, e.g. ``120 lines`` or ``+4 -2 lines``."""
    code: str = ""
    """The code the call wrote (Write content, Edit replacement, created file text)."""


def lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)
