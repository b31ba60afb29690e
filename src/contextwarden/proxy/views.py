"""What the proxy shows about itself: ``/metrics`` (Prometheus text), ``/sessions`` and
``/sessions/{id}`` (the managed context, its turns, and what was compacted when). They show every
client's conversations, so they exist only with an admin token and answer only to it."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from contextwarden.compaction.loss import log_losses
from contextwarden.errors import ContextWardenError
from contextwarden.history import ConversationHistory
from contextwarden.log import CompactionBoundary, LogEntry, MetadataSet, UsageRecorded
from contextwarden.model import thaw
from contextwarden.proxy.anchors import Anchors
from contextwarden.proxy.matching import recorded_turns
from contextwarden.proxy.metrics import Metrics
from contextwarden.proxy.recalling import RECALL_KEY
from contextwarden.proxy.sessions import Sessions
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.anthropic import messages_to_wire

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

T = TypeVar("T")


class Shown(Protocol):
    """What these views read of the running proxy (``proxy.state.Proxy`` is one)."""

    metrics: Metrics
    sessions: Sessions
    anchors: Anchors

    async def run(self, fn: Callable[..., T], *args: Any) -> T: ...


def routes(proxy: Shown, admin_token: str) -> list[Route]:
    """The admin routes, each behind ``admin_token``; none at all without one (404)."""
    from starlette.responses import JSONResponse, PlainTextResponse
    from starlette.routing import Route

    if not admin_token:
        return []

    async def metrics(request: Request) -> Response:
        return PlainTextResponse(proxy.metrics.render(), media_type="text/plain; version=0.0.4")

    async def sessions(request: Request) -> Response:
        ids = await proxy.run(proxy.sessions.store.list_sessions)
        return JSONResponse({"sessions": ids})

    async def session(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        await proxy.anchors.settled()  # what is shown includes the replies already sent
        try:
            history = await proxy.run(_load, proxy, session_id)
        except ContextWardenError as exc:
            return JSONResponse({"error": str(exc)}, 404)
        return JSONResponse(describe(session_id, history))

    return [
        Route(path, guarded(view, admin_token), methods=["GET"])
        for path, view in (
            ("/metrics", metrics),
            ("/sessions", sessions),
            ("/sessions/{session_id}", session),
        )
    ]


View = Callable[["Request"], Awaitable["Response"]]


def guarded(view: View, admin_token: str) -> View:
    """``view`` answering only to ``Authorization: Bearer <admin_token>`` (401 otherwise)."""
    from starlette.responses import JSONResponse

    expected = f"Bearer {admin_token}".encode()

    async def checked(request: Request) -> Response:
        given = request.headers.get("authorization", "").encode("utf-8", "replace")
        if not hmac.compare_digest(given, expected):
            return JSONResponse(
                {"error": "this needs the proxy's admin token: Authorization: Bearer <token>"},
                401,
                headers={"www-authenticate": "Bearer"},
            )
        return await view(request)

    return checked


def _load(proxy: Shown, session_id: str) -> ConversationHistory:
    sessions = proxy.sessions
    return sessions.store.load(session_id, counter=sessions.counter, mode="merge")


def describe(session_id: str, history: ConversationHistory) -> dict[str, Any]:
    """A proxy session as JSON: the managed view, the turns seen, and every compaction."""
    turns = recorded_turns(history.log)
    return {
        "id": session_id,
        "messages": len(history.messages),
        "tokens": history.estimate_tokens(),
        "turns": len(turns),
        "incoming_items": turns[-1].incoming if turns else 0,
        "compactions": compactions(history.log, history.counter),
        "usage_records": sum(isinstance(e, UsageRecorded) for e in history.log),
        "recall_rounds": [
            thaw(e.value) for e in history.log if isinstance(e, MetadataSet) and e.key == RECALL_KEY
        ],
        "system": history.system,
        "view": messages_to_wire(history.messages),
    }


def compactions(log: Sequence[LogEntry], counter: TokenCounter) -> list[dict[str, Any]]:
    """Each compaction of the log: when (time, and the turn it managed), which rung, why, the
    tokens it saved, and what it took out of the context (``lost``: each item with its ids)."""
    versions = [t.version for t in recorded_turns(log)]
    lost = iter(report for _, report in log_losses(log, counter))
    return [
        {
            "log_index": i,
            "turn": next((n for n, v in enumerate(versions) if v > i), len(versions)),
            "timestamp": e.timestamp,
            "strategy": e.strategy,
            "trigger": e.trigger,
            "tokens_before": e.tokens_before,
            "tokens_after": e.tokens_after,
            "replaced_messages": e.replaced,
            "description": e.details.get("description"),
            "lost": next(lost).as_json(),
        }
        for i, e in enumerate(log)
        if isinstance(e, CompactionBoundary)
    ]
