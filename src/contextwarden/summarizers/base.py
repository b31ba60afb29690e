"""The Summarizer protocol and the Summary value every summarizer returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from contextwarden.model import Message

SECTION_TITLES: tuple[str, ...] = (
    "Primary Request and Intent",
    "Key Technical Concepts",
    "Files and Code Sections",
    "Errors and Fixes",
    "Problem Solving",
    "All User Messages",
    "Pending Tasks",
    "Current Work",
    "Optional Next Step",
)
"""The nine sections, in order; section ``n`` (1-based) is ``SECTION_TITLES[n - 1]``."""


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary's full text and its sections keyed 1..9 (``section()`` also takes a title)."""

    text: str
    sections: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))
    added_facts: tuple[str, ...] = ()
    """What verification appended because an LLM summary left it out (one line per fact)."""
    requests: int = 0
    """Model requests the summary took (0 for the offline summarizer; >1 when chunked)."""

    def section(self, key: int | str) -> str:
        """Body of section ``key``: its number (1..9) or its title (case-insensitive)."""
        if isinstance(key, str):
            titles = [t.lower() for t in SECTION_TITLES]
            if key.lower() not in titles:
                raise KeyError(f"no section titled {key!r}; titles: {', '.join(SECTION_TITLES)}")
            key = titles.index(key.lower()) + 1
        return self.sections.get(key, "")


@runtime_checkable
class Summarizer(Protocol):
    """Summarizes the messages compaction is about to replace."""

    def summarize(self, messages: Sequence[Message], *, instructions: str | None = None) -> Summary:
        """A summary of ``messages``; raises SummarizerError on failure."""
        ...


@runtime_checkable
class AsyncSummarizer(Protocol):
    """The async face of a summarizer; every summarizer here offers both from one implementation."""

    async def asummarize(
        self, messages: Sequence[Message], *, instructions: str | None = None
    ) -> Summary:
        """A summary of ``messages``; raises SummarizerError on failure."""
        ...
