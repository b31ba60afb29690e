"""What a load reports: where a history came from and which records could not be used.

A value below the history (which keeps it as ``history.source``), the API converters and the
session-file loaders alike, so each of them can say what it set aside without importing the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SHOWN_KEYS = 8
"""How many of an unreadable record's keys an error message names."""
SHOWN_TEXT = 60
"""How many characters of an unreadable line of text an error message quotes."""


@dataclass(frozen=True, slots=True)
class LoadIssue:
    """A record that could not be used, or was used after a repair."""

    message: str
    line: int | None = None
    """1-based line number in a JSONL file."""
    index: int | None = None
    """Record or message index in a JSON document."""

    def __str__(self) -> str:
        where = [f"line {self.line}" if self.line is not None else "", ""]
        where[1] = f"record {self.index}" if self.index is not None else ""
        prefix = ", ".join(w for w in where if w)
        return f"{prefix}: {self.message}" if prefix else self.message


@dataclass
class LoadReport:
    """Where a history came from and what could not be read from it."""

    path: str | None
    format: str
    records: int = 0
    """Records (lines, events, messages) the file holds."""
    issues: list[LoadIssue] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    """Format-specific facts kept aside (compaction records, session ids, conversation count…)."""
    unreadable: int = 0
    """Records that are not of the format at all (``reject``), as opposed to records of the
    format that were set aside; ``load`` refuses a file where most records are unreadable."""
    first_unreadable: tuple[LoadIssue, str] | None = None
    """The first unreadable record's issue and what it holds (its keys, or its JSON type)."""

    def skip(self, message: str, *, line: int | None = None, index: int | None = None) -> None:
        self.issues.append(LoadIssue(message, line, index))

    def set_aside(
        self, key: str, item: Any, why: str, *, line: int | None = None, index: int | None = None
    ) -> None:
        """Keep ``item`` in ``metadata[key]`` (a list) and report why it is not in the view, with
        where it is kept: nothing a loader does not use is lost."""
        self.metadata.setdefault(key, []).append(item)
        self.skip(f"{why}; kept in metadata[{key!r}]", line=line, index=index)

    def reject(
        self, message: str, value: Any, *, line: int | None = None, index: int | None = None
    ) -> None:
        """Report a record that is not of the format at all, and count it as unreadable."""
        self.skip(message, line=line, index=index)
        self.unreadable += 1
        if self.first_unreadable is None:
            self.first_unreadable = (self.issues[-1], describe_value(value))


def describe_value(value: Any) -> str:
    """What a record holds, for an error message: its keys (first ``SHOWN_KEYS``) or its type."""
    if isinstance(value, Mapping):
        keys = list(value)
        shown = ", ".join(map(str, keys[:SHOWN_KEYS])) + (", …" if len(keys) > SHOWN_KEYS else "")
        return f"keys [{shown}]"
    if isinstance(value, str):
        return f"the text {value[:SHOWN_TEXT]!r}"
    return "text that is not JSON" if value is None else f"a JSON {type(value).__name__}"
