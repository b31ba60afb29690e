"""Token counts stored with messages: reused on load by the same counter, recounted otherwise.

Also the loading shortcut of the codec: what it builds equals what the wire reader builds, and a
damaged event still gives a StoreError that says where.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from strategies import conversations
from test_stores import KINDS, StoreSpec, compaction, make_spec

from contextwarden.errors import StoreError
from contextwarden.history import ConversationHistory
from contextwarden.log import MessageAdded
from contextwarden.model import FrozenDict, Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.stores import JsonlStore, SessionStore, SqliteStore
from contextwarden.stores.codec import (
    decode,
    encode,
    message_from_json,
    message_to_json,
    paused_gc,
)
from contextwarden.tokens.exact import TiktokenCounter
from contextwarden.tokens.heuristic import O200K_WEIGHTS, HeuristicCounter, HeuristicWeights
from contextwarden.tokens.ledger import TokenLedger
from contextwarden.wire.anthropic import message_from_wire


class CallCountingCounter:
    """HeuristicCounter's counts under its ``cache_key`` (or none), counting count_message calls."""

    def __init__(self, cache_key: str | None = HeuristicCounter().cache_key) -> None:
        self._counter = HeuristicCounter()
        if cache_key is not None:
            self.cache_key = cache_key
        self.calls = 0

    def count_text(self, text: str) -> int:
        return self._counter.count_text(text)

    def count_message(self, message: Message) -> int:
        self.calls += 1
        return self._counter.count_message(message)


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    spec: StoreSpec
    for spec in make_spec(request, tmp_path):
        opened = spec.open()
        yield opened
        opened.close()


def tool_turn(history: ConversationHistory, n: int) -> None:
    history.add_user_message(f"question {n}: what is in src/?")
    call = ToolUseBlock(f"toolu_{n}", "Bash", FrozenDict({"command": f"ls src/{n}"}))
    history.add(Message("assistant", (TextBlock(f"looking {n}"), call)))
    history.add_tool_results([ToolResultBlock(f"toolu_{n}", f"file{n}.py\n" * 40)])
    history.add_assistant_message({"role": "assistant", "content": f"answer {n}"})


def test_counts_survive_a_round_trip_through_every_store(store: SessionStore) -> None:
    live = ConversationHistory.open(store, "s", system="be brief")
    for n in range(5):
        tool_turn(live, n)
    live.record_usage({"input_tokens": 900, "output_tokens": 10})
    tool_turn(live, 5)
    counter = HeuristicCounter()
    stored = [e for e in store.log("s") if isinstance(e, MessageAdded)]
    assert [e.tokens for e in stored] == [counter.count_message(e.message) for e in stored]
    assert {e.counter for e in stored} == {counter.cache_key}

    reader = CallCountingCounter()
    loaded = store.load("s", counter=reader)
    assert reader.calls == 0  # every count came from the store
    assert loaded.estimate_tokens() == live.estimate_tokens()
    assert loaded.counted_tokens() == live.counted_tokens()
    assert [loaded.message_tokens(i) for i in range(len(loaded))] == [
        live.message_tokens(i) for i in range(len(live))
    ]


def test_merged_entries_store_the_count_of_the_merged_message(store: SessionStore) -> None:
    live = ConversationHistory.open(store, "m", mode="merge")
    live.add(Message.user("first part"))
    live.add(Message.user("second part, merged into the first"))
    live.add(Message.assistant("reply"))
    entries = [e for e in store.log("m") if isinstance(e, MessageAdded)]
    assert [e.merge for e in entries] == [False, True, False]
    assert entries[1].tokens == HeuristicCounter().count_message(live.messages[0])

    reader = CallCountingCounter()
    loaded = store.load("m", mode="merge", counter=reader)
    assert reader.calls == 0
    assert loaded.messages == live.messages
    assert loaded.message_tokens(0) == live.message_tokens(0)
    assert loaded.estimate_tokens() == live.estimate_tokens()


def test_a_boundary_view_is_counted_and_later_messages_are_not(store: SessionStore) -> None:
    live = ConversationHistory.open(store, "b")
    for n in range(3):
        tool_turn(live, n)
    boundary = compaction(live.messages, "one")
    live._replace_view(boundary)
    tool_turn(live, 9)
    reader = CallCountingCounter()
    loaded = store.load("b", counter=reader)
    assert reader.calls == len(boundary.view)  # the four messages after it were stored counted
    assert loaded.estimate_tokens() == live.estimate_tokens()


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(lambda: CallCountingCounter(cache_key=None), id="no-cache-key"),
        pytest.param(lambda: CallCountingCounter(cache_key="heuristic/v0/old"), id="other-key"),
    ],
)
def test_a_counter_of_another_identity_recounts(tmp_path: Path, other: object) -> None:
    store = SqliteStore(tmp_path / "s.db")
    live = ConversationHistory.open(store, "s")
    for n in range(3):
        tool_turn(live, n)
    reader = other()  # type: ignore[operator]
    loaded = store.load("s", counter=reader)
    assert reader.calls == len(live)
    assert loaded.estimate_tokens() == live.estimate_tokens()  # same estimate, counted again
    store.close()


def test_an_exact_counter_recounts_a_log_counted_by_the_heuristic(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    live = ConversationHistory.open(store, "s")
    for n in range(3):
        tool_turn(live, n)
    exact = TiktokenCounter(threads=1)
    loaded = store.load("s", counter=exact)
    assert [loaded.message_tokens(i) for i in range(len(loaded))] == [
        exact.count_message(m) for m in loaded.messages
    ]
    assert loaded.counted_tokens() != live.counted_tokens()  # the stored estimates were not used
    resumed = ConversationHistory.open(store, "s", counter=exact)
    resumed.add_user_message("and now?")
    last = store.log("s")[-1]
    assert isinstance(last, MessageAdded) and last.counter == exact.cache_key


def test_counter_identity_follows_the_weights() -> None:
    assert HeuristicCounter().cache_key == HeuristicCounter(O200K_WEIGHTS).cache_key
    tweaked = HeuristicWeights(**{**_weights(O200K_WEIGHTS), "margin": 1.1})
    assert HeuristicCounter(tweaked).cache_key != HeuristicCounter().cache_key
    assert TiktokenCounter("cl100k_base", threads=1).cache_key.endswith("cl100k_base")


def _weights(weights: HeuristicWeights) -> dict[str, float]:
    return {name: getattr(weights, name) for name in weights.__dataclass_fields__}


# ----------------------------------------------------------------------------- damaged counts
def test_old_lines_without_counts_still_load_and_are_counted(tmp_path: Path) -> None:
    line = encode(MessageAdded(Message.user("written before counts were stored")))
    assert "tokens" not in json.loads(line)
    entry = decode(line)
    assert isinstance(entry, MessageAdded) and entry.tokens is None and entry.counter is None


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"tokens": "many", "counter": "heuristic/v1/x"}, "token count must be an integer"),
        ({"tokens": -3, "counter": "heuristic/v1/x"}, "token count must be an integer"),
        ({"tokens": True, "counter": "heuristic/v1/x"}, "token count must be an integer"),
        ({"tokens": 12}, "expected a string"),
        ({"counter": "heuristic/v1/x"}, "token count must be an integer"),
    ],
)
def test_a_corrupt_stored_count_is_a_clear_store_error(
    tmp_path: Path, fields: dict[str, object], problem: str
) -> None:
    store = JsonlStore(tmp_path)
    ConversationHistory.open(store, "s").add_user_message("hello")
    path = next(tmp_path.rglob("*.jsonl"))
    lines = path.read_text().splitlines()
    body = json.loads(lines[-1])
    body.pop("tokens"), body.pop("counter")
    lines[-1] = json.dumps({**body, **fields})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(StoreError, match=problem) as caught:
        store.load("s")
    assert f"{path}: line 2" in str(caught.value)


def test_a_bad_count_is_refused_when_writing() -> None:
    with pytest.raises(StoreError, match="tokens must be an integer >= 0"):
        encode(MessageAdded(Message.user("x"), tokens=-1, counter="heuristic/v1/x"))


def test_reset_counts_only_the_messages_without_a_count() -> None:
    counter = CallCountingCounter()
    ledger = TokenLedger(counter)
    messages = [Message.user("one"), Message.assistant("two"), Message.user("three")]
    ledger.reset(messages, [5, None, 7])
    assert counter.calls == 1
    assert ledger.estimate() == 12 + HeuristicCounter().count_message(messages[1])
    with pytest.raises(ValueError, match="2 counts for 3 messages"):
        ledger.reset(messages, [1, 2])


# ----------------------------------------------------------------------------- the shortcut
WIRE_SHAPES = [
    {"role": "user", "content": [{"type": "text", "text": "plain"}]},
    {"role": "user", "content": [{"type": "text", "text": "x", "cache_control": {"type": "e"}}]},
    {"role": "user", "content": [{"type": "text", "text": 5}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]},
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": True}],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": 1}],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text"}]}],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": 3, "content": "x"}]},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {"a": [1, {}]}}],
    },
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "B", "input": []}]},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}]},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]},
    {"role": "assistant", "content": [{"type": "server_tool_use", "id": "s"}, "bare string"]},
    {"role": "assistant", "content": "a string"},
]


@pytest.mark.parametrize("body", WIRE_SHAPES, ids=range(len(WIRE_SHAPES)))
def test_loading_builds_what_the_wire_reader_builds(body: dict[str, object]) -> None:
    fast, general = message_from_json(body), message_from_wire(body)
    assert fast == general
    assert [type(b) for b in fast.content] == [type(b) for b in general.content]
    assert [getattr(b, "extra", None) for b in fast.content] == [
        getattr(b, "extra", None) for b in general.content
    ]
    assert message_to_json(fast) == message_to_json(general)


@pytest.mark.parametrize(
    "message",
    [
        {"role": "system", "content": []},
        {"role": "user", "content": 5},
        {"role": "user", "content": "x", "meta": 5},
        {"role": "user", "content": "x", "meta": {"extra": [1]}},
        {"content": [{"type": "text", "text": "no role"}]},
        [1],
        "text",
    ],
)
def test_a_damaged_message_is_still_a_store_error(message: object) -> None:
    line = json.dumps({"v": 1, "type": "message", "message": message})
    with pytest.raises(StoreError, match=r"db event 4: malformed 'message' event"):
        decode(line, where="db event 4")


def test_loading_pauses_the_collector_only_while_decoding(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    ConversationHistory.open(store, "s").add_user_message("hello")
    assert gc.isenabled()
    assert len(store.load("s")) == 1
    assert gc.isenabled()
    with paused_gc(), pytest.raises(RuntimeError):
        assert not gc.isenabled()
        raise RuntimeError("a failed decode")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # off before, so it stays off
    finally:
        gc.enable()
    store.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations())
def test_generated_conversations_decode_as_the_wire_reader_reads_them(
    messages: list[Message],
) -> None:
    for message in messages:
        body = json.loads(json.dumps(message_to_json(message)))
        back = message_from_json(body)
        assert back == message == message_from_wire(body)
        assert back.meta == message.meta
