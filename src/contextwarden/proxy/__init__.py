"""``contextwarden proxy``: context management for any agent, by changing one base URL.

An ASGI app (Starlette on uvicorn, aiohttp upstream; extra ``proxy``) that speaks the model APIs,
keeps each client's conversation in a session store and sends the managed conversation upstream.
"""

from __future__ import annotations

from contextwarden.errors import ProxyConfigError
from contextwarden.proxy.config import ProxyConfig
from contextwarden.proxy.matching import session_key
from contextwarden.proxy.serve import build_app, running, serve
from contextwarden.proxy.sessions import Sessions

__all__ = [
    "ProxyConfig",
    "ProxyConfigError",
    "Sessions",
    "build_app",
    "running",
    "serve",
    "session_key",
]
