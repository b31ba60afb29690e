"""One file under several spellings: agents name the same file relative to the working folder
and from the root (``pkg/a.go``, ``/home/me/repo/pkg/a.go``), and a summary that lists each
spelling as a file of its own spends its room on the same path twice.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence

_SEPARATORS = ("/", "\\")
_HERE = ("./", ".\\")


def same_files(paths: Sequence[str]) -> dict[str, str]:
    """Each of ``paths`` that a longer one ends with after a separator (``pkg/a.go`` and
    ``/home/me/repo/pkg/a.go``), mapped to the longest: one file, listed once under a path
    that still holds every spelling of it word for word.

    Only a path with a folder in it is folded (a bare ``package.json`` may be any folder's),
    and only when the longer paths ending with it are themselves one chain (``./pkg/a.go`` is
    the working folder's, on the chain): when two folders hold a ``pkg/a.go``, which one a
    relative ``pkg/a.go`` meant is unknown, and both stay. A spelling that the longest does
    not hold word for word (``./pkg/a.go``) stays listed."""
    ends = _Endings(paths)
    folded: dict[str, str] = {}
    for path in paths:
        if not any(sep in path.strip("/\\") for sep in _SEPARATORS):
            continue
        longer = ends.ending_with(*(sep + path for sep in _SEPARATORS))
        if not longer:
            continue
        target = max(longer, key=len)
        if all(other == target or _ends_with(target, _here(other)) for other in longer):
            folded[path] = target
    return folded


def _here(path: str) -> str:
    """``path`` without a leading ``./``: the working folder's file, the chain's own."""
    return path[2:] if path.startswith(_HERE) else path


class _Endings:
    """Which of some paths end with a given tail, found by bisection among the paths written
    backwards (sorted, those ending with a tail are one run): each path asked of every other
    made a session of thousands of files take minutes."""

    def __init__(self, paths: Sequence[str]) -> None:
        self._paths = paths
        self._order = sorted(range(len(paths)), key=lambda i: paths[i][::-1])
        self._backwards = [paths[i][::-1] for i in self._order]

    def ending_with(self, *tails: str) -> list[str]:
        """The paths that end with one of ``tails``, in their order."""
        found: list[int] = []
        for tail in tails:
            start = tail[::-1]
            at = bisect_left(self._backwards, start)
            while at < len(self._backwards) and self._backwards[at].startswith(start):
                found.append(self._order[at])
                at += 1
        return [self._paths[i] for i in sorted(set(found))]


def _ends_with(longer: str, path: str) -> bool:
    """Whether ``longer`` is ``path`` under a folder: it ends with a separator and ``path``."""
    return len(longer) > len(path) and any(longer.endswith(sep + path) for sep in _SEPARATORS)


MAX_PATH_CHARS = 4_096
"""Linux's ``PATH_MAX``: a longer run of ``/``-separated words is not a path (each of its tails
would be kept)."""
_SLASHED = re.compile(
    r"(?<![^\s`'\"()<>\[\]|*,;:/])[^\s`'\"()<>\[\]|*,;:/]++(?:/[^\s`'\"()<>|*,;:/]++)+"
)
"""A path written with forward slashes in prose (a Markdown link's target, an inline code span);
a folder after the first may be bracketed (a route's ``[slug]``), the first may not (a link's
``[text]``). A match starts only where a run of path characters does, and no part of it gives
back what it took: one pass over a long word, not one per character of it."""


def slashed_tails(prose: str) -> frozenset[str]:
    """Every forward-slash path ``prose`` writes, and each of its tails after a ``/`` that
    still names a folder (``./apps/web/a.ts``: ``apps/web/a.ts``, ``web/a.ts``).

    A path holds a ``/`` and no white space (what ``str.split`` splits at is what ``\\s``
    matches), so only the words holding a ``/`` are searched, each as a whole: the pattern
    tried every place of the prose, and most words hold none."""
    tails: set[str] = set()
    for word in prose.split():
        if "/" not in word:
            continue
        for found in _SLASHED.findall(word):
            if len(found) > MAX_PATH_CHARS:
                continue
            parts = found.split("/")
            tails.update("/".join(parts[i:]) for i in range(len(parts) - 1) if parts[i])
    return frozenset(tails)


def slash_folds(paths: Sequence[str]) -> dict[str, str]:
    """Each of ``paths`` written with ``/`` that spells a Windows path of ``paths`` with ``/``
    for ``\\`` (the whole of it, or a tail with a folder in it), mapped to that path: one
    file (``slash_spelling``). Only when exactly one Windows path ends so."""
    windows = {p.replace("\\", "/"): p for p in paths if "\\" in p and "/" not in p}
    ends = _Endings(list(windows))
    folded: dict[str, str] = {}
    for path in paths:
        if "\\" in path or "/" not in path.strip("/"):
            continue
        spelled = ([path] if path in windows else []) + ends.ending_with("/" + path)
        if len(spelled) == 1:
            folded[path] = windows[spelled[0]]
    return folded


def slash_spelling(path: str, tails: frozenset[str]) -> str:
    """How the conversation writes a file that its tools name by a Windows path: the longest
    tail of ``path`` (with a folder in it) that ``tails`` (``slashed_tails``) holds with ``/``
    for ``\\``, or ''. Windows takes either separator for the same file ("File I/O functions
    in the Windows API convert '/' to '\\'", Microsoft's "Naming Files, Paths, and
    Namespaces"), so an agent's prose names ``d:\\app\\web\\a.ts`` as ``web/a.ts``."""
    if "\\" not in path or "/" in path:
        return ""
    parts = path.split("\\")
    for i in range(1, len(parts) - 1):
        spelled = "/".join(parts[i:])
        if spelled in tails:
            return spelled
    return ""
