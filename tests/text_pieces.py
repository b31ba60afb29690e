"""The held-out text of tests/data/text/held_out/ cut into pieces as
benchmarks/calibrate_heuristic.py cuts them (at the first line end after 1,000 characters), so
tests and docs/tokens.md measure the same pieces."""

from __future__ import annotations

from pathlib import Path

HELD_OUT = Path(__file__).resolve().parent / "data" / "text" / "held_out"
PIECE_CHARS = 1_000
"""Pieces end at the first line end after this many characters (text without line ends, such as
minified assets, at this many characters)."""
MIN_TOKENS = 50
"""Pieces under this many exact tokens are left out of the measures (one token is 2 % of them)."""


def pieces(text: str) -> list[str]:
    """``text`` cut into pieces of about PIECE_CHARS characters, at line ends where it has them."""
    out, start = [], 0
    while start < len(text):
        end = text.find("\n", start + PIECE_CHARS, start + 2 * PIECE_CHARS)
        end = min(len(text), start + PIECE_CHARS) if end < 0 else end + 1
        out.append(text[start:end])
        start = end
    return out


def held_out(kind: str) -> list[str]:
    files = [p for p in sorted(HELD_OUT.glob("*.txt")) if p.name.split(".")[0] == kind]
    return [piece for p in files for piece in pieces(p.read_text(encoding="utf-8"))]
