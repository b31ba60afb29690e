"""Building the proxy from its config, and running it on uvicorn."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

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
    policy = ContextPolicy(context_window=config.window)
    manager = ContextManager(policy, summarizer(config), cache=cache)
    sessions = Sessions(open_store(location, **options), manager, counter)
    upstream = Upstream(config.upstream, config.timeout)
    return create_app(sessions, upstream, place_breakpoints=config.cache == "auto")


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


def serve(config: ProxyConfig) -> None:
    """Serve until interrupted (uvicorn handles SIGINT/SIGTERM and drains open requests)."""
    uvicorn = require("uvicorn", "proxy")
    host, port = host_port(config.listen)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    requests_log = logging.getLogger("contextwarden.proxy")
    requests_log.addHandler(handler)  # the one line per request, never headers or keys
    requests_log.setLevel(logging.INFO)
    uvicorn.run(build_app(config), host=host, port=port, log_level="info")  # type: ignore[attr-defined]
