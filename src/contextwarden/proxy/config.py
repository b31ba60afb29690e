"""ProxyConfig: every option of ``contextwarden proxy``, each also read from a CONTEXTWARDEN_*
environment variable, so a container or a service unit needs no command line."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal

from contextwarden.errors import ProxyConfigError

ENV_PREFIX = "CONTEXTWARDEN_"
DEFAULT_LISTEN = "127.0.0.1:8787"
DEFAULT_WINDOW = 200_000
DEFAULT_TIMEOUT = 600.0
"""Seconds to wait for the upstream (a long reply streams for minutes)."""
DEFAULT_MAX_BODY = 32 * 1024 * 1024
"""Bytes of a request body: the Messages API's own request limit (32 MB)."""
DEFAULT_CLIENT_TIMEOUT = 60.0
"""Seconds a client may take to send its request headers, its body, or to take each chunk of
the reply."""
DEFAULT_MAX_CONNECTIONS = 256
"""Requests (and open connections) served at once; uvicorn answers the others 503. Each request
may hold up to ``max_body`` bytes and a worker thread's work, so this bounds memory too."""
DEFAULT_MAX_SESSIONS = 1_000
"""Sessions whose histories stay in memory between requests (0.3-1 MB each at 100,000 tokens):
the least recently used beyond it is dropped and reloaded from the store on its next request."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
STORE_FILE = "proxy.sqlite3"
SummarizerChoice = Literal["structured", "upstream"]
SummaryApiChoice = Literal["anthropic", "openai"]
CacheChoice = Literal["auto", "off"]


def default_store() -> str:
    """A SQLite file under the user's data dir (``$XDG_DATA_HOME`` or ``~/.local/share``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return str(Path(base) / "contextwarden" / STORE_FILE)


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    """What the proxy forwards to, how big the window is, and where sessions live."""

    upstream: str
    """Root URL of the model API (``https://api.anthropic.com``, ``http://127.0.0.1:8000``)."""
    listen: str = DEFAULT_LISTEN
    """``host:port`` the proxy serves on."""
    window: int = DEFAULT_WINDOW
    """The model's context window in tokens; every upstream request fits it."""
    store: str = ""
    """``postgresql://…``, a directory (JSONL) or a SQLite file; empty: ``default_store()``."""
    schema: str = ""
    """PostgreSQL schema of the store; empty: the store's default (``contextwarden``)."""
    summarizer: SummarizerChoice = "structured"
    """``structured``: offline summaries; ``upstream``: the upstream model writes them."""
    summary_model: str = ""
    """Model the upstream summarizer asks (required with ``summarizer="upstream"``)."""
    summary_api: SummaryApiChoice = "anthropic"
    """The API the upstream summarizer speaks: ``anthropic`` (``/v1/messages``) or ``openai``
    (``/v1/chat/completions``: OpenAI, vLLM, llama.cpp, Ollama…), whichever the upstream
    serves."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds each upstream phase may take (connect, send, each streamed chunk, a whole
    non-streaming reply) before the client gets an error saying which."""
    admin_token: str = field(default="", repr=False)
    """Bearer token for ``/sessions``, ``/sessions/{id}`` and ``/metrics``; empty: they are off
    (404). Compared in constant time; never logged."""
    max_body: int = DEFAULT_MAX_BODY
    """Largest request body in bytes; a larger one is refused with 413 before it is read whole."""
    client_timeout: float = DEFAULT_CLIENT_TIMEOUT
    """Seconds a client may take to send a request's headers (from connecting, or from the
    previous reply on a kept-alive connection), its body, or to take each chunk of the reply."""
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    """Connections and requests served at once; a request beyond it is answered 503."""
    max_sessions: int = DEFAULT_MAX_SESSIONS
    """Session histories kept in memory, least recently used dropped first: what bounds the
    proxy's memory with many open sessions (a dropped one is reloaded from the store)."""
    cache: CacheChoice = "auto"
    """``auto``: the ladder plans for the prompt cache (``compaction.cache.CachePolicy``: old
    results are cleared when that pays for the cache re-write), and an Anthropic request that
    carries no ``cache_control`` of its own gets breakpoints where they pay
    (``wire.anthropic_cache``); a client's own breakpoints are always kept. ``off``: the plain
    ladder, and no breakpoints added."""
    recall: bool = False
    """The proxy offers the model the ``recall`` tool once compaction took something out of a
    session, and answers it itself from the session's log (``proxy.recalling``); the agent
    never sees it. Off by default: it changes what the upstream is sent (a tool, a note in each
    summary), hidden rounds cost tokens, and a streamed reply is held whole while it is offered."""

    def __post_init__(self) -> None:
        if not self.upstream.startswith(("http://", "https://")):
            raise ProxyConfigError(f"upstream must be an http(s) URL, got {self.upstream!r}")
        if self.window <= 0:
            raise ProxyConfigError(f"window must be a positive number of tokens, got {self.window}")
        if self.summarizer not in ("structured", "upstream"):
            raise ProxyConfigError(
                f"summarizer must be 'structured' or 'upstream', got {self.summarizer!r}"
            )
        if self.summary_api not in ("anthropic", "openai"):
            raise ProxyConfigError(
                f"summary_api must be 'anthropic' or 'openai', got {self.summary_api!r}"
            )
        if self.cache not in ("auto", "off"):
            raise ProxyConfigError(f"cache must be 'auto' or 'off', got {self.cache!r}")
        for name in ("timeout", "client_timeout"):
            if not 0 < getattr(self, name) < float("inf"):
                raise ProxyConfigError(f"{name} must be > 0 seconds, got {getattr(self, name)}")
        if self.max_sessions <= 0:
            raise ProxyConfigError(
                f"max_sessions must be a positive number of sessions, got {self.max_sessions}"
            )
        if self.max_body <= 0:
            raise ProxyConfigError(
                f"max_body must be a positive number of bytes, got {self.max_body}"
            )
        if self.max_connections <= 0:
            raise ProxyConfigError(
                f"max_connections must be a positive number, got {self.max_connections}"
            )
        host_port(self.listen)

    @property
    def exposed_without_token(self) -> bool:
        """Served beyond loopback with no admin token: anyone who reaches it can use it."""
        return not self.admin_token and host_port(self.listen)[0] not in LOOPBACK_HOSTS

    @property
    def store_location(self) -> str:
        return self.store or default_store()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **given: object) -> ProxyConfig:
        """Options from ``given`` (flags; None means not given), else ``CONTEXTWARDEN_<NAME>``."""
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        for f in fields(cls):
            value = given.get(f.name)
            name = ENV_PREFIX + f.name.upper()
            if value is None and name in env:
                value = _parse(name, env[name], f.type)
            if value is not None:
                values[f.name] = value
        if "upstream" not in values:
            raise ProxyConfigError(f"no upstream: pass --upstream URL or set {ENV_PREFIX}UPSTREAM")
        return cls(**values)  # type: ignore[arg-type]


def _parse(name: str, text: str, kind: object) -> object:
    try:
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
        if kind == "bool":
            return _flag(name, text)
    except ValueError:
        raise ProxyConfigError(f"${name} must be a number, got {text!r}") from None
    return text


TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", ""})


def _flag(name: str, text: str) -> bool:
    word = text.strip().lower()
    if word not in TRUE_WORDS | FALSE_WORDS:
        raise ProxyConfigError(
            f"${name} must be one of 1/true/yes/on or 0/false/no/off, got {text!r}"
        )
    return word in TRUE_WORDS


def host_port(listen: str) -> tuple[str, int]:
    """``("127.0.0.1", 8787)`` from ``127.0.0.1:8787``; ProxyConfigError when malformed."""
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ProxyConfigError(f"listen must be HOST:PORT, got {listen!r}")
    return host.strip("[]"), int(port)
