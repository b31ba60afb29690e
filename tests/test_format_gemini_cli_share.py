"""Gemini CLI's ``/chat share FILE.md`` export: a real one loads by detection as the contents it
was written from (texts, calls and their responses), what the CLI wrote itself is not read as
typed, and a fence that does not parse stays text with a line in the report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import FIXTURES_DIR

from contextwarden.errors import FormatError
from contextwarden.eval.replay import replay
from contextwarden.formats import detect_format, load
from contextwarden.model import ToolUseBlock, UnknownBlock
from contextwarden.rules import validate
from contextwarden.summarizers.typed import typed_texts

EXPORT = FIXTURES_DIR / "gemini-cli-share/jimpelton__trackgen__research-chat1.md"
FENCED = re.compile(r"\*\*Tool (Command|Response)\*\*:\n```json\n(.*?\n\})\n```", re.DOTALL)
SMALL_WINDOW = 700
"""Below the ~1,100 tokens of the trimmed export, above its largest message."""
ICON_FIRST = FIXTURES_DIR / "gemini-cli-share/jaymcortest__unidoku__rut.md"
"""An export in the layout Gemini CLI wrote from v0.7.0 to v0.20: ``🧑‍💻 ## USER`` /
``✨ ## MODEL``, the icon before the role."""
ICON_FIRST_WINDOW = 1_200
"""Below the ~2,100 tokens of the trimmed icon-first export, above its largest message (~650)."""


def _fenced(kind: str) -> list[dict[str, object]]:
    text = EXPORT.read_text(encoding="utf-8")
    return [json.loads(body) for k, body in FENCED.findall(text) if k == kind]


@pytest.mark.parametrize(
    ("export", "sections", "turns"),
    [(EXPORT, 9, 4), (ICON_FIRST, 11, 5)],
    ids=["icon-last", "icon-first"],
)
def test_the_real_export_is_detected_and_loads_with_no_rule_broken(
    export: Path, sections: int, turns: int
) -> None:
    assert detect_format(export) == "gemini-cli-share"
    history = load(export)
    assert validate(history.messages) == []
    report = history.source
    assert report is not None and report.issues == [] and report.records == sections
    assert [m.role for m in history.messages] == ["user", "assistant"] * turns


def test_every_tool_command_is_a_call_answered_by_its_response() -> None:
    history = load(EXPORT)
    uses = [b for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)]
    commands = _fenced("Command")
    assert [(u.name, dict(u.input)) for u in uses] == [(c["name"], c["args"]) for c in commands]
    results = [r for m in history.messages for r in m.tool_results]
    assert [r.tool_use_id for r in results] == [u.id for u in uses]
    outputs = [r["response"]["output"] for r in _fenced("Response")]  # type: ignore[index]
    assert [r.content for r in results] == outputs
    assert not any(r.is_error for r in results)


def test_what_the_cli_wrote_itself_is_not_read_as_typed() -> None:
    first, *_ = load(EXPORT).messages
    assert list(typed_texts(first)) == [
        "In @smooth.py function create_smooth_path what does the derivative of the curve represent?"
    ]
    assert first.meta.extra["injected_texts"][0].startswith("This is the Gemini CLI.")


def test_an_error_response_marks_its_result_an_error(tmp_path: Path) -> None:
    text = EXPORT.read_text(encoding="utf-8")
    response = _fenced("Response")[0]
    failed = {**response, "response": {"error": "File not found: smooth2.py"}}
    old = json.dumps(response, indent=2, ensure_ascii=False)
    path = tmp_path / "chat.md"
    path.write_text(text.replace(old, json.dumps(failed, indent=2)), encoding="utf-8")
    first = next(r for m in load(path).messages for r in m.tool_results)
    assert (first.is_error, first.content) == (True, "File not found: smooth2.py")


def test_a_fence_that_does_not_parse_stays_text_and_is_reported(tmp_path: Path) -> None:
    text = EXPORT.read_text(encoding="utf-8")
    broken = text.replace('"file_path": "vehicles.py"', '"file_path": vehicles.py', 1)
    path = tmp_path / "chat.md"
    path.write_text(broken, encoding="utf-8")
    history = load(path)
    assert history.source is not None
    (issue,) = history.source.issues
    assert "does not parse" in issue.message and issue.line == 67
    assert "vehicles.py" in history.messages[3].text
    assert validate(history.messages) == []  # the call it held answered as not run


def test_a_heading_inside_a_text_is_not_a_section(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\n## USER 🧑‍💻\n\nhello\n", encoding="utf-8")
    with pytest.raises(FormatError, match="could not tell the format"):
        detect_format(path)


@pytest.mark.parametrize(
    ("export", "window"),
    [(EXPORT, SMALL_WINDOW), (ICON_FIRST, ICON_FIRST_WINDOW)],
    ids=["icon-last", "icon-first"],
)
def test_a_replay_in_a_small_window_compacts_it_validly(export: Path, window: int) -> None:
    run = replay(load(export), ("ladder",), window=window).runs["ladder"]
    assert run.compactions and run.invalid_requests == 0 and run.over_window == 0


def test_a_section_repeating_loaded_responses_is_reported_not_loaded_twice(
    tmp_path: Path,
) -> None:
    """Gemini CLI can send a completed call's response again: its export then shows a second
    section of the same responses (same ids, same payloads) that answers no call."""
    text = EXPORT.read_text(encoding="utf-8")
    sections = text.split("\n\n---\n\n")
    at = next(n for n, s in enumerate(sections) if "**Tool Response**:" in s)
    repeated = [*sections[: at + 1], sections[at], *sections[at + 1 :]]
    path = tmp_path / "chat.md"
    path.write_text("\n\n---\n\n".join(repeated), encoding="utf-8")
    history, original = load(path), load(EXPORT)
    assert [m.content for m in history.messages] == [m.content for m in original.messages]
    assert validate(history.messages) == []
    assert history.source is not None
    (issue,) = history.source.issues
    assert "word for word" in issue.message and "not loaded twice" in issue.message
    first_line = text[: text.index(sections[at])].count("\n") + 1
    assert f"from line {first_line}" in issue.message and issue.line != first_line


def test_a_response_with_a_new_payload_under_a_known_id_is_still_loaded(tmp_path: Path) -> None:
    """Only a word-for-word repeat is set aside: anything new under a known id is kept."""
    text = EXPORT.read_text(encoding="utf-8")
    sections = text.split("\n\n---\n\n")
    at = next(n for n, s in enumerate(sections) if "**Tool Response**:" in s)
    response = _fenced("Response")[0]
    changed = {**response, "response": {"output": "a different answer"}}
    old = json.dumps(response, indent=2, ensure_ascii=False)
    second = sections[at].replace(old, json.dumps(changed, indent=2, ensure_ascii=False))
    path = tmp_path / "chat.md"
    path.write_text("\n\n---\n\n".join([*sections[: at + 1], second, *sections[at + 1 :]]))
    history = load(path)
    assert history.source is not None
    (issue,) = history.source.issues  # the section's other response, an exact repeat
    assert issue.message.startswith("tool response ") and "repeats the one" in issue.message
    (answered,) = [m for m in history.messages if "a different answer" in m.text]
    assert answered.tool_results  # kept as text beside the results it came after
    assert validate(history.messages) == []


THOUGHTS = (
    "**Reading the Spline** I'm checking what the path returns.**Choosing** Positions come first."
)
"""Two thought summaries as a resumed session's model turn holds them (``**<subject>**
<description>`` text parts, the CLI's ``sessionUtils``) and the export writes them: glued."""


def _with_thoughts(tmp_path: Path, opening: str) -> tuple[Path, int]:
    """The export with ``THOUGHTS`` glued before the model section that opens with ``opening``;
    the path and the index of the section's message."""
    text = EXPORT.read_text(encoding="utf-8")
    heading = "## MODEL ✨\n\n"
    at = text.index(heading + opening) + len(heading)
    path = tmp_path / "chat.md"
    path.write_text(text[:at] + THOUGHTS + text[at:], encoding="utf-8")
    index = text[:at].count("## MODEL ✨") * 2 - 1
    return path, index


@pytest.mark.parametrize("opening", ["For simulating drone tracks", "**Tool Command**:"])
def test_thought_summaries_are_thought_parts_and_the_reply_stays_the_reply(
    tmp_path: Path, opening: str
) -> None:
    path, index = _with_thoughts(tmp_path, opening)
    history, original = load(path), load(EXPORT)
    message = history.messages[index]
    thoughts = [b.raw for b in message.content if isinstance(b, UnknownBlock)]
    assert thoughts == [
        {"text": "**Reading the Spline** I'm checking what the path returns.", "thought": True},
        {"text": "**Choosing** Positions come first.", "thought": True},
    ]
    rest = [b for b in message.content if not isinstance(b, UnknownBlock)]
    assert rest == list(original.messages[index].content)
    assert history.source is not None and history.source.issues == []
    line = EXPORT.read_text(encoding="utf-8").split(opening)[0].count("\n") - 1
    assert history.source.metadata["thought_sections"] == [line]
    assert validate(history.messages) == []


def test_a_reply_opening_in_bold_with_no_call_after_it_stays_text(tmp_path: Path) -> None:
    """With no summaries glued anywhere in the export, a reply opening in bold is the reply."""
    text = EXPORT.read_text(encoding="utf-8")
    path = tmp_path / "chat.md"
    bold = "**Velocity** is the derivative of the position."
    path.write_text(text.replace("For simulating drone tracks", bold + " For", 1), "utf-8")
    history = load(path)
    assert bold in history.messages[5].text
    assert history.source is not None and "thought_sections" not in history.source.metadata


def test_a_whole_section_in_bold_with_no_call_stays_text_beside_glued_summaries(
    tmp_path: Path,
) -> None:
    sections = ["hi", THOUGHTS + "Done.", "and?", "**Plan** Read the spline first."]
    path = tmp_path / "chat.md"
    path.write_text(
        "\n\n---\n\n".join(
            f"## {'USER 🧑‍💻' if n % 2 == 0 else 'MODEL ✨'}\n\n{text}"
            for n, text in enumerate(sections)
        ),
        encoding="utf-8",
    )
    history = load(path)
    assert [b.type for b in history.messages[1].content] == ["unknown", "unknown", "text"]
    assert history.messages[1].text == "Done."
    assert history.messages[3].text == sections[3]
    assert history.source is not None and history.source.metadata["thought_sections"] == [7]


def _masked(response: dict[str, object], saved: str) -> dict[str, object]:
    """``response`` as the CLI's tool-output masking leaves it in its history."""
    output = response["response"]["output"]  # type: ignore[index]
    snippet = f"{output[:40]}\n\nOutput too large. Full output available at: {saved}"
    return {
        **response,
        "response": {"output": f"<tool_output_masked>\n{snippet}\n</tool_output_masked>"},
    }


@pytest.mark.parametrize("masked_first", [True, False])
def test_a_response_sent_again_with_one_copy_masked_answers_its_call_once_whole(
    tmp_path: Path, masked_first: bool
) -> None:
    text = EXPORT.read_text(encoding="utf-8")
    sections = text.split("\n\n---\n\n")
    at = next(n for n, s in enumerate(sections) if "**Tool Response**:" in s)
    response = _fenced("Response")[0]
    old = json.dumps(response, indent=2, ensure_ascii=False)
    masked = sections[at].replace(old, json.dumps(_masked(response, "/tmp/a.txt"), indent=2))
    pair = [masked, sections[at]] if masked_first else [sections[at], masked]
    path = tmp_path / "chat.md"
    path.write_text("\n\n---\n\n".join([*sections[:at], *pair, *sections[at + 1 :]]), "utf-8")
    history, original = load(path), load(EXPORT)
    assert [m.content for m in history.messages] == [m.content for m in original.messages]
    report = history.source
    assert report is not None
    masking = [i for i in report.issues if "<tool_output_masked>" in i.message]
    assert len(masking) == 1 and "not loaded twice" in masking[0].message
    (kept,) = report.metadata["masked_responses"][response["id"]]
    assert kept.startswith("<tool_output_masked>") and "/tmp/a.txt" in kept


def test_two_masked_copies_answer_the_call_with_the_first(tmp_path: Path) -> None:
    text = EXPORT.read_text(encoding="utf-8")
    sections = text.split("\n\n---\n\n")
    at = next(n for n, s in enumerate(sections) if "**Tool Response**:" in s)
    response = _fenced("Response")[0]
    old = json.dumps(response, indent=2, ensure_ascii=False)
    first, again = (
        sections[at].replace(old, json.dumps(_masked(response, f"/tmp/{n}.txt"), indent=2))
        for n in (1, 2)
    )
    path = tmp_path / "chat.md"
    path.write_text(
        "\n\n---\n\n".join([*sections[:at], first, again, *sections[at + 1 :]]), "utf-8"
    )
    history = load(path)
    (result, *_) = [r for m in history.messages for r in m.tool_results]
    assert "/tmp/1.txt" in str(result.content) and "/tmp/2.txt" not in history.messages[4].text
    assert validate(history.messages) == []


ICON_LAST = {"🧑‍💻 ## USER": "## USER 🧑‍💻", "✨ ## MODEL": "## MODEL ✨"}
SEPARATOR = "\n\n---\n\n"


def _written(tmp_path: Path, text: str, name: str = "chat.md") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))  # as given: no newline translation
    return path


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_an_icon_first_exports_setup_is_the_clis_own() -> None:
    first = load(ICON_FIRST).messages[0]
    assert first.meta.extra["lines"] == (1, 41)  # the setup and the next user section, merged
    assert first.meta.extra["injected_texts"][0].startswith("This is the Gemini CLI.")


def test_icon_first_tool_commands_are_calls_answered_by_their_responses() -> None:
    history = load(ICON_FIRST)
    text = ICON_FIRST.read_text(encoding="utf-8")
    fenced = [(kind, json.loads(body)) for kind, body in FENCED.findall(text)]
    uses = [b for m in history.messages for b in m.content if isinstance(b, ToolUseBlock)]
    commands = [value for kind, value in fenced if kind == "Command"]
    assert len(uses) == 2
    assert [(u.name, dict(u.input)) for u in uses] == [(c["name"], c["args"]) for c in commands]
    results = [r for m in history.messages for r in m.tool_results]
    assert [r.tool_use_id for r in results] == [u.id for u in uses]
    responses = [value["response"]["output"] for kind, value in fenced if kind == "Response"]
    assert [r.content for r in results] == responses and not any(r.is_error for r in results)


def test_every_text_of_an_icon_first_export_is_a_text_of_its_messages_in_order() -> None:
    text = ICON_FIRST.read_text(encoding="utf-8")
    expected = []
    for section in text.split(SEPARATOR):
        body = section.split("\n", 2)[2]  # under the heading and its blank line
        expected += [piece for piece in FENCED.split(body)[::3] if piece.strip()]
    texts = [b.text for m in load(ICON_FIRST).messages for b in m.content if b.type == "text"]
    assert texts == expected


def test_the_two_layouts_of_one_export_load_alike(tmp_path: Path) -> None:
    """A layout is its heading and nothing else: the same export with the icons moved to the
    end of the heading, as v0.21.0 writes it, loads to the same messages."""
    text = ICON_FIRST.read_text(encoding="utf-8")
    for old, new in ICON_LAST.items():
        text = text.replace(old, new)
    icon_last = load(_written(tmp_path, text))
    assert [(m.role, m.content) for m in icon_last.messages] == [
        (m.role, m.content) for m in load(ICON_FIRST).messages
    ]


@pytest.mark.parametrize(
    ("old", "new"),
    [("🧑‍💻 ##", "🧑💻 ##"), ("\n", "\r\n"), (" ## MODEL\n", " ## MODEL \n")],
    ids=["icon-without-joiner", "crlf", "trailing-space"],
)
def test_an_icon_first_heading_is_read_in_its_variants(tmp_path: Path, old: str, new: str) -> None:
    path = _written(tmp_path, ICON_FIRST.read_text(encoding="utf-8").replace(old, new))
    assert detect_format(path) == "gemini-cli-share"
    history = load(path)
    assert history.source is not None and history.source.issues == []
    assert [m.role for m in history.messages] == ["user", "assistant"] * 5


def test_a_damaged_icon_first_export_loads_with_each_problem_reported_by_line(
    tmp_path: Path,
) -> None:
    text = ICON_FIRST.read_text(encoding="utf-8")
    reply = "✨ ## MODEL\n\nThe deployment script has been corrected."
    damaged = text.replace(reply, "✨ ## MODEL\n\n" + SEPARATOR + reply, 1).replace(
        '"cp -r pkg dist/"', '"cp -r pkg dist/', 1
    )
    path = _written(tmp_path, damaged)
    history = load(path)
    assert history.source is not None
    fence, empty = history.source.issues
    assert "Tool Command JSON does not parse" in fence.message
    assert fence.line == _line_of(damaged, "deploy.yml` file.**Tool Command**")
    assert "holds no text and no tool part" in empty.message
    assert empty.line == _line_of(damaged, "✨ ## MODEL\n\n" + SEPARATOR)
    assert '"new_string": "cp -r pkg dist/' in history.messages[3].text  # kept as text
    assert "Successfully modified file" in history.messages[4].text  # its response, as text
    assert validate(history.messages) == []


def test_text_before_the_first_heading_is_kept_aside_and_the_export_still_loads(
    tmp_path: Path,
) -> None:
    """An export pasted into a write-up: the notes before it are not a section, the first
    section (the setup here) is still one, and the notes are kept in the report."""
    notes = "# Fixing the deploy\n\nThe chat, as Gemini CLI shared it:\n\n"
    path = _written(tmp_path, notes + ICON_FIRST.read_text(encoding="utf-8"))
    history, original = load(path, "gemini-cli-share"), load(ICON_FIRST)
    assert [m.content for m in history.messages] == [m.content for m in original.messages]
    report = history.source
    assert report is not None and report.metadata["preamble"] == notes
    (issue,) = report.issues
    assert issue.line == 1 and "before the first section" in issue.message
    assert history.messages[0].meta.extra["lines"] == (5, 45)


def test_qwen_codes_setup_context_in_an_icon_first_export_is_not_read_as_typed(
    tmp_path: Path,
) -> None:
    """Qwen Code, Gemini CLI's fork, shares in the icon-first layout, its setup naming itself."""
    text = ICON_FIRST.read_text(encoding="utf-8").replace("the Gemini CLI.", "the Qwen Code.", 1)
    first = load(_written(tmp_path, text)).messages[0]
    assert first.meta.extra["injected_texts"][0].startswith("This is the Qwen Code.")
    assert not any(t.startswith("This is the Qwen Code.") for t in typed_texts(first))
