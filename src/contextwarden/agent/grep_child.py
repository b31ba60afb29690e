"""The grep tool's search, run as a separate process so a time limit can stop it anywhere.

A regular expression such as ``(a+)+$`` can take exponential time inside one ``re`` call, which no
signal interrupts; as a child process (run by path, standard library only) it is simply killed at
the deadline. Input: the path of a JSON file ``{"pattern", "files": [[path, shown name], ...],
"max_hits", "max_line_chars", "max_scan_chars"}``. Output: ``name:line:text`` per match, up to
``max_hits``, then ``… N more matching lines`` when there were more.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Iterator

__all__ = ["lines", "main"]


def lines(path: str, max_scan_chars: int) -> Iterator[tuple[int, str]]:
    """(line number, text) of a regular file, a long line read in pieces of ``max_scan_chars``
    (each piece searched on its own) so one huge line never has to fit in memory."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO swapped in must not block
    except OSError:
        return
    with open(fd, encoding="utf-8", errors="replace", newline=None) as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        number = 1
        while piece := file.readline(max_scan_chars):
            yield number, piece.rstrip("\n")
            if piece.endswith("\n"):
                number += 1


def main(job_path: str) -> None:
    sys.stdout.reconfigure(encoding="utf-8", errors="replace")  # type: ignore[union-attr]
    with open(job_path, encoding="utf-8") as file:
        job = json.load(file)
    pattern = re.compile(job["pattern"])
    max_hits, width = int(job["max_hits"]), int(job["max_line_chars"])
    hits = 0
    for path, name in job["files"]:
        for number, line in lines(path, int(job["max_scan_chars"])):
            if pattern.search(line):
                hits += 1
                if hits <= max_hits:
                    sys.stdout.write(f"{name}:{number}:{line[:width]}\n")
                    sys.stdout.flush()  # what was found before a timeout still reaches the parent
    if hits > max_hits:
        sys.stdout.write(f"… {hits - max_hits} more matching lines\n")


if __name__ == "__main__":
    main(sys.argv[1])
