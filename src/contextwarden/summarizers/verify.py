"""Checking an LLM summary against the deterministic facts, and appending what it left out.

A model may paraphrase, skip or forget. Whatever must survive — every user message, every file a
tool read or wrote, every error still unresolved — is looked for in the summary text (verbatim,
whitespace folded); what is missing is appended under ``ADDED_HEADING``, so a summary may be
incomplete in prose but never in facts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from contextwarden.summarizers.base import SECTION_TITLES, Summary
from contextwarden.summarizers.carry import ADDED_FILES_LABEL, ADDED_USERS_LABEL, format_item
from contextwarden.summarizers.facts import Facts
from contextwarden.summarizers.sections import head_tail
from contextwarden.tokens.base import TokenCounter

ADDED_HEADING = "10. Facts the summary missed (added by contextwarden):"
USERS_LABEL = ADDED_USERS_LABEL
FILES_LABEL = ADDED_FILES_LABEL
ERRORS_LABEL = "Unresolved errors the summary does not mention:"
_HEADING_RE = re.compile(r"^[ \t]*(?:#+[ \t]*)?\**([1-9])\.[ \t]+\**([A-Za-z]+)[^\n]*$", re.M)


@dataclass(frozen=True, slots=True)
class VerifyPolicy:
    max_message_tokens: int = 2_000
    """A user message appended by verification is cut to head + tail beyond this size."""


def _fold(text: str) -> str:
    return " ".join(text.split())


def verify(
    text: str, facts: Facts, counter: TokenCounter, policy: VerifyPolicy | None = None
) -> tuple[str, tuple[str, ...]]:
    """``text`` plus a section of what it misses, and one line per added fact."""
    policy = policy or VerifyPolicy()
    folded = _fold(text)
    lines: list[str] = []
    added: list[str] = []
    users = [m for m in facts.user_messages if _fold(m.text) not in folded]
    if users:
        lines.append(USERS_LABEL)
        for number, message in enumerate(facts.user_messages, start=1):
            if message in users:
                quoted = head_tail(message.text, policy.max_message_tokens, counter)
                lines.append(format_item(number, quoted) + "\n")
                added.append(f"user message #{number}")
    files = [f for f in facts.files if f.read_or_written and f.path not in text]
    if files:
        lines.append(FILES_LABEL)
        lines += [f"- `{f.path}` — {', '.join(dict.fromkeys(f.operations))}" for f in files]
        added += [f"file {f.path}" for f in files]
    errors = [e for e in facts.unresolved_errors if _fold(e.excerpt) not in folded]
    if errors:
        lines.append(ERRORS_LABEL)
        lines += [f"- {e.tool} `{_fold(e.target)[:200]}`: {e.excerpt}" for e in errors]
        added += [f"error {e.excerpt}" for e in errors]
    if not lines:
        return text, ()
    return f"{text.rstrip()}\n\n{ADDED_HEADING}\n" + "\n".join(lines), tuple(added)


def split_sections(text: str) -> Mapping[int, str]:
    """Section bodies of a summary keyed by number (1..9, and 10 when verification added one).

    A heading is a line ``N. Title:`` (Markdown ``#`` or ``**`` around it allowed); a number
    seen twice keeps its first body.
    """
    sections: dict[int, str] = {}
    added = text.find(ADDED_HEADING)
    stop = added if added >= 0 else len(text)
    heads = [h for h in _HEADING_RE.finditer(text, 0, stop) if _is_title(h)]
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else stop
        sections.setdefault(int(head.group(1)), text[head.end() : end].strip())
    if added >= 0:
        sections[10] = text[added + len(ADDED_HEADING) :].strip()
    return MappingProxyType(dict(sorted(sections.items())))


def _is_title(head: re.Match[str]) -> bool:
    """A numbered line is a heading only when it starts with its section's title word."""
    expected = SECTION_TITLES[int(head.group(1)) - 1].split()[0].lower()
    return head.group(2).lower() == expected


def verified_summary(
    text: str,
    facts: Facts,
    counter: TokenCounter,
    *,
    requests: int,
    policy: VerifyPolicy | None = None,
) -> Summary:
    """The Summary of an LLM reply after verification."""
    full, added = verify(text, facts, counter, policy)
    return Summary(full, split_sections(full), added, requests)
