"""Key concepts: the identifiers a span of the conversation names most often (dotted names,
CamelCase, camelCase, snake_case), for the summary's concepts line."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

MAX_CONCEPTS = 30
"""Most identifiers listed as key concepts."""
MIN_CONCEPT_COUNT = 2
"""An identifier must occur this often to count as a key concept."""
CONCEPT_SCAN_CHARS = 4_000
"""Characters of each assistant text or tool input scanned for identifiers (bounds the cost)."""

IDENTIFIER_RE = re.compile(
    r"\b(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"  # dotted.module.names
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"  # CamelCase
    r"|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+"  # camelCase
    r"|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)\b"  # snake_case, UPPER_SNAKE
)
_NOT_CONCEPT_SUFFIXES = frozenset(
    "py go ts tsx js jsx md json txt yaml yml toml rs java c h cpp sh html css lock cfg ini "
    "com org net io dev ai app log csv xml mdx traj jsonl".split()
)


def identifiers(texts: Iterable[str]) -> list[str]:
    """The identifiers in ``texts`` (each scanned up to ``CONCEPT_SCAN_CHARS``), file names and
    dotted host names aside."""
    found = []
    for text in texts:
        for name in IDENTIFIER_RE.findall(text[:CONCEPT_SCAN_CHARS]):
            last = name.rsplit(".", 1)[-1].lower()
            if "." in name and (
                last in _NOT_CONCEPT_SUFFIXES or min(len(p) for p in name.split(".")) < 2
            ):
                continue
            found.append(name)
    return found


def top_concepts(counts: Counter[str]) -> tuple[tuple[str, int], ...]:
    """The most frequent identifiers seen at least ``MIN_CONCEPT_COUNT`` times, at most
    ``MAX_CONCEPTS``, the most frequent first (ties by name)."""
    ranked = sorted(
        ((name, n) for name, n in counts.items() if n >= MIN_CONCEPT_COUNT),
        key=lambda kv: (-kv[1], kv[0]),
    )
    return tuple(ranked[:MAX_CONCEPTS])
