"""What the end-to-end agent tests measure in one run: the agent's requests (as sent), the
upstream's (as received), the proxy's log lines, and whether each upstream request kept the
previous one as its prefix (the prompt cache's condition) or a summary or the agent broke it.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.agent_recorder import Sent
from tests.agent_task import Seen, offered_tools

LIST_KEYS = {
    "/v1/messages": "messages",
    "/v1/chat/completions": "messages",
    "/v1/responses": "input",
}
FIXED_KEYS = ("system", "instructions", "tools")
VOLATILE = "cache_control"
"""Where Claude Code puts it moves every turn; the prompt cache keys on content, not on it."""


@dataclass(frozen=True)
class ProxyLine:
    """One request's log line from the proxy."""

    session: str | None
    status: int
    rungs: tuple[str, ...]


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[ProxyLine] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = json.loads(record.getMessage())
        except json.JSONDecodeError:
            return  # a warning in prose, not a request line
        if isinstance(line, dict) and "status" in line:
            rungs = tuple(line.get("rungs") or ())
            self.lines.append(ProxyLine(line.get("session"), int(line["status"]), rungs))


@contextmanager
def proxy_lines() -> Iterator[list[ProxyLine]]:
    """The proxy's per-request log lines written during the ``with`` block."""
    logger = logging.getLogger("contextwarden.proxy")
    handler, level = _Lines(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != VOLATILE}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def extends(before: dict[str, Any], after: dict[str, Any], path: str) -> bool:
    """True when ``after`` is ``before`` plus new items at the end (``cache_control`` aside):
    the same system, instructions and tools, and ``before``'s items as its prefix."""
    if any(_plain(before.get(k)) != _plain(after.get(k)) for k in FIXED_KEYS):
        return False
    key = LIST_KEYS[path]
    old, new = _plain(before.get(key) or []), _plain(after.get(key) or [])
    return isinstance(old, list) and isinstance(new, list) and new[: len(old)] == old


def is_main(body: Any) -> bool:
    """A request of the agent's own conversation (it offers tools); others are side requests
    (titles, summaries). An agent that offers no tools at all (aider) has only main requests."""
    return isinstance(body, dict) and bool(offered_tools(body))


@dataclass(frozen=True)
class RunStats:
    """One agent run through the proxy (or direct, with no proxy lines), counted."""

    requests: int
    main_requests: int
    invalid: int
    largest: int
    sessions: int
    main_session_requests: int
    summaries: int
    server_errors: int
    prefix_breaks: int
    unexplained_breaks: tuple[int, ...]
    """Main-conversation requests whose upstream prefix changed with no summary or compaction
    by the proxy and no rewrite by the agent."""

    def row(self) -> str:
        return json.dumps(self.__dict__ | {"unexplained_breaks": list(self.unexplained_breaks)})


def run_stats(
    path: str, seen: Sequence[Seen], sent: Sequence[Sent], lines: Sequence[ProxyLine]
) -> RunStats:
    model = [s for s in sent if s.path.partition("?")[0] == path]
    tooled = any(is_main(s.body) for s in seen)
    main_up = [s.body for s in seen if is_main(s.body) or not tooled]
    main_sent = [s.body for s in model if is_main(s.body) or not tooled]
    sessions = Counter(line.session for line in lines)
    main_session = sessions.most_common(1)[0][0] if sessions else None
    main_lines = [line for line in lines if line.session == main_session]
    breaks, unexplained = 0, []
    for k in range(1, len(main_up)):
        if extends(main_up[k - 1], main_up[k], path):
            continue
        breaks += 1
        compacted = k < len(main_lines) and bool(main_lines[k].rungs)
        rewrote = k < len(main_sent) and not extends(main_sent[k - 1], main_sent[k], path)
        if not (compacted or rewrote):
            unexplained.append(k)
    return RunStats(
        requests=len(seen),
        main_requests=len(main_up),
        invalid=sum(bool(s.problems) for s in seen),
        largest=max((s.tokens for s in seen), default=0),
        sessions=len(sessions),
        main_session_requests=len(main_lines),
        summaries=sum("summarize" in line.rungs for line in lines),
        server_errors=sum(s.status >= 500 for s in sent) + sum(x.status >= 500 for x in lines),
        prefix_breaks=breaks,
        unexplained_breaks=tuple(unexplained),
    )
