"""Hypothesis strategies for valid agent conversations, shared by the property tests.

``conversations()`` draws histories that pass ``rules.validate``: parallel tool calls, signed and
redacted thinking, long tool outputs (some with very long lines), CJK text, error results,
multi-part results, increasing timestamps, and sometimes a pending tool call at the end.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from contextwarden.errors import SummarizerError
from contextwarden.history import ConversationHistory
from contextwarden.model import (
    Block,
    Message,
    MessageMeta,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.summarizers.base import Summary

PHRASES = (
    "Please fix the failing test in parser.py",
    "帮我读取 pom.xml 并解释依赖关系",
    "このファイルの構造を説明してください",
    "def main():\n    return parse(sys.argv[1:])",
    '{"status": "ok", "items": [1, 2, 3], "path": "/src/app.py"}',
    'Traceback (most recent call last):\n  File "app.py", line 3\nValueError: bad input',
    "OK, I will look at the configuration first.",
    "テストが失敗しました。原因を調べます。",
    "修复完成，所有测试通过。",  # noqa: RUF001 (CJK punctuation on purpose)
    "$ ls -la\ntotal 12\ndrwxr-xr-x 2 user user 4096 .",
)
TOOLS = ("Read", "Bash", "bash", "read_file", "str_replace_editor", "Grep", "TodoWrite", "Task")

texts = st.lists(st.sampled_from(PHRASES), min_size=1, max_size=3).map("\n".join)


@st.composite
def tool_output(draw: st.DrawFn) -> str:
    """Short, long (many lines) or one very long line; plain, CJK, code or JSON."""
    base = draw(st.sampled_from(PHRASES))
    kind = draw(st.sampled_from(("short", "short", "long", "wide")))
    if kind == "short":
        return base
    if kind == "long":
        return "\n".join(f"{n}: {base}" for n in range(draw(st.integers(50, 1_500))))
    return base + " " + "x" * draw(st.integers(600, 6_000)) + "\nend"


@st.composite
def tool_result(draw: st.DrawFn, tool_use_id: str) -> ToolResultBlock:
    text = draw(tool_output())
    if draw(st.integers(0, 5)) == 0:
        parts = (TextBlock(text), TextBlock(draw(texts)))
        return ToolResultBlock(tool_use_id, parts)
    return ToolResultBlock(tool_use_id, text, is_error=draw(st.integers(0, 7)) == 0)


@st.composite
def assistant_step(draw: st.DrawFn, ids: list[int], tools: bool) -> Message:
    blocks: list[Block] = []
    thinking = draw(st.integers(0, 3))
    if thinking == 1:
        blocks.append(ThinkingBlock(draw(texts), signature=f"sig{len(ids)}"))
    elif thinking == 2:
        blocks.append(RedactedThinkingBlock(f"redacted{len(ids)}"))
    if draw(st.booleans()) or not tools:
        blocks.append(TextBlock(draw(texts)))
    if tools:
        for _ in range(draw(st.integers(1, 3))):
            ids.append(len(ids))
            name = draw(st.sampled_from(TOOLS))
            tool_input = {"file_path": f"src/f{len(ids) % 7}.py", "command": "ls"}
            blocks.append(ToolUseBlock(f"toolu_{len(ids)}", name, tool_input))
    return Message("assistant", tuple(blocks))


@st.composite
def conversations(draw: st.DrawFn, max_turns: int = 6) -> list[Message]:
    """A valid conversation: turns of tool-using assistant steps, each ending in plain text."""
    clock = [1_700_000_000.0]
    ids: list[int] = []

    def stamp(message: Message) -> Message:
        clock[0] += draw(st.floats(1, 600))
        return Message(message.role, message.content, MessageMeta(timestamp=clock[0]))

    out = [stamp(Message.user(draw(texts)))]
    for turn in range(draw(st.integers(1, max_turns))):
        if turn:
            out.append(stamp(Message.user(draw(texts))))
        for _ in range(draw(st.integers(0, 4))):
            step = draw(assistant_step(ids, tools=True))
            out.append(stamp(step))
            results: list[Block] = [draw(tool_result(u.id)) for u in step.tool_uses]
            results = draw(st.permutations(results))
            if draw(st.integers(0, 4)) == 0:
                results.append(TextBlock("(typed while the tool ran) " + draw(texts)))
            out.append(stamp(Message("user", tuple(results))))
        out.append(stamp(draw(assistant_step(ids, tools=False))))
    ending = draw(st.sampled_from(("user", "assistant", "pending")))
    if ending == "user":
        out.append(stamp(Message.user(draw(texts))))
    elif ending == "pending":
        out.append(stamp(Message.user(draw(texts))))
        out.append(stamp(draw(assistant_step(ids, tools=True))))
    return out


def history_of(messages: Sequence[Message], **kwargs: object) -> ConversationHistory:
    """A strict-mode history holding ``messages`` (each added through the rules)."""
    history = ConversationHistory(**kwargs)  # type: ignore[arg-type]
    for message in messages:
        history.add(message)
    return history


# ---------------------------------------------------------------------- test doubles and builders
class FakeSummarizer:
    """Test-only summarizer: a short, honest summary; records what it was asked."""

    def __init__(self, text: str | None = None) -> None:
        self.text = text
        self.calls: list[tuple[tuple[Message, ...], str | None]] = []

    def summarize(self, messages: Sequence[Message], *, instructions: str | None = None) -> Summary:
        self.calls.append((tuple(messages), instructions))
        if self.text is not None:
            return Summary(self.text)
        first = messages[0].text[:80] if messages else ""
        return Summary(f"{len(messages)} earlier messages, starting with: {first}")


class FailingSummarizer:
    """Test-only summarizer that always fails the way a real one reports failure."""

    def __init__(self) -> None:
        self.calls = 0

    def summarize(self, messages: Sequence[Message], *, instructions: str | None = None) -> Summary:
        self.calls += 1
        raise SummarizerError(f"test failure {self.calls}")


class CharCounter:
    """Test-only counter: one token per character of text, nothing else, so totals are exact."""

    def count_text(self, text: str) -> int:
        return len(text)

    def count_message(self, message: Message) -> int:
        total = 0
        for block in message.content:
            if isinstance(block, TextBlock):
                total += len(block.text)
            elif isinstance(block, ToolResultBlock):
                total += len(block.text)
            elif isinstance(block, ThinkingBlock):
                total += len(block.thinking)
        return total


def tool_turns(
    count: int,
    *,
    tools: Sequence[str] = ("Read",),
    size: int = 1_000,
    start: float | None = None,
) -> list[Message]:
    """A first user message, then ``count`` assistant tool calls each answered by one result."""
    out = [Message.user("Please work on the project")]
    for n in range(count):
        name = tools[n % len(tools)]
        ts = None if start is None else start + 60.0 * n
        use = ToolUseBlock(f"toolu_{n}", name, {"file_path": f"src/file{n}.py"})
        out.append(Message("assistant", (TextBlock(f"step {n}"), use), MessageMeta(timestamp=ts)))
        body = f"result {n}\n" + ("word " * 19 + "\n") * (size // 100)
        result = ToolResultBlock(f"toolu_{n}", body)
        out.append(Message("user", (result,), MessageMeta(timestamp=ts)))
    return out


def chat(count: int, size: int = 10) -> list[Message]:
    """``count`` alternating plain-text messages, user first; each text ``size``+ characters."""
    return [
        Message("user" if n % 2 == 0 else "assistant", (TextBlock(f"m{n:04d} " + "x" * size),))
        for n in range(count)
    ]
