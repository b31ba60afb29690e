"""Write a file whole or not at all: a temporary file beside it, renamed over it.

Readers never see half a file, and a failed write leaves the old one untouched. The directory must
already exist: a mistyped path never creates directories.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and durably (fsync before the rename).

    An OSError names ``path`` itself, never the temporary file beside it."""
    target = Path(path)
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write here ({exc.strerror})", str(target)) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target
