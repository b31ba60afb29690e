"""One file under several spellings: agents name the same file relative to the working folder
and from the root (``pkg/a.go``, ``/home/me/repo/pkg/a.go``), and a summary that lists each
spelling as a file of its own spends its room on the same path twice.
"""

from __future__ import annotations

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
    folded: dict[str, str] = {}
    for path in paths:
        if not any(sep in path.strip("/\\") for sep in _SEPARATORS):
            continue
        longer = [other for other in paths if _ends_with(other, path)]
        if not longer:
            continue
        target = max(longer, key=len)
        if all(other == target or _ends_with(target, _here(other)) for other in longer):
            folded[path] = target
    return folded


def _here(path: str) -> str:
    """``path`` without a leading ``./``: the working folder's file, the chain's own."""
    return path[2:] if path.startswith(_HERE) else path


def _ends_with(longer: str, path: str) -> bool:
    """Whether ``longer`` is ``path`` under a folder: it ends with a separator and ``path``."""
    return len(longer) > len(path) and any(longer.endswith(sep + path) for sep in _SEPARATORS)
