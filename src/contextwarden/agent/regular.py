"""Reading and writing only regular files: a FIFO or a device inside the workspace is refused,
never opened in a way that could block the chat or stream without end."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from contextwarden.errors import ToolError

__all__ = ["MAX_EDIT_BYTES", "read_small", "refuse_special", "write_text"]

MAX_EDIT_BYTES = 20_000_000
"""Largest file edit_file and write_file read whole (to edit it, or to show the diff)."""


def refuse_special(tool: str, path: Path, shown: str) -> bool:
    """Whether ``path`` exists (a regular file); a ToolError if it is anything else."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(mode):
        raise ToolError(f"{shown} is a directory; give a file path", tool=tool, argument="path")
    if not stat.S_ISREG(mode):
        raise ToolError(
            f"{shown} is not a regular file (a FIFO, socket or device); {tool} reads and writes "
            "regular files only",
            tool=tool,
            argument="path",
        )
    return True


def read_small(tool: str, path: Path, shown: str) -> str:
    """The text of a regular file of at most ``MAX_EDIT_BYTES``."""
    fd = _open(tool, path, shown, os.O_RDONLY)
    with open(fd, encoding="utf-8", errors="replace") as file:
        size = os.fstat(fd).st_size
        if size > MAX_EDIT_BYTES:
            raise ToolError(
                f"{shown} has {size:,} bytes, more than {tool} handles ({MAX_EDIT_BYTES:,}); "
                "change it with a bash command (sed, a script) instead",
                tool=tool,
                argument="path",
            )
        return file.read()


def write_text(tool: str, path: Path, shown: str, text: str) -> None:
    """Create or overwrite the regular file ``path`` with ``text`` (UTF-8)."""
    fd = _open(tool, path, shown, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with open(fd, "w", encoding="utf-8") as file:
        file.write(text)


def _open(tool: str, path: Path, shown: str, flags: int) -> int:
    """``path`` opened without blocking (a FIFO with no reader fails instead of waiting) and
    without following a link swapped in since it was resolved; anything not regular is closed."""
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_NOFOLLOW, 0o666)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        refuse_special(tool, path, shown)
        raise ToolError(f"{shown} is not a regular file", tool=tool, argument="path")
    return fd
