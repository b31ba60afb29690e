"""The recall tool: what compaction took out of the context comes back by the id a marker or the
summary names — in the library, from a store, and end to end in ``contextwarden chat`` with a
scripted model that follows the markers (through the real openai SDK and a server on 127.0.0.1).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextwarden.compaction.base import Strategy
from contextwarden.compaction.summarize import Summarize
from contextwarden.compaction.truncate import Truncate
from contextwarden.eval.probes import Probe
from contextwarden.eval.recall_path import follow_markers
from contextwarden.eval.replay import replay
from contextwarden.formats import load
from contextwarden.history import ConversationHistory
from contextwarden.manager import ContextManager
from contextwarden.model import Message, TextBlock
from contextwarden.policy import ContextPolicy
from contextwarden.recall import PAGE_CHARS, original, recall
from contextwarden.stores.sqlite import SqliteStore
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.summarizers.typed import typed_texts
from tests.conftest import fixture_path
from tests.servers import Captured, Reply, openai_completion, openai_stream, serving
from tests.test_chat import FILES, notes_workspace, print_mode

SESSION = "claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl"
SPAN_ID = re.compile(r'recall\(id="(sha256-[0-9a-f]+)"\)')


def _summarized(policy: ContextPolicy) -> ConversationHistory:
    history = load(fixture_path(SESSION))
    manager = ContextManager(policy)
    report = manager.apply(history, Summarize(StructuredSummarizer()), trigger="manual")
    assert report.applied, report.description
    return history


def test_a_summary_names_the_id_that_brings_its_messages_back() -> None:
    first = load(fixture_path(SESSION)).messages
    history = _summarized(ContextPolicy(context_window=12_000, recall=True))
    lead = history.messages[0].text
    ids = SPAN_ID.findall(lead)
    assert len(ids) == 1
    whole, offset, pages = "", 0, 0
    while True:  # page through the whole span as a model would
        page = recall(history, {"id": ids[0], "offset": offset})
        assert not page.is_error
        more = re.search(
            r"\n\n\[[\d,]+ more characters: recall again with offset=(\d+)\]$", page.text
        )
        whole += page.text[: more.start()] if more else page.text
        pages += 1
        if not more:
            break
        offset = int(more[1])
    assert pages > 1 and len(page.text) <= PAGE_CHARS + 100
    gone = [m for m in first if m not in history.messages]
    assert gone
    for message in gone:  # every summarized message's tool results and texts are in it
        for result in message.tool_results:
            assert result.text[:200] in whole


def test_without_the_tool_the_summary_names_no_id() -> None:
    assert not SPAN_ID.search(_summarized(ContextPolicy(context_window=12_000)).messages[0].text)


def test_a_cleared_result_comes_back_by_its_tool_call_id() -> None:
    history = load(fixture_path(SESSION))
    manager = ContextManager(ContextPolicy(context_window=12_000, on_overflow="flag"))
    report = manager.prepare(history)
    cleared = [i for i in report.lost.of("tool_result") if i.refs]
    assert cleared
    for item in cleared:
        original = history.rehydrate(item.refs[0]).text
        answer = recall(history, {"id": item.refs[0]}).text
        if not original:
            assert answer == "[the original was empty]"
        elif len(original) <= PAGE_CHARS:
            assert answer == original
        else:
            assert answer.startswith(original[:PAGE_CHARS])


@pytest.mark.parametrize(
    ("tool_input", "says"),
    [
        ({}, "needs 'id'"),
        ({"id": 42}, "needs 'id'"),
        ({"id": "x" * 500}, "needs 'id'"),
        ({"id": "toolu_nope"}, "nothing to recall under id 'toolu_nope'"),
        ({"id": "toolu_nope", "offset": -1}, "'offset' must be a whole number"),
        ({"id": "toolu_nope", "offset": True}, "'offset' must be a whole number"),
    ],
)
def test_bad_calls_are_errors_the_model_can_act_on(tool_input: dict[str, Any], says: str) -> None:
    answer = recall(load(fixture_path(SESSION)), tool_input)
    assert answer.is_error and says in answer.text


@pytest.mark.parametrize(
    "strategy",
    [Summarize(StructuredSummarizer()), Truncate(keep_recent_turns=1)],
    ids=["summarized", "truncated"],
)
def test_a_span_comes_back_from_a_store(tmp_path: Path, strategy: Strategy) -> None:
    source = load(fixture_path(SESSION))
    with SqliteStore(tmp_path / "s.db") as store:
        history = ConversationHistory.open(store, "s1", mode="merge")
        for message in source.messages:
            history.add(message)
        ContextManager(ContextPolicy(context_window=12_000, recall=True)).apply(
            history, strategy, trigger="manual"
        )
        (span,) = SPAN_ID.findall(history.messages[0].text)
        live = recall(history, {"id": span})
        reopened = store.load("s1", mode="merge")
    assert not live.is_error
    assert recall(reopened, {"id": span}).text == live.text


def _truncated(policy: ContextPolicy) -> tuple[tuple[Message, ...], ConversationHistory, int]:
    """The session before, after a truncation keeping one turn, and how many messages it dropped."""
    history = load(fixture_path(SESSION))
    before = history.messages
    report = ContextManager(policy).apply(history, Truncate(keep_recent_turns=1), trigger="manual")
    assert report.applied, report.description
    dropped = report.details["dropped"]
    assert isinstance(dropped, int)
    return before, history, dropped


def test_a_truncation_names_the_id_that_brings_what_it_dropped_back() -> None:
    before, history, dropped = _truncated(ContextPolicy(context_window=12_000, recall=True))
    lead = history.messages[0]
    (note,) = [b.text for b in lead.content if isinstance(b, TextBlock) and SPAN_ID.search(b.text)]
    assert dropped > 1 and f"{dropped:,} earlier message(s) were dropped here" in note
    (span,) = SPAN_ID.findall(note)
    assert original(history, span) is not None
    whole = original(history, span) or ""
    for message in before[1:]:
        if message not in history.messages:
            for result in message.tool_results:
                assert result.text[:200] in whole
    # the note is ours, not what the person typed: a later summary does not quote it as theirs
    assert [t for t in typed_texts(lead) if "were dropped here" in t] == []


def test_a_truncation_without_the_tool_names_no_id() -> None:
    _, history, _ = _truncated(ContextPolicy(context_window=12_000))
    assert not SPAN_ID.search(history.messages[0].text)


# ----------------------------------------------------------------------------- chat, end to end
class RecallingCoder:
    """A scripted model: reads every note, then answers what line 5 of the first note said. If
    that line is no longer in its context it follows the markers: it recalls the first read by its
    tool call id, or the summary's span by the id the summary names, page by page."""

    WANTED = "note 0, line 5: the value of setting 0.5 is 0"

    def __init__(self) -> None:
        self.requests = 0
        self.recalls: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, request: Captured) -> Reply:
        with self.lock:
            self.requests += 1
        messages = request.body["messages"]
        assert any(t["function"]["name"] == "recall" for t in request.body.get("tools") or [])
        reads = [m for m in messages if m["role"] == "tool"]
        typed = [m for m in messages if m["role"] == "user" and "read" in str(m["content"])]
        done = sum(1 for m in messages[messages.index(typed[-1]) :] if m["role"] == "tool")
        if done < FILES and not self.recalls:
            return self._call("read_file", {"path": f"notes/f{done}.txt"})
        everything = json.dumps(messages)
        if self.WANTED in everything:
            return openai_stream(openai_completion(f"Line 5 said: {self.WANTED}"))
        last = reads[-1]["content"] if reads else ""
        more = re.search(r"recall again with offset=(\d+)\]", str(last))
        if more and self.recalls:
            return self._recall({**self.recalls[-1], "offset": int(more[1])})
        first_read = _first_read_id(messages)
        if first_read is not None:
            return self._recall({"id": first_read})
        span = SPAN_ID.search(everything.replace('\\"', '"'))
        assert span, "neither the read nor a summary naming its span is in the context"
        return self._recall({"id": span[1]})

    def _recall(self, arguments: dict[str, Any]) -> Reply:
        self.recalls.append(arguments)
        return self._call("recall", arguments)

    @staticmethod
    def _call(name: str, arguments: dict[str, Any]) -> Reply:
        body = openai_completion(None, tool_call={"name": name, "arguments": arguments})
        return openai_stream(body)


def _first_read_id(messages: list[dict[str, Any]]) -> str | None:
    for message in messages:
        for call in message.get("tool_calls") or []:
            if "notes/f0.txt" in call["function"]["arguments"]:
                return str(call["id"])
    return None


@pytest.fixture
def recalling() -> Iterator[tuple[RecallingCoder, str]]:
    coder = RecallingCoder()
    with serving("/v1/chat/completions", coder) as api:
        yield coder, f"{api.url}/v1"


def test_chat_gets_back_what_compaction_took(
    recalling: tuple[RecallingCoder, str], tmp_path: Path
) -> None:
    coder, url = recalling
    done = print_mode(url, tmp_path, "read the notes please", notes_workspace(tmp_path))
    assert done.returncode == 0, done.stderr
    assert coder.recalls, "line 5 of the first note should have left the 8K context"
    assert done.stdout.strip() == f"Line 5 said: {RecallingCoder.WANTED}"


def _buried_lines(session: ConversationHistory) -> list[Probe]:
    """Probes no summary keeps: a line from the middle of each early tool result."""
    early = session.messages[: len(session.messages) // 2]
    found = []
    for result in (r for m in early for r in m.tool_results):
        lines = [line.strip() for line in result.text.splitlines() if len(line.strip()) > 25]
        if len(lines) >= 3:
            found.append(Probe(lines[len(lines) // 2], "custom"))
    return found


def test_the_replay_measures_the_recall_path() -> None:
    session = load(fixture_path(SESSION))
    policy = ContextPolicy(context_window=8_000, recall=True, on_overflow="flag")
    probes = _buried_lines(session)
    assert len(probes) >= 3
    result = replay(session, ("ladder", "truncate"), policy=policy, probes=probes)
    ladder, truncate = result.runs["ladder"], result.runs["truncate"]
    assert ladder.recall is not None and truncate.recall is not None
    missing = ladder.retention.missing_at_end
    assert missing, "an 8K window loses these lines from the context"
    assert set(ladder.recall.recovered) == set(missing)  # each one is in a named original
    assert ladder.recall.final_share(ladder.retention) == 1.0 > ladder.retention.final_share
    # a truncation names what it dropped too, and each one's span holds the note of the one before
    gone = truncate.retention.missing_at_end
    assert gone and set(truncate.recall.recovered) == set(gone)
    assert ladder.as_json()["probe_retention_final_recall"] == 1.0


def test_the_recall_path_follows_a_summary_of_a_summary_back() -> None:
    """A second summary's span holds the first summary, which names the first span: a model
    following markers reads on through it, as the recall path measures."""
    history = load(fixture_path(SESSION))
    first = list(history.messages)
    manager = ContextManager(ContextPolicy(context_window=12_000, recall=True))
    for keep in (4_000, 500):
        report = manager.apply(history, Summarize(keep_tokens=keep), trigger="manual")
        assert report.applied, report.description
    [latest] = SPAN_ID.findall(history.messages[0].text)
    span = recall(history, {"id": latest, "offset": 0}).text
    [earlier] = [i for i in SPAN_ID.findall(span) if i != latest]
    context = "\n".join(m.text for m in history.messages)
    lines = [
        line
        for m in first
        for r in m.tool_results
        for line in r.text.splitlines()
        if len(line) > 40 and line not in context and line not in span
    ]
    assert lines, "the first span holds lines neither the context nor the second span shows"
    assert all(line in recall(history, {"id": earlier}).text for line in lines[:1])
    path = follow_markers(history, lines[:5])
    assert path.recovered == tuple(lines[:5]) and path.ids == 2
