"""The directory an agent's tools may touch: every path is resolved (symlinks included) and must
stay inside it, whether given relative, absolute, with ``..`` or through a link."""

from __future__ import annotations

from pathlib import Path

__all__ = ["Workspace"]


class Workspace:
    """Paths inside ``root`` for reading; inside ``write_root`` (default: ``root``) for writing.

    ``resolve`` raises PermissionError for a path that leaves its area after resolving every
    symlink, so a link planted inside the workspace cannot reach outside it, and a path that
    cannot name a file (a NUL byte) is refused the same way.
    """

    def __init__(self, root: str | Path, write_root: str | Path | None = None) -> None:
        self.root = Path(root).resolve()
        self.write_root = Path(write_root).resolve() if write_root is not None else self.root
        if not self.root.is_dir():
            raise NotADirectoryError(f"workspace {self.root} is not a directory")

    def resolve(self, path: str | Path, *, write: bool = False) -> Path:
        """``path`` (relative paths are taken from the root) resolved and checked."""
        text = str(path)
        if "\x00" in text:
            raise PermissionError(f"{text!r} cannot name a file")
        area = self.write_root if write else self.root
        candidate = Path(text).expanduser()
        full = (candidate if candidate.is_absolute() else self.root / candidate).resolve()
        if not full.is_relative_to(area):
            verb = "write" if write else "read"
            raise PermissionError(f"{text} is outside the workspace ({area}); cannot {verb} it")
        return full

    def display(self, path: Path) -> str:
        """``path`` relative to the root when inside it (shorter output for the model)."""
        return str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path)
