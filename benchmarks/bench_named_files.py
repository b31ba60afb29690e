"""Which code spans two versions take for files a transcript without tool calls names
(``summarizers/named_files``): every session file under the given folders loaded, and the
distinct one-word code spans of its assistant texts that each version lists, compared. A span
one version drops and the other keeps is printed, so what a change to the spelling of a file
does can be read word by word (an attribute such as ``self.name`` is no file).

    python benchmarks/bench_named_files.py --before BASE/src [--after src] [DIR …]

``BASE`` is an earlier checkout (``git archive REV src | tar -x -C BASE``); the folders (DIR)
default to the fixtures in ``tests/data``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench_summary_speed import in_child, session_folders, sessions, versions_parser


def child(folders: list[Path]) -> dict[str, Any]:
    """The spans this version lists as named files, over every session that loads."""
    from contextwarden.errors import ContextWardenError
    from contextwarden.formats import load
    from contextwarden.summarizers.named_files import named_file_ops

    spans: dict[str, int] = {}
    for path in sessions(folders):
        try:
            history = load(path)
        except ContextWardenError:
            continue  # not a session (a probe file, a README, a bad-input fixture)
        for _, op in named_file_ops(history.messages):
            spans[op.path] = spans.get(op.path, 0) + 1
    return spans


def spans_of(src: Path, folders: list[Path]) -> dict[str, int]:
    argv = [sys.executable, __file__, "--child", *map(str, folders)]
    done = subprocess.run(
        argv, env={**os.environ, "PYTHONPATH": str(src)}, capture_output=True, text=True, check=True
    )
    spans: dict[str, int] = json.loads(done.stdout)
    return spans


def main() -> None:
    parser = versions_parser(__doc__.split("\n\n")[0])
    args = parser.parse_args()
    folders = session_folders(parser, args)
    if in_child(parser, args, folders, child):
        return
    before, after = spans_of(args.before, folders), spans_of(args.after, folders)
    dropped, added = sorted(set(before) - set(after)), sorted(set(after) - set(before))
    print(f"distinct spans listed as files: {len(before):,} → {len(after):,}")
    print(f"mentions: {sum(before.values()):,} → {sum(after.values()):,}")
    print(f"dropped ({len(dropped)}): {' '.join(dropped)}")
    print(f"added ({len(added)}): {' '.join(added)}")


if __name__ == "__main__":
    main()
