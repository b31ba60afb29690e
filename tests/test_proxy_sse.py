"""The proxy's SSE reader: events split anywhere between chunks come out whole and byte-exact, and
an event over MAX_EVENT_BYTES is passed on unread instead of held."""

from __future__ import annotations

import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from contextwarden.proxy.sse import MAX_EVENT_BYTES, EventReader

EVENTS = [
    b'event: message_start\ndata: {"type": "message_start", "n": 1}\n\n',
    b'data: {"type": "ping"}\r\n\r\n',
    b"event: message_stop\ndata: [DONE]\n\n",
]
STREAM = b"".join(EVENTS)


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_events_split_anywhere_come_out_whole(cuts: list[int]) -> None:
    reader = EventReader()
    bounds = [0, *sorted(cuts), len(STREAM)]
    events = [e for a, b in itertools.pairwise(bounds) for e in reader.feed(STREAM[a:b])]
    assert [e.raw for e in events] == EVENTS
    assert [e.name for e in events] == ["message_start", None, "message_stop"]
    assert events[0].data == {"type": "message_start", "n": 1} and events[2].data is None
    assert reader.rest() == b""


def test_an_oversized_event_is_passed_on_unread_and_reading_resumes() -> None:
    reader = EventReader()
    huge = b"data: " + b"a" * (MAX_EVENT_BYTES + 10)
    chunk = 65536
    out = [e for i in range(0, len(huge), chunk) for e in reader.feed(huge[i : i + chunk])]
    assert reader.buffered < chunk  # never more than one chunk past the limit held
    out += reader.feed(b"aaa\n\n" + EVENTS[0])
    assert b"".join(e.raw for e in out) == huge + b"aaa\n\n" + EVENTS[0]
    assert all(e.data is None for e in out[:-1])
    assert out[-1].data == json.loads(EVENTS[0].split(b"data: ")[1])


def test_a_stream_cut_short_keeps_its_tail() -> None:
    reader = EventReader()
    assert [e.raw for e in reader.feed(EVENTS[0] + b"data: {")] == [EVENTS[0]]
    assert reader.rest() == b"data: {"
