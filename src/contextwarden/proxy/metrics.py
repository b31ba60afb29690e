"""The proxy's counters, and the fields of the line it logs per request. ``GET /metrics`` renders
the counters in the Prometheus text format (version 0.0.4), which needs no client library."""

from __future__ import annotations

import json
import logging
import threading
from collections import defaultdict
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("contextwarden.proxy")

LINE: ContextVar[dict[str, Any] | None] = ContextVar("contextwarden_proxy_line", default=None)
"""The fields of the current request's log line, which ``proxy.access`` writes when the request
ends (one line per request); outside a request, ``observe`` logs its own line."""
PREFIX = "contextwarden_proxy_"
HELP = {
    "requests_total": ("counter", "Requests answered, by API and HTTP status."),
    "compactions_total": ("counter", "Compaction rungs that changed a conversation, by rung."),
    "errors_total": ("counter", "Requests the proxy could not manage, by reason."),
    "tokens_in_total": ("counter", "Estimated tokens of conversations before management."),
    "tokens_out_total": ("counter", "Estimated tokens of managed conversations sent upstream."),
    "upstream_seconds_total": ("counter", "Seconds spent waiting for upstream replies."),
    "retries_total": ("counter", "Requests retried after a forced compaction."),
    "recall_rounds_total": ("counter", "Recall calls the proxy answered itself (--recall)."),
    "recall_hidden_tokens_total": (
        "counter",
        "Tokens of the proxy's own recall rounds: follow-up prompts and recall-calling replies.",
    ),
    "fixed_share_warnings_total": (
        "counter",
        "Sessions whose system prompt and tools take over half the window (warned once each).",
    ),
}


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """What one request did: the fields of its log line and of the counters."""

    api: str
    status: int
    session: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    rungs: tuple[str, ...] = ()
    upstream_seconds: float = 0.0
    retried: bool = False
    error: str | None = None
    new_items: int = 0
    fixed_share_warned: bool = False
    """This request's session was found to have a large fixed part (the first such request)."""


@dataclass
class Metrics:
    """Counters keyed by (name, labels); thread-safe, cheap enough to update per request."""

    _values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = field(
        default_factory=lambda: defaultdict(float)
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, name: str, value: float = 1.0, **labels: str) -> None:
        with self._lock:
            self._values[(name, tuple(sorted(labels.items())))] += value

    def value(self, name: str, **labels: str) -> float:
        with self._lock:
            return self._values.get((name, tuple(sorted(labels.items()))), 0.0)

    def observe(self, record: RequestRecord) -> None:
        """Count ``record`` and give its fields to the request's log line (never headers or keys:
        they are not in it)."""
        self.add("requests_total", api=record.api, status=str(record.status))
        for rung in record.rungs:
            self.add("compactions_total", rung=rung)
        if record.error:
            self.add("errors_total", reason=record.error)
        self.add("tokens_in_total", record.tokens_in)
        self.add("tokens_out_total", record.tokens_out)
        self.add("upstream_seconds_total", record.upstream_seconds)
        if record.retried:
            self.add("retries_total")
        if record.fixed_share_warned:
            self.add("fixed_share_warnings_total")
        line: dict[str, Any] = {
            "session": record.session,
            "api": record.api,
            "status": record.status,
            "tokens": f"{record.tokens_in} -> {record.tokens_out}",
            "new_items": record.new_items,
            "rungs": list(record.rungs),
            "upstream_ms": round(record.upstream_seconds * 1000, 1),
        }
        if record.error:
            line["error"] = record.error
        pending = LINE.get()
        if pending is None:
            log.info(json.dumps(line))
        else:
            pending.update(line)

    def recalled(self, rounds: int, hidden_tokens: int) -> None:
        """Count one request's hidden recall rounds (``--recall``) and their tokens."""
        self.add("recall_rounds_total", rounds)
        self.add("recall_hidden_tokens_total", hidden_tokens)

    def render(self) -> str:
        """The Prometheus text exposition of every counter."""
        with self._lock:
            values = dict(self._values)
        lines: list[str] = []
        for name, (kind, text) in HELP.items():
            lines += [f"# HELP {PREFIX}{name} {text}", f"# TYPE {PREFIX}{name} {kind}"]
            samples = sorted((k[1], v) for k, v in values.items() if k[0] == name)
            for labels, value in samples or [((), 0.0)]:
                tags = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
                labelled = f"{PREFIX}{name}{{{tags}}}" if tags else f"{PREFIX}{name}"
                lines.append(f"{labelled} {value:g}")
        return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
