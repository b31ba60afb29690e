"""The tool steps of SpecStory's early-2025 Cursor layout are read from the extension's own
wording, bubble by bubble, and nothing else is: files read, commands and their failures reach
the summary, and prose that shows a command or says "Read file" stays prose.

The sample is a real session (twardoch/nyord-vpn, MIT), trimmed: see ``tests/data/SOURCES.md``.
"""

from __future__ import annotations

from pathlib import Path

from contextwarden.formats import load
from contextwarden.formats.specstory_bubbles import bubbled, read
from contextwarden.formats.specstory_steps import Step
from contextwarden.model import Message, TextBlock
from contextwarden.rules import validate
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.textcalls import as_native_calls

EARLY = (
    Path(__file__).parent
    / "data"
    / "specstory"
    / "twardoch__nyord-vpn__2025-02-23_04-09-executing-python-vpn-connection-command.md"
)
COMMAND = (
    'source .venv/bin/activate && python -c "import nyord_vpn; vpn = nyord_vpn.Client(); '
    "vpn.connect('de'); print(vpn.is_protected())\""
)


def test_the_extensions_steps_are_read_as_cursors_calls() -> None:
    messages = list(load(EARLY).messages)
    assert validate(messages) == []
    native = as_native_calls(messages)
    uses = [u for m in native for u in m.tool_uses]
    assert [(u.name, dict(u.input)) for u in uses] == [
        (
            "run_terminal_cmd",
            {"command": "python -m venv .venv && source .venv/bin/activate && pip install -e ."},
        ),
        ("run_terminal_cmd", {"command": COMMAND}),
        ("read_file", {"target_file": "src/nyord_vpn/_templates.py"}),
        ("read_file", {"target_file": "src/nyord_vpn/client.py"}),
    ]
    results = [r for m in native for r in m.tool_results]
    assert results[1].text.splitlines()[-2] == (
        "AttributeError: module 'nyord_vpn' has no attribute 'Client'"
    )
    assert results[2].text == ""  # the export shows no file's contents
    assert list(messages) == list(load(EARLY).messages)  # the loaded session is unchanged


def test_the_prose_around_the_steps_stays_prose_without_the_layout_lines() -> None:
    native = as_native_calls(list(load(EARLY).messages))
    texts = [b.text for b in native[3].content if isinstance(b, TextBlock)]
    # a timed-out call, the edits (no file named) and a command the prose suggests stay text
    assert "Tool call timed out after 5000ms" in texts[0]
    assert texts[-1].startswith("Wait, but I see the issue! The server selection API call")
    assert texts[-1].endswith("(like `pl343.nordvpn.com`).")
    assert "```bash\nsudo nyord-vpn go pl --verbose\n```" in texts[-1]
    assert not any(t.strip() in ("---", "_****_") for t in texts)


def test_the_summary_has_the_files_read_and_the_failed_command() -> None:
    facts = extract_facts(list(load(EARLY).messages))
    assert [f.path for f in facts.files] == [
        "src/nyord_vpn/_templates.py",
        "src/nyord_vpn/client.py",
    ]
    [error] = facts.errors
    assert error.excerpt == "AttributeError: module 'nyord_vpn' has no attribute 'Client'"
    assert [c.failed for c in facts.commands] == [False, True]


def test_only_a_whole_bubble_of_the_extensions_wording_is_a_step() -> None:
    prose = (
        "I'll use Read file: src/app.py next.\n\n---\n\n_****_\n\n"
        "Read file: src/app.py\nthen the tests\n\n---\n\n_****_\n\n"
        "Run it:\n```bash\npytest\n```\n\n---\n\n_****_\n\nRead file: undefined"
    )
    assert bubbled(prose) is None
    step = "Let me look.\n\n---\n\n_****_\n\nRead file: src/app.py\n\n---\n\n_****_\n\nDone."
    assert bubbled(step) == [
        "Let me look.",
        Step("read_file", {"target_file": "src/app.py"}, ""),
        "Done.",
    ]


def test_an_edit_whose_fences_do_not_pair_up_ends_at_the_next_bubble() -> None:
    # the diff's context lines hold the file's own fences: its last line opens a fence
    edit = "```diff\n  Run:\n  ```bash\n  make\n  ```\n```"
    text = f"Fixing the docs.\n\n---\n\n_****_\n\n{edit}\n\n---\n\n_****_\n\nRead file: README.md"
    read = Step("read_file", {"target_file": "README.md"}, "")
    assert bubbled(text) == [f"Fixing the docs.\n\n---\n\n_****_\n\n{edit}", read]


def test_a_command_with_no_output_shown_is_a_call_with_an_empty_answer() -> None:
    text = "Staging.\n\n---\n\n_****_\n\n```bash\ngit add .gitignore\n```\n\n---\n\n_****_\n\nOK."
    assert bubbled(text) == [
        "Staging.",
        Step("run_terminal_cmd", {"command": "git add .gitignore"}, ""),
        "OK.",
    ]


# The extension's layout from about May 2025: no ``_****_`` line, the bubbles of a turn only
# ``---`` apart (shape of iterative/dvc's ``.specstory/history``, June 2025; invented text)
UNMARKED = (
    "Let me look at the commit first.\n\n---\n\n"
    "```bash\ngit show 1a2b3c\n```\n\n"
    "```\nroot@box:/app# git show 1a2b3c\nfatal: bad object 1a2b3c\nroot@box:/app#\n```\n\n---\n\n"
    "Could not find file 'pkg/fs/ssh.py' in the workspace.\n\n---\n\n"
    "Model failed to call the tool with correct arguments.\n\n---\n\n"
    "The commit is not in this clone.\n\n---\n\n"
    "Run it:\n```bash\npytest\n```"
)


def test_with_no_bubble_line_the_turn_is_read_at_its_separators() -> None:
    assert bubbled(UNMARKED) == [
        "Let me look at the commit first.",
        Step(
            "run_terminal_cmd",
            {"command": "git show 1a2b3c"},
            "root@box:/app# git show 1a2b3c\nfatal: bad object 1a2b3c\nroot@box:/app#",
        ),
        Step(
            "read_file",
            {"target_file": "pkg/fs/ssh.py"},
            "Could not find file 'pkg/fs/ssh.py' in the workspace.",
            refused=True,
        ),
        Step("unknown", {}, "Model failed to call the tool with correct arguments.", refused=True),
        # prose, and a command the prose only suggests, stay text
        "The commit is not in this clone.\n\n---\n\nRun it:\n```bash\npytest\n```",
    ]


def test_a_separated_turn_with_no_step_is_left_alone() -> None:
    text = "Plan:\n\n---\n\n1. read\n2. fix\n\n---\n\nRun it:\n```bash\npytest\n```"
    assert bubbled(text) is None


def test_cursors_refusals_and_the_unmarked_terminals_failure_reach_the_summary() -> None:
    messages = [
        Message("user", (TextBlock("Why does the commit not show?"),)),
        Message("assistant", (TextBlock(UNMARKED),)),
        Message("user", (TextBlock("Thanks."),)),
    ]
    facts = extract_facts(messages)
    assert [e.excerpt for e in facts.errors] == [
        "fatal: bad object 1a2b3c",
        "Could not find file 'pkg/fs/ssh.py' in the workspace.",
        "Model failed to call the tool with correct arguments.",
    ]
    assert [c.failed for c in facts.commands] == [True]


def test_with_no_bubble_line_an_edit_whose_fences_do_not_pair_up_swallows_no_step() -> None:
    # the diff's context line closes its fence early; the diff's own closing fence then opens
    # one that only the next command's fence closes
    edit = "```diff\n  Run:\n  ```\n+ make test\n```"
    run = "```bash\nmake\n```\n\n```\nok\n```"
    text = f"Fixing the docs.\n\n---\n\n{edit}\n\n---\n\nRead file: README.md\n\n---\n\n{run}"
    assert bubbled(text) == [
        f"Fixing the docs.\n\n---\n\n{edit}",
        Step("read_file", {"target_file": "README.md"}, ""),
        Step("run_terminal_cmd", {"command": "make"}, "ok"),
    ]


# What the extension writes for a ``fetch_rules`` call (Cursor fetching project rules by name):
# each rule's heading, its description in bold, its text in a ``markdown`` fence closed at the
# end of the rule's last line, so a fence inside the rule closes it and leaves the rest as text.
RULES = (
    "### Rule: release-flow\n\n**Use this when cutting a release**\n\n```markdown\n"
    "# Releasing\n\nTag from main:\n```bash\nmake tag\n```\n"
    "- Never push tags by hand, because CI signs them.\n- Ask when in doubt.```\n"
    "### Rule: style\n\n**How code is written here**\n\n```markdown\nUse tabs.```"
)


def test_the_rules_cursor_fetched_are_one_call_up_to_the_next_separator() -> None:
    run = "```bash\nmake\n```\n\n```\nok\n```"
    text = f"Let me fetch the rules first.\n\n---\n\n{RULES}\n\n---\n\n{run}"
    assert bubbled(text) == [
        "Let me fetch the rules first.",
        Step("fetch_rules", {"rule_names": ["release-flow", "style"]}, RULES),
        Step("run_terminal_cmd", {"command": "make"}, "ok"),
    ]


def test_a_rules_text_is_not_the_assistants_decision() -> None:
    turn = f"I'll tag from the release branch, because main is frozen.\n\n---\n\n{RULES}"
    messages = [
        Message("user", (TextBlock("Cut the release."),)),
        Message("assistant", (TextBlock(turn),)),
        Message("user", (TextBlock("Go on."),)),
    ]
    facts = extract_facts(messages)
    said = [sentence for _, sentence in (*facts.decisions, *facts.findings)]
    assert any("because main is frozen" in s for s in said)
    assert not any("CI signs them" in s or "cutting a release" in s for s in said)


def test_a_heading_that_only_looks_like_a_rule_stays_prose() -> None:
    prose = "Done.\n\n---\n\n### Rule: keep it short\n\nThat is what I followed."
    assert bubbled(f"{prose}\n\n---\n\nRead file: a.py") == [
        prose,
        Step("read_file", {"target_file": "a.py"}, ""),
    ]


def test_a_folder_cursor_could_not_list_is_a_failed_list_dir_in_any_language() -> None:
    # Cursor's prefix, then VS Code's message in the editor's language (cursor/cursor#3284)
    english = "Could not resolve URI: Error: Unable to resolve nonexistent file '/w/docs/specs'"
    chinese = "Could not resolve URI: Error: 无法解析不存在的文件 'c:\\w\\docs'"
    text = f"Let me list the specs.\n\n---\n\n{english}\n\n---\n\n{chinese}\n\n---\n\nNo specs yet."
    assert bubbled(text) == [
        "Let me list the specs.",
        Step("list_dir", {"relative_workspace_path": "/w/docs/specs"}, english, refused=True),
        Step("list_dir", {"relative_workspace_path": "c:\\w\\docs"}, chinese, refused=True),
        "No specs yet.",
    ]
    messages = [
        Message("user", (TextBlock("Where are the specs?"),)),
        Message("assistant", (TextBlock(text),)),
        Message("user", (TextBlock("Create them."),)),
    ]
    assert [e.excerpt for e in extract_facts(messages).errors] == [english, chinese]


JULY = (
    Path(__file__).parent
    / "data"
    / "specstory"
    / "twardoch__lmstrix__2025-07-23_14-26Z-add-uv-shebang-line.md"
)


def test_an_edit_shown_as_details_is_read_as_cursors_edit_file() -> None:
    messages = list(load(JULY).messages)
    native = as_native_calls(messages)
    uses = [u for m in native for u in m.tool_uses]
    edits = [(u.name, dict(u.input)) for u in uses if u.name == "edit_file"]
    assert edits == [
        (
            "edit_file",
            {
                "target_file": "test23.py",
                "instructions": (
                    "Add the uv shebang with script dependencies at the top of test23.py"
                ),
            },
        ),
        ("edit_file", {"target_file": "lms_localinfer.py"}),  # "undefined": none given
    ]
    answers = {r.tool_use_id: r for m in native for r in m.tool_results}
    diff = answers[next(u.id for u in uses if u.name == "edit_file")]
    assert diff.text.startswith("**Chunk 1**\nLines added: 6, lines removed: undefined\n")
    assert "+ # this_file: test23.py" in diff.text and not diff.is_error
    edited = {f.path for f in extract_facts(messages).files if "edited" in f.operations}
    assert edited == {"test23.py", "lms_localinfer.py"}
    # the grep searches' <details> stay text: a search's hits are not files it touched
    texts = [b.text for m in native for b in m.content if isinstance(b, TextBlock)]
    assert sum(text.count("Grep search for") for text in texts) == 2


def test_a_details_edit_with_prose_in_its_bubble_stays_prose() -> None:
    edit = [
        "<details><summary>Edit file: a.py</summary>",
        "",
        "**Chunk 1**",
        "Lines added: 1, lines removed: 0",
        "",
        "```diff",
        "+ x = 1",
        "```",
        "",
        "</details>",
    ]
    assert read(edit) == Step(
        "edit_file",
        {"target_file": "a.py"},
        "**Chunk 1**\nLines added: 1, lines removed: 0\n\n```diff\n+ x = 1\n```",
    )
    assert read([*edit, "", "Now the tests pass."]) is None
    assert read(["I opened <details><summary>Edit file: a.py</summary> to look.", *edit]) is None
