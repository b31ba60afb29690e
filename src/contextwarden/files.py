"""FileTracker: which files the agent read or wrote, so they can be re-read after a compaction.

Paths come from tool inputs (``file_path``, ``path``, …; Codex patches name theirs in the patch).
Re-reading happens only inside a configured workspace root: ``..`` escapes and symlinks that
resolve outside it are refused, deleted and binary files are skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from contextwarden.compaction.tools import matcher_for
from contextwarden.model import Message, TextBlock
from contextwarden.tokens.base import TokenCounter
from contextwarden.toolnames import patch_files, patch_text, path_of

log = logging.getLogger("contextwarden")

FILE_TOOLS: tuple[str, ...] = ("Read", "Write", "Edit", "NotebookEdit", "MultiEdit")
HEADER = "Contents of {path} (re-read after compaction):\n\n"
CUT_NOTE = "\n[… file cut at about {tokens:,} tokens]"
FIT_AIM = 0.95
"""When a file is over its token budget, each cut aims this far under it."""
BYTES_PER_TOKEN_READ = 8
"""Read at most this many bytes per allowed token: enough text for the budget, never a whole
huge file."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How much re-read file text a compaction may add (the policy's numbers)."""

    max_files: int = 5
    max_tokens_per_file: int = 5_000
    restore_budget: int = 50_000


class FileTracker:
    """Remembers the files touched through tool calls, most recent first."""

    __slots__ = ("_matcher", "_recent")

    def __init__(self, tools: Iterable[str] = FILE_TOOLS) -> None:
        self._matcher = matcher_for(tuple(tools))
        self._recent: dict[str, None] = {}  # insertion-ordered: the last key is the most recent

    def observe(self, message: Message) -> None:
        """Record the files ``message``'s tool calls read or write."""
        for path in self.paths_of(message):
            self._recent.pop(path, None)
            self._recent[path] = None

    def paths_of(self, message: Message) -> list[str]:
        """The paths ``message``'s file tool calls name, in call order."""
        if message.role != "assistant":
            return []
        return [
            p
            for use in message.tool_uses
            if self._matcher.matches(use.name)
            for p in _paths(use.input)
        ]

    def paths_in(self, messages: Iterable[Message]) -> set[str]:
        return {p for m in messages for p in self.paths_of(m)}

    def recent(self) -> list[str]:
        """Every path seen, most recent first."""
        return list(reversed(self._recent))

    def clear(self) -> None:
        self._recent.clear()

    def reattach(
        self,
        workspace: str | Path | None,
        counter: TokenCounter,
        budget: Budget = Budget(),
        *,
        exclude: Iterable[str] = (),
    ) -> list[TextBlock]:
        """Re-read the most recent files inside ``workspace`` within ``budget``, as text blocks.

        ``exclude``: paths whose content is already in the kept messages. No workspace, nothing
        re-read.
        """
        if workspace is None:
            return []
        root = Path(workspace).resolve()
        skip = set(exclude)
        blocks: list[TextBlock] = []
        used = 0
        for path in self.recent():
            if len(blocks) >= budget.max_files:
                break
            if path in skip:
                continue
            block = _read_block(root, path, counter, budget.max_tokens_per_file)
            if block is None:
                continue
            tokens = counter.count_text(block.text)
            if used + tokens > budget.restore_budget:
                continue
            blocks.append(block)
            used += tokens
        return blocks


def _paths(tool_input: Mapping[str, object]) -> list[str]:
    path = path_of(tool_input)
    if path is not None:
        return [path]
    return [f.path for f in patch_files(patch_text(tool_input)) if f.operation != "Delete"]


def inside(root: Path, path: str) -> Path | None:
    """``path`` resolved (symlinks followed) if it is an existing file inside ``root``, else None.

    ``root`` must already be resolved. Relative paths are taken from ``root``.
    """
    try:
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = root / candidate
        resolved = candidate.resolve(strict=True)
        if not resolved.is_relative_to(root):
            log.debug("not re-reading %s: it resolves outside the workspace %s", path, root)
            return None
        return resolved if resolved.is_file() else None
    except (OSError, RuntimeError, ValueError) as exc:
        # Deleted, a dangling symlink or a loop, or no possible file at all (a NUL byte, a name
        # too long): a path taken from a tool's input is only a hint, never a reason to fail.
        log.debug("not re-reading %r: %s", path, exc)
        return None


def _read_block(root: Path, path: str, counter: TokenCounter, max_tokens: int) -> TextBlock | None:
    resolved = inside(root, path)
    if resolved is None:
        return None
    try:
        with resolved.open("rb") as fh:
            data = fh.read(max_tokens * BYTES_PER_TOKEN_READ + 1)
    except OSError as exc:
        log.debug("not re-reading %s: %s", resolved, exc)
        return None
    if b"\x00" in data:
        return None  # binary
    text = data.decode("utf-8", errors="replace")
    truncated = len(data) > max_tokens * BYTES_PER_TOKEN_READ
    text, cut = _fit(text, counter, max_tokens)
    if cut or truncated:
        text += CUT_NOTE.format(tokens=max_tokens)
    if not text.strip():
        return None
    shown = resolved.relative_to(root).as_posix()
    return TextBlock(HEADER.format(path=shown) + text)


def _fit(text: str, counter: TokenCounter, max_tokens: int) -> tuple[str, bool]:
    """``text`` cut (at a line end when possible) to at most ``max_tokens`` tokens."""
    tokens = counter.count_text(text)
    if tokens <= max_tokens:
        return text, False
    while tokens > max_tokens and text:
        keep = int(len(text) * max_tokens / tokens * FIT_AIM)
        nl = text.rfind("\n", 0, keep)
        text = text[: nl + 1] if nl > keep // 2 else text[:keep]
        tokens = counter.count_text(text)
    return text, True
