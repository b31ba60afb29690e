"""Which stored conversation a request belongs to: session keys scoped by the caller's
credential, a hash chain over the conversation items that ignores what agents move between
requests (``cache_control`` markers), and the ``proxy.turn`` records a match is made against.

Each managed turn leaves a record: how many items it had, the chain's value there, and the chain
at its last few item positions with the number of view messages those items became (``marks``),
so a request that rewrote the tail of the previous one (aider's reminder) is recognised as an
edit of the same session instead of a branch. It also keeps the hashes of the turn's first items
(its ``lead``) and the chain over the items after them (``bodies``), so a request whose agent
rewrote its fixed lead-in (aider's READ ONLY files, ahead of its history) is an edit too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextwarden.errors import ContextWardenError, require
from contextwarden.log import LogEntry, MetadataSet
from contextwarden.model import thaw
from contextwarden.stores.base import MAX_SESSION_ID_LENGTH, validate_session_id

TURN_KEY = "proxy.turn"
"""Metadata key of the record each managed turn leaves in the session log."""
KEY_HASH_CHARS = 32
"""Hex digits of the hashes that name sessions (128 bits: no collisions in practice)."""
SCOPE_CHARS = 16
"""Hex digits of the credential hash a session id carries (64 bits: keys never meet by chance)."""
EDIT_DEPTH = 3
"""Trailing items of a turn an agent may rewrite in its next request and still be matched as an
edit of the same session (aider rewrites one: its last user message)."""
LEAD_DEPTH = 8
"""Leading items of a conversation an agent may rewrite as its fixed lead-in (aider: its example
exchange, "I switched to a new code base", the READ ONLY files, each answered "Ok")."""
VOLATILE_KEYS = frozenset({"cache_control"})
"""Block fields agents move between requests without changing the conversation."""
BEARER = "bearer "
ANONYMOUS = "anonymous"
"""The scope of requests that carry no credential."""
CREDENTIAL_HEADERS = ("x-api-key", "authorization", "api-key", "x-goog-api-key")
"""Where the APIs' clients put their credential (Anthropic, OpenAI, Azure, Gemini)."""


@dataclass(frozen=True, slots=True)
class Mark:
    """Chain value ``digest`` at item position ``at``; the turn's last ``drop`` view messages
    are what the items from ``at`` on became."""

    at: int
    digest: str
    drop: int


@dataclass(frozen=True, slots=True)
class Turn:
    """A managed turn: ``incoming`` items with hash ``digest`` got the view at log ``version``."""

    incoming: int
    digest: str
    version: int
    applied_edits: tuple[Any, ...] = field(default=(), compare=False)
    marks: tuple[Mark, ...] = field(default=(), compare=False)
    """The chain at the turn's last item positions, newest first (for edits of its tail)."""
    lead: tuple[str, ...] = field(default=(), compare=False)
    """The hash of each of the turn's first items (``lead_of``)."""
    bodies: tuple[Mark, ...] = field(default=(), compare=False)
    """The chain over the items after ``lead`` at the turn's end and at its marks."""


@dataclass(frozen=True, slots=True)
class Match:
    """A request shares its first ``at`` items with ``turn``; ``drop`` > 0: the turn's last
    ``drop`` view messages came from items the request changed (an edit of its tail)."""

    turn: Turn
    at: int
    drop: int = 0
    lead: int = 0
    """> 0: the agent rewrote some of its first ``lead`` items (its lead-in)."""


def credential_scope(headers: Mapping[str, str]) -> str:
    """A hash of the caller's credential (never the credential itself); "" when it sent none."""
    for name in CREDENTIAL_HEADERS:
        value = headers.get(name, "").strip()
        if value[: len(BEARER)].lower() == BEARER:
            value = value[len(BEARER) :].strip()  # one key, whichever header carries it
        if value:
            return _digest("credential\x00" + value)[:SCOPE_CHARS]
    return ""


def scoped(key: str, scope: str) -> str:
    """``key`` within the caller's ``scope``: two credentials never name the same session, and
    a caller without one never names a credential's session."""
    out = f"{key}.{scope or ANONYMOUS}"
    return out if len(out) <= MAX_SESSION_ID_LENGTH else f"h-{_digest(key)}.{scope or ANONYMOUS}"


def session_key(header: str | None, system: Any, first_user: Any, tools: bool = False) -> str:
    """The session a request names: its ``x-contextwarden-session`` header when that is a valid
    id (a hash of it otherwise), else a hash of the system prompt, the first user message and
    whether tools are offered (a summarization request without tools is a side request)."""
    if header:
        try:
            return validate_session_id(header)
        except ContextWardenError:
            return "h-" + _digest(header)
    opening: list[Any] = [stable(system), stable(first_user)]
    if tools:
        opening.append(True)
    return "c-" + _digest(_canonical(opening))


def stable(value: Any) -> Any:
    """``value`` without the fields agents move between requests (``VOLATILE_KEYS``)."""
    if isinstance(value, Mapping):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def _volatile(item: Any) -> bool:
    """Whether a conversation item may hold a volatile field: on itself or on one of its
    content blocks, or nested in a block's own content (a cheap scan of the common shapes)."""
    if not isinstance(item, Mapping):
        return False
    content = item.get("content")
    if VOLATILE_KEYS & item.keys() or not isinstance(content, list):
        return bool(VOLATILE_KEYS & item.keys())
    return any(
        isinstance(b, Mapping) and (VOLATILE_KEYS & b.keys() or isinstance(b.get("content"), list))
        for b in content
    )


def chain(items: Sequence[Any]) -> list[str]:
    """``chain[n]`` identifies ``items[:n]`` (a hash chain, so equal prefixes share values)."""
    return prefix_chain(item_digests(items))


def item_digests(items: Sequence[Any]) -> list[bytes]:
    """Each item's hash over its canonical bytes (orjson: serializing is most of the cost of a
    request the proxy has mostly seen)."""
    orjson: Any = require("orjson", "proxy")
    out: list[bytes] = []
    for item in items:
        value = stable(item) if _volatile(item) else item
        try:
            data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # integers beyond 64 bits, which orjson does not write
            data = _canonical(value).encode("utf-8", "surrogatepass")
        out.append(hashlib.sha256(data).digest())
    return out


def prefix_chain(each: Sequence[bytes]) -> list[str]:
    """The hash chain over item hashes ``each``: one running hash, a value per prefix."""
    running = hashlib.sha256()
    out = [""]
    for digest in each:
        running.update(digest)
        out.append(running.copy().hexdigest()[:KEY_HASH_CHARS])
    return out


def lead_of(each: Sequence[bytes], count: int) -> tuple[str, ...]:
    """The hashes of a turn's first items, up to ``LEAD_DEPTH`` and never its last one."""
    return tuple(d.hex()[:KEY_HASH_CHARS] for d in each[: min(LEAD_DEPTH, count - 1)])


def body_marks(each: Sequence[bytes], count: int, marks: Sequence[Mark]) -> tuple[Mark, ...]:
    """The chain over a turn's items after its lead at its end and at each of its ``marks``."""
    start = len(lead_of(each, count))
    body = prefix_chain(each[start:count])
    ends = [Mark(count, "", 0), *marks]
    return tuple(Mark(m.at, body[m.at - start], m.drop) for m in ends if m.at >= start)


def lead_match(turn: Turn, items: Sequence[Any], each: Sequence[bytes]) -> Match | None:
    """``turn`` continued by a request whose agent rewrote its lead-in: the first item is the
    same, every changed item is a user item answered by the same assistant item as before (the
    agent's canned "Ok"), and what follows the lead is the turn's conversation or an edit of its
    tail."""
    size = len(turn.lead)
    if size < 2 or len(items) <= size:
        return None
    same = [each[i].hex()[:KEY_HASH_CHARS] == turn.lead[i] for i in range(size)]
    changed = [i for i in range(size) if not same[i]]
    if not changed or not same[0] or not all(_rewritten(items, same, i) for i in changed):
        return None
    body = prefix_chain(each[size:])
    for mark in turn.bodies:
        if mark.at - size < len(body) and body[mark.at - size] == mark.digest:
            return Match(turn, mark.at, mark.drop, size)
    return None


def _rewritten(items: Sequence[Any], same: Sequence[bool], i: int) -> bool:
    """Whether lead item ``i`` is a user item whose unchanged answer follows it in the lead."""
    if i + 1 >= len(same) or not same[i + 1]:
        return False
    return _role(items[i]) == "user" and _role(items[i + 1]) == "assistant"


def _role(item: Any) -> str | None:
    role = item.get("role") if isinstance(item, Mapping) else None
    return role if isinstance(role, str) else None


def recorded_turns(log: Sequence[LogEntry]) -> list[Turn]:
    """The ``proxy.turn`` records of a session log, oldest first."""
    return [
        turn_from_record(thaw(entry.value))
        for entry in log
        if isinstance(entry, MetadataSet) and entry.key == TURN_KEY
    ]


def turn_from_record(value: Mapping[str, Any]) -> Turn:
    marks = tuple(Mark(int(a), str(d), int(n)) for a, d, n in value.get("marks") or ())
    bodies = tuple(Mark(int(a), str(d), int(n)) for a, d, n in value.get("bodies") or ())
    return Turn(
        int(value["incoming"]),
        str(value["digest"]),
        int(value["version"]),
        tuple(value.get("applied_edits") or ()),
        marks,
        tuple(str(h) for h in value.get("lead") or ()),
        bodies,
    )


def turn_record(turn: Turn) -> dict[str, Any]:
    return {
        "incoming": turn.incoming,
        "digest": turn.digest,
        "version": turn.version,
        "applied_edits": list(turn.applied_edits),
        "marks": [[m.at, m.digest, m.drop] for m in turn.marks],
        "lead": list(turn.lead),
        "bodies": [[m.at, m.digest, m.drop] for m in turn.bodies],
    }


def best_match(turns: Sequence[Turn], digests: Sequence[str]) -> Match | None:
    """The longest prefix of the request (``digests``) a turn has seen, the latest-recorded
    turn on ties; a turn's whole conversation counts before the marks of its tail."""
    best: Match | None = None
    for turn in turns:
        found = _match(turn, digests)
        if found is not None and (best is None or found.at >= best.at):
            best = found
    return best


def _match(turn: Turn, digests: Sequence[str]) -> Match | None:
    if turn.incoming < len(digests) and digests[turn.incoming] == turn.digest:
        return Match(turn, turn.incoming)
    for mark in turn.marks:
        if mark.at < len(digests) and digests[mark.at] == mark.digest:
            return Match(turn, mark.at, mark.drop)
    return None


def fork_key(session_id: str, digests: Sequence[str], at: int) -> str:
    """The session a conversation continues in when it branched off ``session_id`` at ``at``."""
    after = digests[min(at + 1, len(digests) - 1)]
    return "f-" + _digest(session_id + digests[at] + after)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:KEY_HASH_CHARS]
