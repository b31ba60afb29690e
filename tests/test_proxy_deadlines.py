"""The proxy's per-phase deadline behaves as ``anyio.fail_after``: a late block raises
TimeoutError, anything else (an error inside, an outer cancellation) passes through."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from contextwarden.proxy.deadlines import Deadline


async def _late() -> None:
    with Deadline(0.01):
        await asyncio.sleep(5)


async def _in_time() -> str:
    with Deadline(5):
        await asyncio.sleep(0)
    return "done"


async def _failing() -> None:
    with Deadline(5):
        raise ValueError("inner")


async def _outer_cancel() -> bool:
    with anyio.move_on_after(0.01) as outer, Deadline(5):
        await asyncio.sleep(5)
    return outer.cancelled_caught


def test_a_late_block_raises_timeout_error() -> None:
    with pytest.raises(TimeoutError):
        asyncio.run(_late())


def test_a_block_in_time_an_inner_error_and_an_outer_cancellation_pass_through() -> None:
    assert asyncio.run(_in_time()) == "done"
    with pytest.raises(ValueError, match="inner"):
        asyncio.run(_failing())
    assert asyncio.run(_outer_cancel()) is True  # the outer scope's, not a TimeoutError
