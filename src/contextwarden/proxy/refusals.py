"""A failure of the proxy itself, answered in the caller's API shape: which error kind it is
reported as, with its metrics reason (``classify``), and the error response (``refuse``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from contextwarden.errors import (
    ContextOverflowError,
    ContextWardenError,
    RequestRefused,
    StoreError,
    UpstreamError,
)
from contextwarden.proxy.apis import (
    BAD_REQUEST,
    DOES_NOT_FIT,
    INTERNAL,
    STORE_DOWN,
    UPSTREAM_DOWN,
    Api,
    ErrorKind,
)
from contextwarden.proxy.guard import UPSTREAM_TIMEOUT, refused_kind
from contextwarden.proxy.metrics import RequestRecord

if TYPE_CHECKING:
    from starlette.responses import Response

    from contextwarden.proxy.state import Proxy

log = logging.getLogger("contextwarden.proxy")


def classify(exc: Exception) -> tuple[ErrorKind, str]:
    """The error a failure of the proxy itself is reported as, and its metrics reason."""
    if isinstance(exc, RequestRefused):
        return refused_kind(exc), exc.reason
    if isinstance(exc, UpstreamError):
        log.warning("upstream failed: %s", exc)
        return (UPSTREAM_TIMEOUT if exc.timed_out else UPSTREAM_DOWN), "upstream"
    if isinstance(exc, ContextOverflowError):
        return DOES_NOT_FIT, "does_not_fit"
    if isinstance(exc, StoreError):
        log.error("session store failed: %s", exc)
        return STORE_DOWN, "store"
    if isinstance(exc, ContextWardenError):
        return BAD_REQUEST, "unmanageable"
    log.exception("contextwarden proxy bug while managing a request")
    return INTERNAL, "bug"


def refuse(
    proxy: Proxy, api: Api, kind: ErrorKind, message: str, reason: str, session: str | None = None
) -> Response:
    from starlette.responses import JSONResponse

    proxy.metrics.observe(RequestRecord(api.name, kind.status, session, error=reason))
    return JSONResponse(api.error(kind, message), kind.status)
