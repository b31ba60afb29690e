"""The sniffed head: the start of a file that format detection shows each loader's ``sniff``.

A JSON file whose first record is bigger than the head (a Codex ``session_meta`` carrying its
instructions, an OpenHands instance line, a Cline history opening with a pasted log) shows the
sniffers one unfinished value; when none knows it, the head is read further with every long
string cut short, so the keys that say what the file is come into view.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from contextwarden.wire.common import loads

SNIFF_BYTES = 256 * 1024
"""How much of a file the sniffers see: its first bytes, or that much condensed text."""
LONG_HEAD_BYTES = 64 * 1024 * 1024
"""How far a condensed head may read: past this a first record is not worth telling."""
KEPT_CHARS = 2048
"""How much of each JSON string a condensed head keeps: ids, types and the openings of texts
(where agents put their markers) are far shorter."""
CHUNK_BYTES = 1024 * 1024

_JSON_START = ("{", "[")
_STRING_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
"""A JSON string's characters up to its closing quote (or a backslash the chunk cut off)."""
_WHOLE_ESCAPES = re.compile(r'(?:[^"\\]|\\u[0-9a-fA-F]{4}|\\[^u])*')
"""The longest prefix of a string body that ends on no half escape."""


def sniffed_heads(path: Path) -> Iterator[str]:
    """What the sniffers are shown of ``path``, in turn until one knows it: its first
    ``SNIFF_BYTES``, then, only when those are one unfinished JSON value, the file's condensed
    start (see ``condensed_head``). Ordinary files are told on the first and read no further."""
    with path.open("rb") as fh:
        raw = fh.read(SNIFF_BYTES)
        more = bool(fh.read(1))
    head = raw.decode("utf-8", errors="replace")
    yield head
    if more and _first_value_unfinished(head):
        yield condensed_head(path)


def _first_value_unfinished(head: str) -> bool:
    """True when the head opens a JSON value and holds no whole first line: a JSON document
    bigger than the head, or a JSONL file whose first record is."""
    text = head.lstrip("\ufeff \t\r\n")
    if not text.startswith(_JSON_START):
        return False
    first, newline, _ = text.partition("\n")
    if not newline:
        return True
    try:
        return not isinstance(loads(first), dict)  # a pretty-printed document's "{" line
    except json.JSONDecodeError:
        return True


def condensed_head(path: Path, limit: int = SNIFF_BYTES, most: int = LONG_HEAD_BYTES) -> str:
    """Up to ``limit`` characters of the file's text with every JSON string cut to its first
    ``KEPT_CHARS``, read from at most ``most`` bytes; structure and keys are untouched, so what
    parsed before parses now, and a record bigger than the head fits in it."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    condenser = _Condenser()
    size, read = 0, 0
    with path.open("rb") as fh:
        while size < limit and read < most:
            chunk = fh.read(CHUNK_BYTES)
            read += len(chunk)
            size += condenser.feed(decoder.decode(chunk, final=not chunk))
            if not chunk:
                break
    return "".join(condenser.out)[:limit]


@dataclass(slots=True)
class _Condenser:
    """A scan of JSON text fed in chunks: outside strings everything is kept; inside one, only
    its first ``KEPT_CHARS`` characters (whole escapes only) and its closing quote."""

    out: list[str] = field(default_factory=list)
    in_string: bool = False
    kept: int = 0
    rest: str = ""  # a backslash the last chunk ended on: its escape goes on in the next

    def feed(self, chunk: str) -> int:
        """Scan ``chunk``; returns how many characters it added to ``out``."""
        text, self.rest = self.rest + chunk, ""
        before = len(self.out)
        pos = 0
        while pos < len(text):
            if not self.in_string:
                quote = text.find('"', pos)
                end = len(text) if quote < 0 else quote + 1
                self.out.append(text[pos:end])
                self.in_string, self.kept, pos = quote >= 0, 0, end
                continue
            end = _STRING_BODY.match(text, pos).end()  # type: ignore[union-attr]
            self._keep(text[pos : min(end, pos + KEPT_CHARS)])  # no copy of a long text
            if end == len(text) or text[end] == "\\":  # the string goes on in the next chunk
                self.rest = text[end:]
                break
            self.out.append('"')
            self.in_string, pos = False, end + 1
        return sum(len(piece) for piece in self.out[before:])

    def _keep(self, body: str) -> None:
        """Add the string's ``body`` (its next characters) while fewer than ``KEPT_CHARS``
        of it are kept."""
        room = KEPT_CHARS - self.kept
        if room <= 0:
            return
        part = body[:room]
        whole = _WHOLE_ESCAPES.match(part).end()  # type: ignore[union-attr]
        self.out.append(part[:whole])
        # a half escape ends what is kept: the next chunk's rest of it would read as text
        self.kept = self.kept + whole if whole == len(part) else KEPT_CHARS
