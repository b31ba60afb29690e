"""Building the proxy from its config, and running it on uvicorn."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextwarden.compaction.cache import CachePolicy
from contextwarden.errors import ProxyConfigError, require
from contextwarden.manager import ContextManager
from contextwarden.policy import ContextPolicy
from contextwarden.proxy.config import ProxyConfig, host_port
from contextwarden.proxy.sessions import Sessions
from contextwarden.proxy.upstream import Upstream
from contextwarden.stores import open_store
from contextwarden.summarizers.base import Summarizer
from contextwarden.summarizers.llm import LLMOptions
from contextwarden.tokens.heuristic import HeuristicCounter

if TYPE_CHECKING:
    from starlette.applications import Starlette

SUMMARY_REPLY_SHARE = 0.125
"""Share of the window an upstream summary may take (at most the summarizers' usual 8,192): the
transcript to summarize needs the rest, and small local models have small windows."""
SUMMARY_MAX_TOKENS = 8_192
SUMMARY_KEY_ENV = {
    "anthropic": ("CONTEXTWARDEN_SUMMARY_API_KEY", "ANTHROPIC_API_KEY"),
    "openai": ("CONTEXTWARDEN_SUMMARY_API_KEY", "OPENAI_API_KEY"),
}
"""Where ``--summarizer upstream`` finds its API key, by ``summary_api``: the proxy never
keeps a client's key."""
OPENAI_ROOT = "/v1"
"""The OpenAI SDK's base URL ends at the version; the proxy's upstream is the host root."""
EXPOSED_WARNING = (
    "contextwarden proxy: warning: serving on {host}, beyond loopback, with no admin token: "
    "anyone who reaches it can send requests through it (/sessions and /metrics stay off); "
    "put it behind a firewall or set CONTEXTWARDEN_ADMIN_TOKEN to read them"
)
START_TIMEOUT = 30.0
"""Seconds ``running`` waits for the server to listen."""


def build_app(config: ProxyConfig) -> Starlette:
    """The ASGI app for ``config``: its store opened, its manager and upstream client made."""
    from contextwarden.proxy.app import create_app

    location = config.store_location
    options = {}
    if location.startswith(("postgresql://", "postgres://")):
        options = {"schema": config.schema} if config.schema else {}
    else:
        Path(location).parent.mkdir(parents=True, exist_ok=True)
    counter = HeuristicCounter()
    cache = CachePolicy() if config.cache == "auto" else None
    policy = ContextPolicy(context_window=config.window, recall=config.recall)
    manager = ContextManager(policy, summarizer(config), cache=cache)
    store = open_store(location, **options)
    sessions = Sessions(store, manager, counter, max_open=config.max_sessions)
    upstream = Upstream(config.upstream, config.timeout)
    return create_app(sessions, upstream, config)


def summarizer(config: ProxyConfig) -> Summarizer | None:
    """None (the offline structured summarizer) or the upstream model as summarizer.

    Its requests go straight to the upstream with ``query_source="compact"``, never through
    the proxy, so a summary request can never itself be compacted (the recursion guard).
    """
    if config.summarizer == "structured":
        return None
    if not config.summary_model:
        raise ProxyConfigError(
            "--summarizer upstream needs --summary-model (or CONTEXTWARDEN_SUMMARY_MODEL)"
        )
    names = SUMMARY_KEY_ENV[config.summary_api]
    key = next((os.environ[k] for k in names if os.environ.get(k)), None)
    openai = config.summary_api == "openai"
    options: LLMOptions = {
        "base_url": config.upstream.rstrip("/") + OPENAI_ROOT if openai else config.upstream,
        "api_key": key,
        "context_window": config.window,
        "max_tokens": min(SUMMARY_MAX_TOKENS, int(config.window * SUMMARY_REPLY_SHARE)),
    }
    if openai:
        from contextwarden.summarizers.openai import OpenAISummarizer

        return OpenAISummarizer(config.summary_model, **options)
    from contextwarden.summarizers.anthropic import AnthropicSummarizer

    return AnthropicSummarizer(config.summary_model, **options)


def warn_if_exposed(config: ProxyConfig) -> None:
    """Say on stderr when ``config`` serves beyond loopback with no admin token."""
    if config.exposed_without_token:
        print(EXPOSED_WARNING.format(host=host_port(config.listen)[0]), file=sys.stderr)


def serve(config: ProxyConfig) -> None:
    """Serve until interrupted (uvicorn handles SIGINT/SIGTERM and drains open requests)."""
    uvicorn: Any = require("uvicorn", "proxy")
    host, port = host_port(config.listen)
    warn_if_exposed(config)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    requests_log = logging.getLogger("contextwarden.proxy")
    requests_log.addHandler(handler)  # the one line per request, never headers, keys or query
    requests_log.setLevel(logging.INFO)
    uvicorn.Server(server_config(config, host, port, "info")).run()


def server_config(config: ProxyConfig, host: str, port: int, log_level: str) -> Any:
    """uvicorn's config for the proxy: its app, with a deadline for each request's headers
    (``--client-timeout``) and at most ``--max-connections`` requests served at once. uvicorn's
    access line is off: the app logs one line per request itself (``proxy.access``)."""
    uvicorn: Any = require("uvicorn", "proxy")
    return uvicorn.Config(
        build_app(config),
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        http=header_deadline(config.client_timeout),
        limit_concurrency=config.max_connections,
    )


def header_deadline(seconds: float) -> type[Any]:
    """The protocol class uvicorn is given: a deadline of ``seconds`` for each request's headers,
    on httptools where it is installed, on h11 otherwise."""
    from contextwarden.proxy.connections import FAST_PARSER, H11Deadline, HeaderDeadline

    base: type[HeaderDeadline] = H11Deadline
    if FAST_PARSER:
        from contextwarden.proxy.connections_httptools import HttpToolsDeadline

        base = HttpToolsDeadline
    return type(base.__name__, (base,), {"header_timeout": seconds})


@contextmanager
def running(config: ProxyConfig) -> Iterator[str]:
    """The proxy for ``config`` on uvicorn in a background thread, on a free 127.0.0.1 port
    (``config.listen`` is not used); yields its URL and stops it when the block ends. For tests
    and benchmarks that drive it with real clients."""
    uvicorn: Any = require("uvicorn", "proxy")
    server = uvicorn.Server(server_config(config, "127.0.0.1", 0, "warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the proxy did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=START_TIMEOUT)
