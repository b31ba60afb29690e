"""Files a transcript without tool calls names in the assistant's code spans are its file record."""

from __future__ import annotations

from contextwarden.compaction.cuts import SUMMARY_KEY
from contextwarden.compaction.summarize import CONTINUATION_NOTE
from contextwarden.model import (
    FrozenDict,
    Message,
    MessageMeta,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.structured import StructuredSummarizer


def _prose_session() -> list[Message]:
    """An export that wrote the agent's steps as prose: no call, only what it said it did."""
    return [
        Message.user("Rename the widget's settings key."),
        Message.assistant(
            "Let me update `lib/widgets/Panel.vue` first:\n\n```\nexport default {}\n```\n"
            "Then `settings.toml` keeps the new key; `os` and `run()` are no files."
        ),
        Message.user("Also the changelog."),
        Message.assistant("Done: `CHANGES.rst` lists it, and `lib/widgets/Panel.vue` again."),
    ]


def test_a_session_without_calls_lists_the_files_its_assistant_names_one_with_calls_not() -> None:
    facts = extract_facts(_prose_session())
    assert [(f.path, f.operations) for f in facts.files] == [
        ("lib/widgets/Panel.vue", ("named", "named")),
        ("settings.toml", ("named",)),
        ("CHANGES.rst", ("named",)),
    ]
    call = ToolUseBlock("t1", "Read", {"file_path": "/w/src/main.go"})
    messages = [
        Message.user("Look at main."),
        Message.assistant([TextBlock("I read it; `notes.txt` can wait."), call]),
        Message.user([ToolResultBlock("t1", "package main")]),
    ]
    assert [f.path for f in extract_facts(messages).files] == ["/w/src/main.go"]


def test_the_named_files_are_lines_of_the_summary_and_survive_a_resummary() -> None:
    first = StructuredSummarizer().summarize(_prose_session()).text
    section = first.split("3. Files and Code Sections:")[1].split("4. Errors")[0]
    assert "`lib/widgets/Panel.vue`" in section and "`CHANGES.rst`" in section
    earlier = Message(
        "user",
        (TextBlock(f"{CONTINUATION_NOTE}\n\n<summary>\n{first}\n</summary>"),),
        MessageMeta(extra=FrozenDict({SUMMARY_KEY: True})),
    )
    again = StructuredSummarizer().summarize(
        [earlier, Message.assistant("Next I edit `docs/intro.md`.")]
    )
    files = again.text.split("3. Files and Code Sections:")[1].split("4. Errors")[0]
    for path in ("lib/widgets/Panel.vue", "settings.toml", "CHANGES.rst", "docs/intro.md"):
        assert f"`{path}`" in files


def test_an_attribute_a_call_or_a_host_spelled_like_a_file_is_no_file() -> None:
    """Without a folder, only a file's extension (or a file every project of its kind has) says
    a dotted word names a file: ``self.name`` is an attribute, ``Math.sin`` a call."""
    said = (
        "Set `self.name` from `process.env`, call `Math.sin` and `jest.mock`, see "
        "`api.example.com` and `os.path.join`; the code is in `widget_panel.py`, `App.tsx`, "
        "`Cod50100.Setup.al` and `go.mod`, the log in `audit.log`, and `src/odd.thing` too."
    )
    facts = extract_facts([Message.user("Fix it."), Message.assistant(said)])
    assert [f.path for f in facts.files] == [
        "widget_panel.py",
        "App.tsx",
        "Cod50100.Setup.al",
        "go.mod",
        "audit.log",
        "src/odd.thing",
    ]
