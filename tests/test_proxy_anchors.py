"""The usage anchor, written after the reply goes out: the session's next turn still waits for
it, a failure is logged and frees the session, and ``settled`` waits for every one."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from contextwarden.errors import StoreError
from contextwarden.log import UsageRecorded
from contextwarden.proxy.anchors import Anchors
from contextwarden.proxy.sessions import Sessions
from contextwarden.proxy.values import Managed
from tests.test_proxy_sessions import make, request

T = TypeVar("T")
USAGE = {"input_tokens": 1_234}


class Holder:
    """The proxy's session locks and worker threads; each worker call waits for ``gate``."""

    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions
        self.locks: dict[str, asyncio.Lock] = {}
        self.gate = threading.Event()

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        async with self.locks.setdefault(key, asyncio.Lock()):
            yield

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        def gated() -> T:
            assert self.gate.wait(10)
            return fn(*args)

        return await asyncio.to_thread(gated)


def managed_turn(tmp_path: Path) -> tuple[Holder, Managed]:
    sessions = make(tmp_path)
    return Holder(sessions), sessions.manage(request("a", [{"role": "user", "content": "hi"}]))


def usage_records(holder: Holder) -> int:
    return sum(isinstance(e, UsageRecorded) for e in holder.sessions.store.load("a").log)


def test_the_next_turn_waits_for_the_anchor(tmp_path: Path) -> None:
    holder, managed = managed_turn(tmp_path)
    order: list[str] = []

    async def scenario() -> None:
        anchors = Anchors()
        assert await anchors.start(holder, USAGE, "a", managed)  # returns with the lock held

        async def next_turn() -> None:
            async with holder.hold("a"):
                order.append(f"next turn after {usage_records(holder)} anchors")

        waiting = asyncio.create_task(next_turn())
        await asyncio.sleep(0.05)
        assert order == []  # the anchor is not written yet, and the next turn waits for it
        holder.gate.set()
        await waiting
        await anchors.settled()

    asyncio.run(scenario())
    assert order == ["next turn after 1 anchors"]


def test_settled_waits_and_nothing_to_anchor_starts_nothing(tmp_path: Path) -> None:
    holder, managed = managed_turn(tmp_path)

    async def scenario() -> None:
        anchors = Anchors()
        assert not await anchors.start(holder, None, "a", managed)
        assert await anchors.start(holder, USAGE, "a", managed)
        threading.Timer(0.05, holder.gate.set).start()
        await anchors.settled()
        assert usage_records(holder) == 1
        assert not holder.locks["a"].locked()

    asyncio.run(scenario())


def test_a_failed_anchor_is_logged_and_frees_the_session(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder, managed = managed_turn(tmp_path)
    holder.gate.set()

    def broken(*args: Any) -> bool:
        raise StoreError("the disk is full")

    monkeypatch.setattr(holder.sessions, "record_usage", broken)

    async def scenario() -> None:
        anchors = Anchors()
        assert await anchors.start(holder, USAGE, "a", managed)
        await anchors.settled()
        async with holder.hold("a"):  # not left held
            pass

    with caplog.at_level(logging.WARNING, "contextwarden.proxy"):
        asyncio.run(scenario())
    assert "usage not recorded: the disk is full" in caplog.text
    assert usage_records(holder) == 0
