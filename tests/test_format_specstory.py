"""SpecStory chat histories: the early, mid-2025 and v2.1.0 layouts, tool blocks as call/result
pairs, reasoning and subagent turns kept aside, and nothing of the file lost."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from contextwarden.cli import main
from contextwarden.errors import FormatError
from contextwarden.eval.replay import replay
from contextwarden.formats import detect_format, load
from contextwarden.formats.specstory_fields import fields_step, tree_text
from contextwarden.formats.specstory_vscode import as_drawn, linked_file, vscode_step
from contextwarden.history import ConversationHistory
from contextwarden.model import FrozenDict, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.rules import validate
from contextwarden.summarizers.failures import result_failure
from contextwarden.summarizers.tools import file_ops
from tests.fuzzing import FuzzResult, mutate_text

DATA = Path(__file__).parent / "data"
CLI = DATA / "specstory" / "specstoryai__getspecstory__2026-01-16_22-18-20Z-claude-code.md"
EARLY = (
    DATA / "specstory" / "specstoryai__tutorials__brief-readme-update-for-tutorial-repository.md"
)
CURSOR = (
    DATA
    / "specstory"
    / (
        "specstoryai__keyframe-blogger__2025-07-14_20-39Z-reconnect-local-and-remote-git-repositories.md"
    )
)
BARE = DATA / "specstory" / "specstoryai__keyframe-blogger__2025-07-10_21-51-08Z-activate-venv.md"
RESUMED = DATA / "specstory" / "specstoryai__getspecstory__2026-06-23_14-17-56Z-resumed-session.md"
FIELDS = DATA / "specstory" / "openbmc__bmcweb__2026-04-11_13-38-41Z-review-of-bmcweb-ram.md"
AIDER = DATA / "aider" / "AlexShchuka__mozgoslav__.aider.chat.history.md"
LAYOUT = re.compile(
    r"^(_\*\*.*\*\*_|---|## SpecStory|<!-- .* -->|`{3,}(?:diff)?"
    r"|\*\*Input:\*\*|\*\*Result:\*\*|- \w+:)$"
)
FIELD = re.compile(r"^- \w+: `(?P<value>.*)`$")
"""An argument of the CLI's field layout: its value is what a load keeps (the call's input)."""
PATCH_HEAD = re.compile(r"^\*\*(Add|Update|Delete): `([^`]+)`\*\*$")
TAG = re.compile(r"<summary>Thought Process</summary>|</?(?:details|summary|think|tool-use)[^>]*>")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict | FrozenDict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return [str(value)]


def _haystack(history: ConversationHistory) -> str:
    """Everything a load kept: messages (text, calls, results), reasoning and metadata."""
    parts: list[str] = []
    for message in history.messages:
        parts.extend(_strings(message.meta.extra))
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolUseBlock):
                parts.extend(_strings(block.input))
            elif isinstance(block, ToolResultBlock):
                parts.append(block.text)
    assert history.source is not None
    parts.extend(_strings(history.source.metadata))
    return "\n".join(parts)


def _kept(path: Path, history: ConversationHistory) -> list[str]:
    """The file's lines that are neither layout nor found in what the load kept."""
    haystack = _haystack(history)
    lost = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        text = TAG.sub("", raw).strip().lstrip("#").strip()
        sent = PATCH_HEAD.sub(r"*** \1 File: \2", text)  # a Codex patch's head, as it was sent
        field = FIELD.match(text)
        text = field["value"] if field else text
        if text and not LAYOUT.match(raw.strip()) and text not in haystack and sent not in haystack:
            lost.append(raw)
    return lost


@pytest.mark.parametrize(
    "path", [CLI, EARLY, CURSOR, BARE, RESUMED, FIELDS], ids=lambda p: p.name[:40]
)
def test_every_layout_is_detected_and_loses_no_line(path: Path) -> None:
    assert detect_format(path) == "specstory"
    history = load(path)
    assert history.source is not None
    assert [i.line for i in history.source.issues] == ([51] if path == EARLY else [])
    assert validate(list(history.messages)) == []
    assert _kept(path, history) == []


def test_cli_layout_tool_blocks_become_pairs_and_sidechains_stay_aside() -> None:
    history = load(CLI)
    assert history.source is not None
    meta = history.source.metadata
    assert meta["markdown_version"] == "2.1.0" and meta["agent"] == "Claude Code"
    assert meta["session_id"] == "b9a0d834-5e25-45ad-9a0c-dd0bead5b38a"
    messages = list(history.messages)
    first = messages[0]
    assert first.role == "user" and first.text.startswith("Normally when doing cloud sync'ing")
    assert first.text.endswith("no HEAD request before a cloud sync during `specstory run`.")
    assert first.meta.timestamp == 1768601900.0  # 2026-01-16 22:18:20Z
    uses = [u for m in messages for u in m.tool_uses]
    assert [(u.name, u.input["tool_type"]) for u in uses] == [
        ("Task", "generic"),
        ("Grep", "search"),
        ("Read", "read"),
    ]
    assert uses[0].id == "specstory_L32" and uses[2].input["file_path"] == "./specstory-cli/main.go"
    results = {r.tool_use_id: r.text for m in messages for r in m.tool_results}
    assert "Found 8 files" in results[uses[1].id]
    assert results[uses[1].id].endswith("2026-01-13_16-29-49Z-pkg-providers-claudecode-13.md\n```")
    reply = messages[1]
    assert reply.meta.extra["model"] == "claude-opus-4-5-20251101"
    assert (
        reply.text == "I'll research how cloud syncing and the HEAD request work in the codebase."
    )
    assert "The user wants me to research" in str(reply.meta.extra["parts"][0]["reasoning"])
    sidechain = meta["sidechain_turns"]
    assert [turn["line"] for turn in sidechain] == [44, 55, 59]
    assert sidechain[0]["text"].startswith("Research how cloud syncing works")
    assert not any("Research how cloud syncing works" in m.text for m in messages)
    assert "/exit" in messages[-1].text and "Goodbye!" in messages[-1].text


def test_early_layout_keeps_turns_whole_past_a_fence_that_never_closes() -> None:
    history = load(EARLY)
    assert history.source is not None
    [issue] = history.source.issues  # the bare fence on line 47 never closes before line 51
    assert issue.line == 51 and "still open at this turn header" in issue.message
    assert history.source.metadata["title"].startswith("Brief README Update for Tutorial")
    messages = list(history.messages)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[0].text.startswith("Update the README but keep it brief.")
    reply = messages[1].text
    assert reply.startswith("I'll update the README") and "# Classic Cars Gallery Tutorial" in reply
    assert reply.endswith("maintaining the necessary setup instructions.")  # the last turn
    assert not any(m.tool_uses for m in messages)


def test_cursor_extension_reasoning_is_kept_on_the_replies() -> None:
    text = CURSOR.read_text(encoding="utf-8")
    history = load(CURSOR)
    reasoning: list[Any] = []
    for message in history.messages:
        extra = message.meta.extra
        for part in extra.get("parts", (extra,)):
            reasoning.extend(part.get("reasoning", ()))
    assert len(reasoning) == text.count("<think>") == 6
    assert reasoning[0].startswith("The user has renamed their project directory")
    assert "</details>" not in "".join(reasoning)
    assert history.source is not None and "unattached_reasoning" not in history.source.metadata


def test_bare_tool_use_steps_become_pairs() -> None:
    history = load(BARE)
    messages = list(history.messages)
    uses = [u for m in messages for u in m.tool_uses]
    assert [u.name for u in uses] == ["LS", "Bash"]
    assert uses[1].input["command"] == "source venv/bin/activate"
    assert uses[1].input["summary"] == "Tool use: **Bash** Activate Python virtual environment"
    assert uses[1].input["description"] == "Activate Python virtual environment"
    results = [r for m in messages for r in m.tool_results]
    assert results[0].text.startswith("Result:") and "BuildingTnyDocs" in results[0].text
    assert messages[-1].role == "user" and "command not found: whisper" in messages[-1].text


def test_detection_tells_specstory_from_aider_and_from_quoted_records(tmp_path: Path) -> None:
    assert detect_format(AIDER) == "aider"
    lines = CLI.read_text(encoding="utf-8").splitlines()
    record = '{"parentUuid":null,"type":"user","sessionId":"s","message":{"role":"user"}}'
    at = lines.index("Research cloud sync HEAD request") + 2  # inside the Task result's fence
    quoting = tmp_path / "quoting.md"
    quoting.write_text("\n".join([*lines[:at], record, record, *lines[at:]]) + "\n")
    assert detect_format(quoting) == "specstory"
    notes = tmp_path / "notes.md"
    notes.write_text("# Plan\n\n_**User**_\n\nhello\n")  # SpecStory's header line, no marker
    with pytest.raises(FormatError, match="--format"):
        load(notes)
    assert load(notes, "specstory").messages[0].text == "hello"


def test_a_truncated_tool_block_is_reported_by_line_and_kept_as_text(tmp_path: Path) -> None:
    lines = CLI.read_text(encoding="utf-8").splitlines()
    opens = [n for n, line in enumerate(lines) if line.startswith("<tool-use")]
    cut = tmp_path / "cut.md"
    cut.write_text("\n".join(lines[: opens[-1] + 6]) + "\n")  # the Read block loses its end
    history = load(cut)
    assert history.source is not None
    [issue] = history.source.issues
    assert issue.line == opens[-1] + 1
    assert "'Read'" in issue.message and "never closed" in issue.message
    last = list(history.messages)[-1]
    assert last.role == "assistant" and "./specstory-cli/main.go" in last.text
    assert validate(list(history.messages)) == []
    assert _kept(cut, history) == []


def test_an_empty_session_is_refused_naming_the_format(tmp_path: Path) -> None:
    empty = tmp_path / "empty.md"
    empty.write_text("<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n# 2026-07-24 19:12:08Z\n")
    with pytest.raises(FormatError, match="not readable as specstory: the file holds no records"):
        load(empty)


def test_a_session_replays_through_the_ladder_with_compaction_and_no_invalid_request() -> None:
    run = replay(load(CLI), ("ladder",), window=600).runs["ladder"]  # the session is ~880 tokens
    assert run.kinds.get("summarize", 0) > 0
    assert run.invalid_requests == 0 and run.over_window == 0


def test_cli_inspect_detects_a_specstory_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["inspect", "--json", str(BARE)])
    assert exit_info.value.code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["format"] == "specstory"
    assert report["tool_calls_by_tool"] == {"LS": 1, "Bash": 1}


def test_damaged_files_load_valid_or_fail_with_a_clear_error(tmp_path: Path) -> None:
    """Truncated, cut or byte-damaged SpecStory files: a valid history or a ContextWardenError."""
    rng = random.Random(7)
    result, broken = FuzzResult(), []
    for n in range(200):
        source = rng.choice([CLI, EARLY, CURSOR, BARE, VSCODE])
        path = tmp_path / f"case{n}.md"
        path.write_bytes(mutate_text(source.read_bytes(), rng))

        def run(path: Path = path) -> None:
            history = load(path, "specstory")
            if validate(list(history.messages)):
                broken.append(path.name)

        result.record(f"case {n} ({source.name})", run)
    assert result.escaped == [] and broken == []
    assert result.loaded > 100


def test_a_file_named_in_a_details_summary_is_read_without_its_tags(tmp_path: Path) -> None:
    # Cursor's extension (late 2025) opens an edit step's diff in a collapsed <details>.
    session = tmp_path / "edit.md"
    session.write_text(
        "<!-- Generated by SpecStory -->\n\n"
        "<!-- cursor Session 1 (2025-10-14 22:20Z) -->\n\n"
        "# Add a dependency (2025-10-14 22:20Z)\n\n"
        "_**User (2025-10-14 22:25Z)**_\n\nadd pytest-xdist\n\n---\n\n"
        "_**Assistant (default)**_\n\n"
        "Tool use: **search_replace**\n\n\n"
        "<details><summary>Edit file: requirements.txt</summary>\n\n"
        "```diff\n+ pytest-xdist==3.5.0\n```\n\n</details>\n\n---\n\nDone.\n"
    )
    [use] = [u for m in load(session).messages for u in m.tool_uses]
    assert use.name == "search_replace" and use.input["file_path"] == "requirements.txt"


def test_a_steps_summary_result_and_patch_header_name_its_command_and_file(
    tmp_path: Path,
) -> None:
    # The CLI's layouts: a Codex command in the summary line (its output's first line is not
    # the command), a Claude Code read named there, a write named only by its result, and a
    # patch's file in the header of its diff.
    session = tmp_path / "steps.md"
    session.write_text(
        "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n"
        "<!-- Codex CLI Session 1 (2026-02-20 15:53:44Z) -->\n\n"
        "_**User (2026-02-20 15:53:44Z)**_\n\nsummarise the docs\n\n"
        "_**Agent (gpt-5.2 2026-02-20 15:53:50Z)**_\n\n"
        '<tool-use data-tool-type="shell" data-tool-name="exec_command">'
        "<details><summary>Tool use: **exec_command** `rg --files docs`</summary>\n"
        "```\nChunk ID: 4f2a\nOutput:\ndocs/a.md\n```\n</details></tool-use>\n\n"
        '<tool-use data-tool-type="write" data-tool-name="apply_patch">'
        "<details><summary>Tool use: **apply_patch**</summary>\n"
        "**Update: `docs/a.md`**\n\n```diff\n@@\n-old\n+new\n```\n</details></tool-use>\n\n"
        "Tool use: **Read** `./notes/plan.md`\n\nResult:\n\n```\n1→plan\n```\n\n"
        "Tool use: **Write**\n\n```python\nprint(1)\n```\n\nResult:\n\n```\n"
        "File created successfully at: /home/me/app/run.py\n```\n\nDone.\n"
    )
    uses = [u for m in load(session).messages for u in m.tool_uses]
    assert [(u.name, u.input.get("command"), u.input.get("file_path")) for u in uses] == [
        ("exec_command", "rg --files docs", None),
        ("apply_patch", None, "docs/a.md"),
        ("Read", None, "./notes/plan.md"),
        ("Write", None, "/home/me/app/run.py"),
    ]
    ops = [op for u in uses for op in file_ops(u)]
    assert [(op.path, op.operation) for op in ops] == [
        ("docs/a.md", "edited"),
        ("./notes/plan.md", "read"),
        ("/home/me/app/run.py", "wrote"),
    ]


def test_claude_codes_note_after_a_written_files_path_is_no_part_of_it(tmp_path: Path) -> None:
    # Claude Code 2.x answers a Write and an Edit with a note in parentheses after the path,
    # as a SpecStory CLI file of cocli (2026-05-21) shows it; the step itself shows no path.
    note = "(file state is current in your context \u2014 no need to Read it back)"
    session = tmp_path / "note.md"
    session.write_text(
        "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n"
        "_**User (2026-05-21 06:41:36Z)**_\n\nwrite the spec\n\n"
        "_**Agent (claude-opus-4-7 2026-05-21 07:20:50Z)**_\n\n"
        '<tool-use data-tool-type="write" data-tool-name="Write"><details>\n'
        "<summary>Tool use: **Write**</summary>\n\n```md\n# Spec\n```\n\n```text\n"
        f"File created successfully at: /home/me/docs/spec.md {note}\n"
        "```\n</details></tool-use>\n\n"
        "_**Agent (claude-opus-4-7 2026-05-21 07:20:57Z)**_\n\n"
        '<tool-use data-tool-type="write" data-tool-name="Edit"><details>\n'
        "<summary>Tool use: **Edit**</summary>\n\n```text\n"
        f"The file /home/me/docs/spec.md has been updated successfully. {note}\n"
        "```\n</details></tool-use>\n",
        encoding="utf-8",
    )
    uses = [u for m in load(session).messages for u in m.tool_uses]
    assert [(u.name, u.input.get("file_path")) for u in uses] == [
        ("Write", "/home/me/docs/spec.md"),
        ("Edit", "/home/me/docs/spec.md"),
    ]


FAILED_STEPS = """<!-- Generated by SpecStory, Markdown v2.1.0 -->

<!-- Claude Code Session 6ff7aee8-2ab9-470d-8a5e-74f6a630a9ba (2026-05-13 13:48:53Z) -->

_**User (2026-05-13 13:48:53Z)**_

check the toolchain

_**Agent (claude-opus-4-7 2026-05-13 13:48:59Z)**_

<tool-use data-tool-type="shell" data-tool-name="Bash"><details>
<summary>Tool use: **Bash**</summary>
Check the Python version

`python3.12 --version`

```text
Exit code 127
(eval):1: command not found: python3.12
```
</details></tool-use>

_**Agent (claude-opus-4-7 2026-05-13 13:49:02Z)**_

<tool-use data-tool-type="write" data-tool-name="Edit"><details>
<summary>Tool use: **Edit**</summary>

```text
<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>
```
</details></tool-use>

_**Agent (claude-opus-4-7 2026-05-13 13:49:04Z)**_

<tool-use data-tool-type="shell" data-tool-name="Bash"><details>
<summary>Tool use: **Bash**</summary>
List the providers

`ls pkg/providers/`

```text
claudecode
codexcli
```
</details></tool-use>

_**Agent (claude-opus-4-20250514)**_

Tool use: **Bash** Create directories for apps and packages

`mkdir -p apps packages`

Error:

```
The user doesn't want to proceed with this tool use. The tool use was rejected.
```

_**Agent (claude-opus-4-20250514)**_

Tool use: **Bash** List the apps

`ls apps`

Result:

```
api
```
"""


def test_a_step_whose_answer_says_it_failed_is_an_error_result(tmp_path: Path) -> None:
    # The answers are Claude Code's own (a refused call in <tool_use_error>, a failed command's
    # "Exit code N"); 2025's bare steps head a failed call's answer "Error:" where the others
    # say "Result:" (as in specstoryai/tnyOffice's .specstory/history, July 2025).
    path = tmp_path / "failed.md"
    path.write_text(FAILED_STEPS, encoding="utf-8")
    history = load(path)
    results = [r for m in history.messages for r in m.tool_results]
    assert [r.is_error for r in results] == [True, True, False, True, False]
    assert "command not found: python3.12" in results[0].text
    assert validate(list(history.messages)) == []
    assert _kept(path, history) == []


def test_a_resumed_sessions_steps_stay_the_agent_text_the_resumed_agent_was_given() -> None:
    # `specstory resume` folded the Claude Code session's calls into plain agent turns of the
    # Codex session (pkg/spi/reconstruct.go): Codex got them as text, so they load as text.
    history = load(RESUMED)
    messages = list(history.messages)
    assert [u.name for m in messages for u in m.tool_uses] == ["apply_patch"]  # Codex's own
    steps = [b.text for m in messages for b in m.content if isinstance(b, TextBlock)]
    assert any(t.startswith("```text\n<tool_use_error>String to replace") for t in steps)
    assert any(t.startswith("Inspect Claude JSONL record keys for gitBranch") for t in steps)


def test_a_codex_patch_step_is_the_patch_the_agent_sent_and_its_answer() -> None:
    # formatApplyPatch (specstory-cli/pkg/providers/codexcli/markdown_tools.go) shows each
    # "*** Update File: X" of the patch as a "**Update: `X`**" head over a diff fence
    messages = list(load(RESUMED).messages)
    [call] = [u for m in messages for u in m.tool_uses]
    patch = call.input["input"]
    assert patch.startswith("*** Begin Patch\n*** Update File: pkg/sessionindex/store.go\n@@\n")
    assert "-// SearchHit is a matching session plus a snippet" in patch
    assert patch.endswith("+\treturn out, rows.Err()\n }\n*** End Patch")
    assert [op.path for op in file_ops(call)] == ["pkg/sessionindex/store.go"]
    [result] = [r for m in messages for r in m.tool_results]
    assert result.text.startswith("```\nExit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess.")
    assert "SearchHit" not in result.text and not result.is_error


VSCODE = (
    DATA
    / "specstory"
    / "DakineMI__tree-sitter-languages-rs__2025-12-15_23-48Z-initialization-process-discussion.md"
)


def test_vscode_steps_are_the_calls_the_agent_made() -> None:
    """VS Code's JSON fences: the command sent, the output as drawn, the exit code first."""
    history = load(VSCODE)
    assert history.source is not None and history.source.metadata["agent"] == "vscode"
    assert validate(list(history.messages)) == []
    uses = [u for m in history.messages for u in m.tool_uses]
    results = {r.tool_use_id: r for m in history.messages for r in m.tool_results}
    assert [u.name for u in uses] == [
        "copilot_readFile",
        "copilot_listDirectory",
        "copilot_replaceString",
        "run_in_terminal",
        "run_in_terminal",
    ]
    read, listed, replaced, unseen, cargo = uses
    assert read.input["file_path"] == (
        "/Users/jonathanhughes/source/DakineMI/repos/tree-sitter-languages-rs/README.md"
    )
    assert listed.input["relativeWorkspacePath"] == "scripts"
    assert results[replaced.id].text.startswith("```shellscript\nCheck if config exists")
    assert 'cat > "$config_file" << EOF' in results[replaced.id].text  # &gt; and &lt; decoded
    assert unseen.input["command"] == "./scripts/create_tree_sitter_configs.sh"
    assert results[unseen.id].text == 'Using "Run in Terminal"'  # no output was kept
    assert cargo.input["command"] == "cargo build"
    answer = results[cargo.id]
    assert answer.is_error and answer.text.startswith("Exit code: 101\n    Blocking waiting")
    assert "error[E0061]: this function takes 5 arguments but 4 arguments were supplied" in (
        answer.text.splitlines()
    )
    assert "\x1b" not in answer.text and "\r" not in answer.text
    kept = history.source.metadata["vscode_steps"][cargo.id]
    assert kept["parameters"]["terminalCommandState"]["duration"] == 33355
    assert kept["parameters"]["terminalCommandOutput"] == {"lineCount": 248}
    assert kept["additional"] == {"vscodeToolId": "run_in_terminal", "isHidden": False}
    assert kept["result"]["isConfirmed"] == {"type": 1} and kept["status"] == "completed"


def test_a_vscode_terminals_failure_is_read_from_its_exit_code() -> None:
    history = load(VSCODE)
    calls = {u.id: u for m in history.messages for u in m.tool_uses}
    results = [r for m in history.messages for r in m.tool_results]
    failed = {
        calls[r.tool_use_id].input["command"]: result_failure(calls[r.tool_use_id], r)
        for r in results
        if result_failure(calls[r.tool_use_id], r)
    }
    assert list(failed) == ["cargo build"]
    assert "takes 5 arguments but 4 arguments were supplied" in str(failed["cargo build"])


def test_terminal_output_is_read_as_the_terminal_draws_it() -> None:
    raw = "\x1b[91merror\x1b[39m: x\r\n\x1b[8Csitters/a\r\n50%\r100%\x1b]633;D;1\x07\r\n"
    assert as_drawn(raw) == "error: x\n        sitters/a\n100%"


def test_a_step_of_another_agent_with_the_same_labels_is_left_as_it_is(tmp_path: Path) -> None:
    # Cursor's extension writes Parameters / Additional data / Result too, with no vscodeToolId.
    body = [
        "Parameters:",
        "",
        "```json",
        '{"pattern": "scrollbar-hide"}',
        "```",
        "Additional data:",
        "",
        "```json",
        '{"isPruned": true}',
        "```",
        "Status: **completed**",
    ]
    assert vscode_step(body) is None
    assert linked_file("Reading [](file:///e%3A/w/a.h#1-1), lines 1 to 5") == "e:/w/a.h"


def test_the_clis_field_steps_are_the_calls_the_agent_made() -> None:
    """``**Input:**`` lists the call's arguments, ``**Result:**`` fences its answer, and an
    answer VS Code drew as a prompt-tsx tree is the tree's text (the tree kept aside)."""
    history = load(FIELDS)
    assert history.source is not None and validate(list(history.messages)) == []
    uses = [u for m in history.messages for u in m.tool_uses]
    results = {r.tool_use_id: r for m in history.messages for r in m.tool_results}
    read, terminal, replaced = uses
    assert read.input["filePath"].endswith("/bmcweb/redfish-core/lib/metadata.hpp")
    assert (read.input["startLine"], read.input["endLine"]) == ("1", "100")
    assert [op.path for op in file_ops(read)] == [read.input["filePath"]]
    assert results[read.id].text == (
        "// SPDX-License-Identifier: Apache-2.0\n// SPDX-FileCopyrightText: Copyright OpenBMC "
        "Authors\n#pragma once\n… (output truncated)"
    )
    tree = history.source.metadata["vscode_steps"][read.id]["result_tree"]
    assert tree.startswith('{"node":{"children":') and tree.endswith("… (output truncated)")
    assert terminal.input["command"].endswith('|| echo "Schema directory not found (expected in '
                                              'runtime environment)"')  # fmt: skip
    assert terminal.input["goal"] == "Measure impact" and results[terminal.id].text == "0"
    assert replaced.input["oldString"].startswith("void handleSchemaGet(App& app,")
    assert "// Sanity check the filename" in replaced.input["newString"]
    assert "// Sanity check the filename" not in replaced.input["oldString"]
    assert results[replaced.id].text == (
        "The following files were successfully edited:\n"
        "/home/vinothkumars/openbmc_contribution/ram_opti/bmcweb/redfish-core/lib/metadata.hpp\n"
    )


def test_a_step_the_field_layout_does_not_explain_is_left_as_it_is() -> None:
    assert fields_step(["**Input:**", "", "- skill: `writing-plans`"]) is not None
    assert fields_step(["**Input:**", "", "some prose", "**Result:**"]) is None
    assert fields_step(["Parameters:", "", "- a: `b`"]) is None
    assert fields_step(["**Input:**", "- a:", "no fence"]) is None
    assert fields_step(["**Input:**", "**Result:**", "text, not a fence"]) is None


def test_a_prompt_tsx_tree_reads_as_its_text_whole_or_cut() -> None:
    pieces = [
        {"lineBreakBefore": False, "text": '<errors path="a.h">\n'},
        {"lineBreakBefore": False, "text": ""},
        {"lineBreakBefore": True, "text": "This code at line "},
        {"lineBreakBefore": False, "text": "3"},
        {"lineBreakBefore": True, "text": "has the problem reported: \u68c0\u6d4b"},
    ]
    tree = json.dumps({"node": {"children": [{"children": pieces, "type": 1}]}}, separators=",:")
    text = '<errors path="a.h">\nThis code at line 3\nhas the problem reported: 检测'
    assert tree_text(tree) == text
    assert tree_text(tree[: tree.index("This code")]) == '<errors path="a.h">\n'
