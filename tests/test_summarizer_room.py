"""What the summary spends its room on: one line per file whatever its spelling, and no edit
said to change "+0 -0 lines" when its size is unknown."""

from __future__ import annotations

from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers import StructuredSummarizer, extract_facts
from contextwarden.summarizers.spellings import same_files
from contextwarden.summarizers.tools import file_ops

# The layout of the paths a SpecStory CLI session of specstoryai/getspecstory (Apache-2.0, set 9
# of benchmarks/fresh_probes9) names one Go file by: relative, then from the root. The home
# folder is made up (the sessions' own paths name a person).
ROOT = "/home/dev/src/specstory-cli"
RELATIVE = "pkg/spi/provider.go"
ABSOLUTE = f"{ROOT}/{RELATIVE}"


def test_a_relative_path_is_folded_into_the_one_longer_path_it_ends() -> None:
    folded = same_files([RELATIVE, ABSOLUTE, "package.json", f"{ROOT}/package.json"])
    assert folded == {RELATIVE: ABSOLUTE}  # a bare name may be any folder's: both stay
    windows = same_files(["src\\db.ts", "d:\\PaperBites\\src\\db.ts"])
    assert windows == {"src\\db.ts": "d:\\PaperBites\\src\\db.ts"}


def test_a_path_two_folders_end_with_is_not_folded() -> None:
    other = f"/home/dev/src/other/{RELATIVE}"
    assert same_files([RELATIVE, ABSOLUTE, other]) == {}
    # a longer path that is the other's spelling under a further folder is one chain
    chain = same_files([RELATIVE, f"specstory-cli/{RELATIVE}", ABSOLUTE])
    assert chain == {RELATIVE: ABSOLUTE, f"specstory-cli/{RELATIVE}": ABSOLUTE}
    assert same_files(["./" + RELATIVE, ABSOLUTE]) == {}  # the listed path would not hold it


def read_then_edit() -> list[Message]:
    read = ToolUseBlock("r", "Read", {"file_path": RELATIVE})
    edit = ToolUseBlock(
        "e", "Edit", {"file_path": ABSOLUTE, "old_string": "a", "new_string": "b\nc"}
    )
    return [
        Message.user("Rename the provider's ID field."),
        Message.assistant([read]),
        Message.user([ToolResultBlock("r", "package spi\n")]),
        Message.assistant([edit]),
        Message.user([ToolResultBlock("e", "ok")]),
        Message.assistant("Renamed."),
    ]


def test_the_spellings_of_one_file_are_one_fact_with_every_operation_in_order() -> None:
    (file,) = extract_facts(read_then_edit()).files
    assert (file.path, file.operations, file.detail) == (
        ABSOLUTE,
        ("read", "edited"),
        "+2 -1 lines",
    )
    section = StructuredSummarizer().summarize(read_then_edit()).sections[3]
    assert section.count(RELATIVE) == 1  # inside the one line the absolute path opens


def test_an_edit_naming_no_text_has_no_size() -> None:
    (op,) = file_ops(ToolUseBlock("e", "Edit", {"file_path": "web/app.tsx"}))
    assert (op.operation, op.detail) == ("edited", "")
