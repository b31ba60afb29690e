"""``contextwarden demo``: a realistic coding-agent session, built by really running tools.

A scripted agent reviews a real directory (by default contextwarden's own source): it lists, reads
and searches files and runs commands with subprocess, and every output in the session is the real
one, with the time it happened. Its words are templates filled from what the tools returned — a
scripted agent, not a model — so the demo needs no API key and no network.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from contextwarden.agent.tools import Tools
from contextwarden.agent.workspace import Workspace
from contextwarden.errors import ContextWardenError
from contextwarden.eval.demo_recorder import Recorder
from contextwarden.eval.demo_script import NOTE_NAME, SYSTEM_PROMPT, Review
from contextwarden.history import ConversationHistory

TEXT_SUFFIXES = frozenset(
    ".py .md .txt .rst .toml .cfg .json .yaml .yml .rs .go .ts .tsx .js .jsx .c .h .cpp .java "
    ".rb .sh .sql .html .css".split()
)


def source_files(root: Path) -> list[Path]:
    """The text files the agent may review, largest first (name breaks ties)."""
    found = [
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix in TEXT_SUFFIXES
        and "__pycache__" not in p.parts
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    ]
    return sorted(found, key=lambda p: (-p.stat().st_size, str(p)))


def build_session(
    root: Path, scratch: Path, *, clock: Callable[[], float] = time.time
) -> ConversationHistory:
    """Run the scripted review of ``root`` (writing only under ``scratch``); return the session."""
    root = root.resolve()
    files = source_files(root)
    if not files:
        raise ContextWardenError(f"demo: no text files to review under {root}")
    suffix = Counter(p.suffix for p in files).most_common(1)[0][0]
    review = Review(
        Recorder(Tools(Workspace(root, scratch)), SYSTEM_PROMPT.format(root=root), clock),
        root,
        files,
        suffix,
        scratch / NOTE_NAME,
    )
    review.run()
    return review.rec.history


def default_root() -> Path:
    """This package's own source directory: present wherever contextwarden is installed."""
    return Path(__file__).resolve().parents[1]


def generate(root: Path | None = None) -> ConversationHistory:
    """The demo session over ``root`` (default: ``default_root()``); the scratch dir is removed."""
    directory = root or default_root()
    if not directory.is_dir():
        raise ContextWardenError(f"demo: {directory} is not a directory")
    with tempfile.TemporaryDirectory(prefix="contextwarden-demo-") as scratch:
        return build_session(directory, Path(scratch))
