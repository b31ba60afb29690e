"""FileTracker and re-attachment: recent files re-read after a summary, inside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contextwarden.files import Budget, FileTracker
from contextwarden.manager import ContextManager
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.policy import ContextPolicy
from contextwarden.rules import validate
from contextwarden.tokens.heuristic import HeuristicCounter
from tests.strategies import FakeSummarizer, history_of

COUNTER = HeuristicCounter()


def calls(*uses: tuple[str, dict[str, str]]) -> list[Message]:
    """A prompt, then one assistant tool call per use, each answered with a short result."""
    out = [Message.user("work on the project")]
    for n, (name, tool_input) in enumerate(uses):
        out.append(Message.assistant([ToolUseBlock(f"t{n}", name, tool_input)]))
        out.append(Message("user", (ToolResultBlock(f"t{n}", f"done {n}\n" + "text " * 400),)))
    return out


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("print('a')\n", encoding="utf-8")
    (root / "b.md").write_text("# notes\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("password=hunter2\n", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    (root / "gone.py").write_text("deleted soon\n", encoding="utf-8")
    return root


def test_tracker_records_paths_from_tool_inputs_most_recent_first() -> None:
    tracker = FileTracker()
    patch = "*** Begin Patch\n*** Update File: src/c.py\n@@\n-x\n+y\n*** End Patch"
    for message in calls(
        ("Read", {"file_path": "src/a.py"}),
        ("str_replace_editor", {"command": "view", "path": "b.md"}),
        ("Bash", {"command": "cat src/ignored.py"}),
        ("apply_patch", {"input": patch}),
        ("read_file", {"file_path": "src/a.py"}),
    ):
        tracker.observe(message)
    assert tracker.recent() == ["src/a.py", "src/c.py", "b.md"]


def test_reattach_only_inside_the_workspace(workspace: Path) -> None:
    tracker = FileTracker()
    for message in calls(
        ("Read", {"file_path": "src/a.py"}),
        ("Read", {"file_path": "../secret.txt"}),
        ("Read", {"file_path": str(workspace / "link.txt")}),
        ("Read", {"file_path": "gone.py"}),
        ("Edit", {"file_path": str(workspace / "b.md")}),
        ("Read", {"file_path": str(workspace / "src" / ".." / ".." / "secret.txt")}),
    ):
        tracker.observe(message)
    (workspace / "gone.py").unlink()
    blocks = tracker.reattach(workspace, COUNTER)
    assert [b.text.split(" (re-read")[0] for b in blocks] == [
        "Contents of b.md",
        "Contents of src/a.py",
    ]
    assert all("hunter2" not in b.text for b in blocks)
    assert blocks[1].text.endswith("print('a')\n")
    assert tracker.reattach(None, COUNTER) == []


def test_reattach_budgets(workspace: Path) -> None:
    names = [f"f{n}.txt" for n in range(8)]
    for name in names:
        (workspace / name).write_text("word " * 3_000 + "\n", encoding="utf-8")
    (workspace / "bin.dat").write_bytes(b"\x00\x01binary")
    tracker = FileTracker()
    for message in calls(*(("Read", {"file_path": name}) for name in [*names, "bin.dat"])):
        tracker.observe(message)
    five = tracker.reattach(workspace, COUNTER)
    assert [b.text.split(" (re-read")[0] for b in five] == [
        f"Contents of f{n}.txt" for n in (7, 6, 5, 4, 3)
    ]  # the binary file is skipped; at most max_files
    small = tracker.reattach(
        workspace, COUNTER, Budget(max_tokens_per_file=500, restore_budget=1_100)
    )
    assert len(small) == 2
    assert all(COUNTER.count_text(b.text) <= 560 and "file cut" in b.text for b in small)
    excluded = tracker.reattach(workspace, COUNTER, exclude={"f7.txt"})
    assert excluded[0].text.startswith("Contents of f6.txt")


def test_summary_message_carries_recent_files_after_autocompact(workspace: Path) -> None:
    messages = calls(
        ("Read", {"file_path": "src/a.py"}),
        ("Read", {"file_path": "../secret.txt"}),
        ("Edit", {"file_path": "b.md"}),
        *[("Bash", {"command": f"make {n}"}) for n in range(12)],
    )
    policy = ContextPolicy(
        context_window=6_000, summary_keep_tokens=1_500, keep_recent_tool_results=20
    )
    manager = ContextManager(policy, summarizer=FakeSummarizer("s"), workspace=workspace)
    history = history_of(messages)
    report = manager.prepare(history)
    assert "summarize" in report.applied and validate(history.messages) == []
    texts = [b.text for b in history.messages[0].content if isinstance(b, TextBlock)]
    attached = [t.split(" (re-read")[0] for t in texts if "(re-read after compaction)" in t]
    assert attached == ["Contents of b.md", "Contents of src/a.py"]
    assert manager.recent_files(history)[:2] == ["b.md", "../secret.txt"]


def test_no_workspace_no_reattachment() -> None:
    messages = calls(("Read", {"file_path": "src/a.py"}), *[("Bash", {"command": "ls"})] * 12)
    policy = ContextPolicy(context_window=6_000, summary_keep_tokens=1_500)
    manager = ContextManager(policy, summarizer=FakeSummarizer("s"))
    history = history_of(messages)
    manager.prepare(history)
    texts = [b.text for b in history.messages[0].content if isinstance(b, TextBlock)]
    assert not any("re-read after compaction" in t for t in texts)


@pytest.mark.parametrize("bad", ["src/a\x00.py", "x" * 5_000, "/\x00", "src/" + "d/" * 3_000])
def test_a_path_that_cannot_be_a_file_is_not_reattached_and_autocompact_still_runs(
    workspace: Path, bad: str
) -> None:
    """A NUL byte or an impossible length in a tool's ``file_path`` used to make every
    autocompact raise ValueError (uncounted by the breaker)."""
    messages = calls(
        ("Read", {"file_path": "src/a.py"}),
        ("Read", {"file_path": bad}),
        *[("Bash", {"command": f"make {n}"}) for n in range(12)],
    )
    policy = ContextPolicy(
        context_window=6_000, summary_keep_tokens=1_500, keep_recent_tool_results=20
    )
    manager = ContextManager(policy, summarizer=FakeSummarizer("s"), workspace=workspace)
    history = history_of(messages)
    assert "summarize" in manager.prepare(history).applied
    assert validate(history.messages) == [] and manager.consecutive_failures(history) == 0
    texts = [b.text for b in history.messages[0].content if isinstance(b, TextBlock)]
    attached = [t.split(" (re-read")[0] for t in texts if "(re-read after compaction)" in t]
    assert attached == ["Contents of src/a.py"]
