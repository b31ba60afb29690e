"""Wire and log formats: provider payloads and agent session files in and out of our model.

Each format module exposes ``NAME``, ``sniff(path, head) -> bool`` (does this file look like mine?)
and ``read(path, report, *, index, counter) -> ConversationHistory`` (merge mode). ``load`` picks
the module, runs it and attaches the LoadReport as ``history.source``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from contextwarden.errors import FormatError
from contextwarden.formats.base import LoadIssue, LoadReport

if TYPE_CHECKING:
    from contextwarden.history import ConversationHistory
    from contextwarden.tokens.base import TokenCounter

# Most specific first: auto-detection asks each module in this order.
FORMATS: dict[str, str] = {
    "claude-code": "contextwarden.formats.claude_code",
    "codex": "contextwarden.formats.codex",
    "openhands": "contextwarden.formats.openhands",
    "swe-agent": "contextwarden.formats.swe_agent",
    "openai": "contextwarden.formats.openai",
    "anthropic": "contextwarden.formats.anthropic_file",
}
SNIFF_BYTES = 256 * 1024

__all__ = ["FORMATS", "LoadIssue", "LoadReport", "detect_format", "load"]


def _module(name: str) -> ModuleType:
    if name not in FORMATS:
        known = ", ".join(["auto", *FORMATS])
        raise FormatError(f"unknown format {name!r}; use one of: {known}")
    return importlib.import_module(FORMATS[name])


def detect_format(path: str | Path) -> str:
    """The name of the format ``path`` is in, or FormatError when no loader recognises it."""
    file = Path(path)
    with file.open("rb") as fh:
        head = fh.read(SNIFF_BYTES).decode("utf-8", errors="replace")
    for name in FORMATS:
        if _module(name).sniff(file, head):
            return name
    raise FormatError(
        "could not tell the format; pass format= (one of: " + ", ".join(FORMATS) + ")",
        path=str(file),
    )


def load(
    path: str | Path,
    format: str = "auto",
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read a session file into a ConversationHistory (merge mode).

    ``index`` picks a conversation in files that hold several (OpenHands ``output.jsonl``).
    What could not be read is in ``history.source.issues``; nothing good is dropped.
    """
    file = Path(path)
    if not file.is_file():
        raise FormatError("no such file", path=str(file))
    name = detect_format(file) if format == "auto" else format
    report = LoadReport(str(file), name)
    try:
        history: ConversationHistory = _module(name).read(
            file, report, index=index, counter=counter
        )
    except FormatError as exc:
        if exc.path is not None:
            raise
        located = FormatError(str(exc), path=str(file))  # str(exc) already names line/index
        located.line, located.index = exc.line, exc.index
        raise located from exc
    history.finish_import()
    history.source = report
    return history
