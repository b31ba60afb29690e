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
from contextwarden.tokens.heuristic import HeuristicCounter

if TYPE_CHECKING:
    from starlette.applications import Starlette

SUMMARY_REPLY_SHARE = 0.125
"""Share of the window an upstream summary may take (at most the summarizers' usual 8,192): the
transcript to summarize needs the rest, and small local models have small windows."""
SUMMARY_MAX_TOKENS = 8_192
SUMMARY_KEY_ENV = ("CONTEXTWARDEN_SUMMARY_API_KEY", "ANTHROPIC_API_KEY")
"""Where ``--summarizer upstream`` finds its API key: the proxy never keeps a client's key."""
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
    sessions = Sessions(open_store(location, **options), manager, counter)
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
    from contextwarden.summarizers.anthropic import AnthropicSummarizer

    key = next((os.environ[k] for k in SUMMARY_KEY_ENV if os.environ.get(k)), None)
    reply = min(SUMMARY_MAX_TOKENS, int(config.window * SUMMARY_REPLY_SHARE))
    return AnthropicSummarizer(
        config.summary_model,
        base_url=config.upstream,
        api_key=key,
        context_window=config.window,
        max_tokens=reply,
    )


def warn_if_exposed(config: ProxyConfig) -> None:
    """Say on stderr when ``config`` serves beyond loopback with no admin token."""
    if config.exposed_without_token:
        print(EXPOSED_WARNING.format(host=host_port(config.listen)[0]), file=sys.stderr)


def serve(config: ProxyConfig) -> None:
    """Serve until interrupted (uvicorn handles SIGINT/SIGTERM and drains open requests)."""
    uvicorn = require("uvicorn", "proxy")
    host, port = host_port(config.listen)
    warn_if_exposed(config)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    requests_log = logging.getLogger("contextwarden.proxy")
    requests_log.addHandler(handler)  # the one line per request, never headers or keys
    requests_log.setLevel(logging.INFO)
    uvicorn.run(build_app(config), host=host, port=port, log_level="info")  # type: ignore[attr-defined]


@contextmanager
def running(config: ProxyConfig) -> Iterator[str]:
    """The proxy for ``config`` on uvicorn in a background thread, on a free 127.0.0.1 port
    (``config.listen`` is not used); yields its URL and stops it when the block ends. For tests
    and benchmarks that drive it with real clients."""
    uvicorn: Any = require("uvicorn", "proxy")
    server = uvicorn.Server(
        uvicorn.Config(build_app(config), host="127.0.0.1", port=0, log_level="warning")
    )
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
