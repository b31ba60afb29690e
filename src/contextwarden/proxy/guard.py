"""What the proxy refuses from a client before any work: a body over ``--max-body`` (413, read
in bounded chunks and never held whole), a body sent slower than ``--client-timeout`` (408), a
pass-through path that leaves the API's prefix (400), and a reader too slow to take the reply
(its connection is closed, so the upstream stream behind it ends too)."""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from contextwarden.errors import RequestRefused
from contextwarden.proxy.apis import BAD_REQUEST, ErrorKind
from contextwarden.proxy.deadlines import Deadline

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("contextwarden.proxy")

TOO_LARGE = ErrorKind(413, "request_too_large", "invalid_request_error")
TOO_SLOW = ErrorKind(408, "invalid_request_error", "invalid_request_error")
UPSTREAM_TIMEOUT = ErrorKind(504, "timeout_error", "server_error")
ROOT = "/"
PATH_SAFE = "/:@!$&'()*+,;=-._~"
"""Characters a path segment may carry unencoded (RFC 3986 pchar); the rest is re-encoded."""


KINDS = {kind.status: kind for kind in (TOO_LARGE, TOO_SLOW, BAD_REQUEST)}


def refused_kind(exc: RequestRefused) -> ErrorKind:
    """The API error a refusal is answered with."""
    return KINDS[exc.status]


async def read_body(request: Request, max_body: int, timeout: float) -> bytearray:
    """The request body, read chunk by chunk; RequestRefused when it is over ``max_body`` bytes (the
    rest is read and dropped, so the client can read the 413) or slower than ``timeout``."""
    declared = request.headers.get("content-length", "")
    body = bytearray()
    try:
        with Deadline(timeout):
            over = declared.isdigit() and int(declared) > max_body
            async for chunk in request.stream():
                over = over or len(body) + len(chunk) > max_body
                if not over:
                    body += chunk
    except TimeoutError:
        raise RequestRefused(
            f"the request body took longer than {timeout:g} s to arrive (--client-timeout)",
            status=TOO_SLOW.status,
            reason="client_timeout",
        ) from None
    if over:
        raise RequestRefused(
            f"the request body is over the proxy's limit of {max_body:,} bytes (--max-body)",
            status=TOO_LARGE.status,
            reason="too_large",
        )
    return body


def confined(path: str, prefixes: tuple[str, ...]) -> str:
    """``path`` (decoded) as it may go upstream, re-encoded; RequestRefused unless it is the
    root (an agent's probe) or already in normal form under one of ``prefixes``: no ``.`` or
    ``..`` segment, no ``//``, no backslash, no NUL (an upstream that decodes ``%2F`` or ``\\``
    again must not be led elsewhere either)."""
    if path == ROOT:
        return path
    normal = posixpath.normpath(path) == path.rstrip("/")
    if not (path.startswith(prefixes) and normal) or "\\" in path or "\x00" in path:
        raise RequestRefused(
            f"the path {path!r} is not a plain path under {' or '.join(prefixes)}"
            " (no '.', '..' or '\\')",
            status=BAD_REQUEST.status,
            reason="bad_path",
        )
    return quote(path, safe=PATH_SAFE)


class SlowReaders:
    """ASGI middleware: a client that takes longer than ``timeout`` seconds to take one chunk
    of the reply is cut off (its connection closed), instead of holding the upstream stream and
    a connection open for as long as it likes."""

    def __init__(self, app: ASGIApp, timeout: float) -> None:
        self.app = app
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.requests import ClientDisconnect

        stalled: list[bool] = []

        async def bounded(message: Message) -> None:
            try:
                with Deadline(self.timeout):
                    await send(message)
            except TimeoutError:
                stalled.append(True)
                raise

        try:
            await self.app(scope, receive, bounded)
        except (ClientDisconnect, TimeoutError):
            if not stalled:
                raise
            log.warning(
                "client %s took longer than %g s to read a reply chunk; connection closed",
                _client(scope),
                self.timeout,
            )


def _client(scope: Any) -> str:
    return peer(scope.get("client"))


def peer(client: Sequence[Any] | None) -> str:
    """A client's address as ``host:port`` for a log line ("unknown" when the server has none)."""
    return f"{client[0]}:{client[1]}" if client else "unknown"
