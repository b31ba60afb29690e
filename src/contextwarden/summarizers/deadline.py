"""The time bound of one summary: however the server behaves, a compaction attempt ends on time.

The SDKs' own retries are switched off, because they wait whatever ``retry-after`` asks (two
minutes, an hour); ``retry_wait`` decides the same retries here and refuses a wait the deadline
cannot hold. The HTTP transport around each request caps every network wait at the time left and
stops a response whose bytes still trickle in when the deadline passes (a read timeout restarts
with each byte, so it alone never ends a slow drip).
"""

from __future__ import annotations

import email.utils
import importlib
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from contextwarden.errors import SummarizerError

DEADLINE = 45.0
"""Default seconds one summary may take, every request and retry of it included."""
INITIAL_RETRY_DELAY = 0.5
"""First back-off between retries when the server does not say how long to wait (doubled each
retry), as the SDKs do."""
MAX_RETRY_DELAY = 8.0
"""Longest back-off when the server does not say how long to wait."""
RETRY_STATUSES = frozenset({408, 409, 429})
"""HTTP statuses retried besides 5xx (timeout, lock conflict, rate limit), as the SDKs do."""
TOO_LONG = re.compile(
    r"prompt is too long|context[_ ]length[_ ]exceeded|maximum context length|"
    r"too many (input )?tokens|input is too long",
    re.IGNORECASE,
)
"""How Anthropic and OpenAI-compatible servers say a request is over the model's window."""


class DeadlineExceeded(SummarizerError):
    """The summary did not finish within its deadline (counted by the circuit breaker)."""


class PromptTooLongError(SummarizerError):
    """The server refused a request as longer than its model's window; ``tokens``: our estimate
    of that request's prompt (the transcript part), so the summary can be planned again in
    smaller pieces."""

    def __init__(self, message: str, tokens: int) -> None:
        super().__init__(message)
        self.tokens = tokens


@dataclass(slots=True)
class Deadline:
    """The moment a summary must be done by; ``seconds`` from its creation."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    end: float = field(init=False)

    def __post_init__(self) -> None:
        self.end = self.clock() + self.seconds

    def remaining(self) -> float:
        return self.end - self.clock()

    def missed(self, what: str) -> DeadlineExceeded:
        return DeadlineExceeded(
            f"the summary did not finish within its {self.seconds:g} s deadline ({what})"
        )


def retry_wait(
    exc: Exception, sdk: ModuleType, attempt: int, retries: int, deadline: Deadline
) -> float | None:
    """Seconds to wait before retrying after ``exc`` (retry number ``attempt + 1``), or None when
    it is not retried. DeadlineExceeded when the wait would end past the deadline."""
    if attempt >= retries or not _retryable(exc, sdk):
        return None
    response = getattr(exc, "response", None)
    asked = _retry_after(response.headers) if response is not None else None
    wait = asked if asked is not None else min(INITIAL_RETRY_DELAY * 2**attempt, MAX_RETRY_DELAY)
    left = deadline.remaining()
    if wait >= left:
        told = "the server asked to wait" if asked is not None else "the next retry waits"
        raise deadline.missed(f"{told} {wait:g} s, {max(left, 0):.1f} s were left")
    return wait


def _retryable(exc: Exception, sdk: ModuleType) -> bool:
    if isinstance(exc, sdk.APIConnectionError):  # includes timeouts
        return True
    if not isinstance(exc, sdk.APIStatusError):
        return False
    told: str | None = exc.response.headers.get("x-should-retry")
    if told in ("true", "false"):
        return told == "true"
    status: int = exc.status_code
    return status in RETRY_STATUSES or status >= 500


def _retry_after(headers: Any) -> float | None:
    """The wait a response asks for (``retry-after-ms``, ``retry-after`` seconds or date)."""
    try:
        milliseconds = headers.get("retry-after-ms")
        if milliseconds is not None:
            return max(float(milliseconds) / 1000, 0.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(float(value), 0.0)
        except ValueError:
            moment = email.utils.parsedate_to_datetime(value)
            return max(moment.timestamp() - time.time(), 0.0)
    except (TypeError, ValueError, OverflowError):
        return None


def too_long(exc: Exception, sdk: ModuleType) -> bool:
    """Whether ``exc`` is the server saying the request is over its model's window."""
    return (
        isinstance(exc, sdk.APIStatusError)
        and exc.status_code in (400, 413)
        and bool(TOO_LONG.search(str(exc)))
    )


# ----------------------------------------------------------------------------- transports
def http_module(sdk: ModuleType) -> ModuleType:
    """The HTTP library the SDK is built on (``httpx`` or its successor ``httpx2``)."""
    base = sdk.DefaultHttpxClient.__mro__[1]
    return importlib.import_module(base.__module__.partition(".")[0])


def _capped(request: Any, deadline: Deadline, http: ModuleType) -> None:
    """Cap each network wait of ``request`` at the time left; ReadTimeout when none is."""
    left = deadline.remaining()
    if left <= 0:
        raise http.ReadTimeout("the summary deadline has passed", request=request)
    waits = dict(request.extensions.get("timeout") or {})
    for key in ("connect", "read", "write", "pool"):
        current = waits.get(key)
        waits[key] = left if current is None else min(current, left)
    request.extensions["timeout"] = waits


class DeadlineTransport:
    """A blocking HTTP transport that ends a request, body included, at the deadline."""

    def __init__(self, http: ModuleType, deadline: Deadline) -> None:
        self._http, self._deadline = http, deadline
        self._inner = http.HTTPTransport()

    def handle_request(self, request: Any) -> Any:
        _capped(request, self._deadline, self._http)
        response = self._inner.handle_request(request)
        body = bytearray()
        try:
            for chunk in response.stream:
                body += chunk
                if self._deadline.remaining() <= 0:
                    raise self._http.ReadTimeout(
                        "the summary deadline passed mid-response", request=request
                    )
        finally:
            response.close()
        return _whole(self._http, response, bytes(body))

    def close(self) -> None:
        self._inner.close()

    def __enter__(self) -> DeadlineTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncDeadlineTransport:
    """``DeadlineTransport`` for the async clients."""

    def __init__(self, http: ModuleType, deadline: Deadline) -> None:
        self._http, self._deadline = http, deadline
        self._inner = http.AsyncHTTPTransport()

    async def handle_async_request(self, request: Any) -> Any:
        _capped(request, self._deadline, self._http)
        response = await self._inner.handle_async_request(request)
        body = bytearray()
        try:
            async for chunk in response.stream:
                body += chunk
                if self._deadline.remaining() <= 0:
                    raise self._http.ReadTimeout(
                        "the summary deadline passed mid-response", request=request
                    )
        finally:
            await response.aclose()
        return _whole(self._http, response, bytes(body))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AsyncDeadlineTransport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _whole(http: ModuleType, response: Any, body: bytes) -> Any:
    """``response`` with its (still encoded) body already read against the clock."""
    return http.Response(
        response.status_code,
        headers=response.headers,
        stream=http.ByteStream(body),
        extensions=response.extensions,
    )


def budget(seconds: float) -> float:
    """``seconds`` checked: a positive, finite number."""
    if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0):
        raise ValueError(
            f"a summary deadline must be a positive number of seconds, got {seconds!r}"
        )
    return float(seconds)
