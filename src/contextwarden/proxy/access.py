"""The proxy's one log line per request, for every route (uvicorn's access line is off): the
client's address, method, path and status, the time to answer, and what the handler recorded.
Never headers, keys or the query string (a Gemini key may travel in it)."""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

from contextwarden.proxy.guard import peer
from contextwarden.proxy.metrics import LINE

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("contextwarden.proxy")

UNANSWERED = 500
"""The status logged when the app raised before answering (the server answers 500 then)."""


class AccessLine:
    """ASGI middleware: when a request ends, log its one line, with the fields
    ``Metrics.observe`` gave it (``metrics.LINE``) when the request was a counted one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        fields: dict[str, Any] = {}
        status = [UNANSWERED]

        async def noted(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        token = LINE.set(fields)
        try:
            await self.app(scope, receive, noted)
        finally:
            LINE.reset(token)
            line = {
                "client": peer(scope.get("client")),
                "method": scope["method"],
                "path": scope["path"],
                **fields,
                "status": status[0],
                "ms": round((time.perf_counter() - started) * 1000, 1),
            }
            log.info(json.dumps(line))
