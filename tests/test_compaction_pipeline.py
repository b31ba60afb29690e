"""Pipeline: strategies in order, given one by one or as a list."""

from __future__ import annotations

import pytest

from contextwarden.compaction import CompactionContext, MicroCompact, NoOp, Pipeline, Snip
from contextwarden.errors import CompactionError
from tests.strategies import CharCounter, tool_turns

CTX = CompactionContext(CharCounter())


def test_a_list_of_strategies_is_the_same_pipeline_as_the_strategies() -> None:
    messages = tool_turns(30, size=2_000)
    listed = Pipeline([Snip(), MicroCompact(min_saving=0)])
    spread = Pipeline(Snip(), MicroCompact(min_saving=0))
    assert listed.name == spread.name == "snip+microcompact"
    assert listed(messages, CTX).messages == spread(messages, CTX).messages
    assert [s.name for s in listed(messages, CTX).steps] == ["snip", "microcompact"]


def test_something_that_is_not_a_strategy_is_named() -> None:
    with pytest.raises(CompactionError, match="Pipeline got int 3"):
        Pipeline([NoOp(), 3])  # type: ignore[list-item]
