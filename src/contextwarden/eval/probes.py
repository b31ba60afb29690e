"""Fact-retention probes: strings that must still be in the context a strategy sends to the model.

A probe is checked at every request from its first turn on: the first request whose context holds
the message it came from (derived probes), the turn a PROBES.json entry names, or else the first
request whose unmanaged context contains it. Retention is the share of those (probe, request)
checks that find the probe verbatim in the system prompt or the messages sent (see ``messages``).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.model import Message, TextBlock
from contextwarden.searchable import SEPARATOR, message_text, strings
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.failures import result_failure

MIN_PROBE_CHARS = 6
"""Derived probes shorter than this are skipped: "ok" or "yes" would be found anywhere by chance,
so their presence says nothing about what a strategy kept."""
CLIPPED = "…"
"""How ``failure_excerpt`` marks an error line it shortened; the probe is the verbatim prefix."""
KINDS = ("user_message", "file_path", "error", "decision", "error_message", "custom")
REASONED_KINDS = ("decision", "error_message")
"""Probes of what the agent concluded and what failed, said in words: not drawn from the
summarizers' fact extraction (see ``reasoning_probes``), so a summary is not graded on its own
list."""
MIN_SENTENCE_CHARS = 30
"""A decision sentence shorter than this says too little to be a fact worth keeping."""
MAX_PROBE_CHARS = 200
"""Longer sentences and error lines are probed by their first this-many characters (verbatim)."""
ERROR_MESSAGE_LINES = 3
"""Error-message probes taken from one failed result at most (its first such lines)."""
MIN_ERROR_LINE_CHARS = 12
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_CHOICE = re.compile(
    r"\b(?:instead of|rather than|decided|decide to|decision|chose|choose|going with|opt(?:ed)? "
    r"for|the (?:fix|solution|approach|plan|cleanest|simplest|best|right|safest) \w*\s?(?:is|was|"
    r"would be|will be)|I'll|I will|we'll|we will|we should|I should|let's)\b",
    re.I,
)
_REASON = re.compile(
    r"\b(?:because|since|so that|to avoid|so we|so it|so the|which means|otherwise|due to|"
    r"as it|given that)\b",
    re.I,
)
_ERROR_WORDS = re.compile(
    r"\b(?:error|exception|failed|failure|fatal|panic|cannot|can't|could not|unable to|"
    r"not found|no such|denied|invalid|refused|timed out)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Probe:
    """A string that must be present in the context from ``turn`` (a 0-based request index) on.

    ``turn=None``: from the first request whose unmanaged context contains it; a ``turn`` before
    that is moved to it (a fact cannot be kept before it was said). ``source`` is the index of
    the message a derived probe came from: the user message, the failed result, the tool call.
    """

    text: str
    kind: str = "custom"
    turn: int | None = None
    source: int | None = None


@dataclass(frozen=True, slots=True)
class ProbeSet:
    """Probes with their first turn resolved, and those that can never be checked, with why."""

    probes: tuple[Probe, ...]
    first_turns: tuple[int, ...]
    unchecked: tuple[tuple[Probe, str], ...] = ()

    def __len__(self) -> int:
        return len(self.probes)


def system_text(system: str | Sequence[Mapping[str, Any]] | None) -> str:
    """The system prompt's text (a string, or the text of its blocks)."""
    if system is None:
        return ""
    return system if isinstance(system, str) else SEPARATOR.join(strings(list(system)))


# ----------------------------------------------------------------------------- reading, deriving
def load_probes(path: str | Path) -> tuple[Probe, ...]:
    """Read PROBES.json: a list (or ``{"probes": [...]}``) of strings or objects
    ``{"text": str, "turn": int (optional), "kind": str (optional)}``."""
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FormatError(f"not valid JSON: {exc.msg}", path=str(file), line=exc.lineno) from exc
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text (byte {exc.start})", path=str(file)) from exc
    items = data.get("probes") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise FormatError('expected a list of probes or {"probes": [...]}', path=str(file))
    return tuple(_probe(item, i, str(file)) for i, item in enumerate(items))


def _probe(item: Any, index: int, path: str) -> Probe:
    if isinstance(item, str):
        item = {"text": item}
    if not isinstance(item, dict):
        raise FormatError("a probe is a string or an object with 'text'", path=path, index=index)
    text, turn, kind = item.get("text"), item.get("turn"), item.get("kind", "custom")
    if not isinstance(text, str) or not text:
        raise FormatError("a probe needs a non-empty string 'text'", path=path, index=index)
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int) or turn < 0):
        raise FormatError(f"'turn' must be an int >= 0, got {turn!r}", path=path, index=index)
    if not isinstance(kind, str):
        raise FormatError(f"'kind' must be a string, got {kind!r}", path=path, index=index)
    return Probe(text.replace(SEPARATOR, ""), kind, turn)


def default_probes(messages: Sequence[Message]) -> tuple[Probe, ...]:
    """Every typed user message, every file path a tool touched, every error line; each once.

    Uses ``extract_facts`` (the summarizers' own extraction), so the probes are exactly the facts
    a summary promises to keep. Messages carried by an earlier summary are not new facts.
    """
    facts = extract_facts(messages)
    found: list[Probe] = [
        Probe(m.text, "user_message", source=m.index) for m in facts.user_messages if not m.carried
    ]
    # A path is due from the call that touched it, not from an earlier mention in a patch's text.
    found.extend(Probe(f.path, "file_path", source=f.first_index) for f in facts.files)
    found.extend(
        Probe(e.excerpt.removesuffix(CLIPPED), "error", source=e.index) for e in facts.errors
    )
    return _unique(found)


def reasoning_probes(messages: Sequence[Message]) -> tuple[Probe, ...]:
    """Decisions the agent stated and the error messages of failed calls; each once.

    Mechanical rules, independent of any summarizer's extraction: a *decision* is a sentence of
    an assistant's text that names a choice (``_CHOICE``: "instead of", "the fix is", "I'll"…)
    and a reason (``_REASON``: "because", "so that", "to avoid"…) — what was decided and why.
    An *error message* is one of the first ``ERROR_MESSAGE_LINES`` lines of a failed tool result
    (failed as ``result_failure`` judges it) that use an error word (``_ERROR_WORDS``). Both
    are probed by their first ``MAX_PROBE_CHARS`` characters, verbatim.
    """
    calls = {u.id: u for m in messages for u in m.tool_uses}
    found: list[Probe] = []
    for index, message in enumerate(messages):
        if message.role == "assistant":
            found.extend(Probe(s, "decision", source=index) for s in _decisions(message))
        for result in message.tool_results:
            if result_failure(calls.get(result.tool_use_id), result) is not None:
                lines = _error_lines(result.text)
                found.extend(Probe(line, "error_message", source=index) for line in lines)
    return _unique(found)


def _decisions(message: Message) -> Iterable[str]:
    for block in message.content:
        if isinstance(block, TextBlock):
            for sentence in _SENTENCE_END.split(block.text):
                text = sentence.strip()
                if (
                    len(text) >= MIN_SENTENCE_CHARS
                    and _CHOICE.search(text)
                    and _REASON.search(text)
                ):
                    yield text[:MAX_PROBE_CHARS]


def _error_lines(text: str) -> list[str]:
    lines: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()[:MAX_PROBE_CHARS]
        if len(stripped) >= MIN_ERROR_LINE_CHARS and _ERROR_WORDS.search(stripped):
            if stripped not in lines:
                lines.append(stripped)
            if len(lines) >= ERROR_MESSAGE_LINES:
                break
    return lines


def _unique(found: Sequence[Probe]) -> tuple[Probe, ...]:
    seen: set[str] = set()
    unique = []
    for probe in found:
        text = probe.text.replace(SEPARATOR, "")
        if len(text.strip()) >= MIN_PROBE_CHARS and text not in seen:
            seen.add(text)
            unique.append(Probe(text, probe.kind, probe.turn, probe.source))
    return tuple(unique)


def resolve(probes: Sequence[Probe], messages: Sequence[Message], system: str = "") -> ProbeSet:
    """Give each probe its first turn; a probe absent from the whole conversation is unchecked.

    Requests are numbered by the assistant messages they precede: request ``k`` holds every message
    before the ``k``-th assistant message. A probe with a ``source`` holding it is due from that
    message on (a user message quoted earlier in a file read is not yet said). Otherwise one
    ``find`` over the joined text gives its first occurrence, at the cost of one scan up to it.
    """
    texts = [system, *(message_text(m) for m in messages)]
    starts, pos = [], 0
    for text in texts:
        starts.append(pos)
        pos += len(text) + 1
    whole = SEPARATOR.join(texts)
    replies = [i for i, m in enumerate(messages) if m.role == "assistant"]
    kept: list[Probe] = []
    turns: list[int] = []
    unchecked: list[tuple[Probe, str]] = []
    for probe in probes:
        source = probe.source
        if source is not None and 0 <= source < len(messages) and probe.text in texts[source + 1]:
            message = source  # a derived fact is due from its own message, not an earlier mention
        else:
            found = whole.find(probe.text)
            if found < 0:
                unchecked.append((probe, "not present verbatim anywhere in the conversation"))
                continue
            message = bisect.bisect_right(starts, found) - 2  # -1: system, else a message index
        first = bisect.bisect_right(replies, message) if message >= 0 else 0
        turn = first if probe.turn is None else max(probe.turn, first)
        if turn >= len(replies):
            unchecked.append((probe, "first appears after the last request"))
            continue
        kept.append(probe)
        turns.append(turn)
    return ProbeSet(tuple(kept), tuple(turns), tuple(unchecked))
