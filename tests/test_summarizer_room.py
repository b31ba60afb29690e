"""What the summary spends its room on: one line per file whatever its spelling, no copy of a
user message that section 6 holds whole kept over a line said once, no finding that a kept
answer already quotes, and no edit said to change "+0 -0 lines" when its size is unknown."""

from __future__ import annotations

from contextwarden.compaction.summarize import CONTINUATION_NOTE
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers import StructuredSummarizer, extract_facts, spellings
from contextwarden.summarizers.carry import FINDING_PREFIX
from contextwarden.summarizers.sections import head_tail, held_in
from contextwarden.summarizers.spellings import (
    same_files,
    slash_folds,
    slash_spelling,
    slashed_tails,
)
from contextwarden.summarizers.tools import file_ops
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()
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
    # the working folder's own spelling is on the chain: the bare relative one still folds
    assert same_files([RELATIVE, "./" + RELATIVE, ABSOLUTE]) == {RELATIVE: ABSOLUTE}


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


def test_a_copy_of_a_request_section_six_holds_whole_goes_before_commands() -> None:
    ask = (
        "Check that the worker builds in every environment with a dry run, then review the "
        "OIDC issuer change: the policy must still reject tokens from issuers it does not "
        "name, and the Cloud Run service must keep its own IAM binding."
    )
    messages = [Message.user(ask)]
    for n in range(30):
        use = ToolUseBlock(f"c{n}", "Bash", {"command": f"npx wrangler deploy --env e{n}"})
        messages += [
            Message.assistant([TextBlock(f"Dry run {n}."), use]),
            Message.user([ToolResultBlock(f"c{n}", "Total Upload: 41.2 KiB")]),
        ]
    messages.append(Message.assistant("All thirty environments build."))
    full = StructuredSummarizer().summarize(messages)
    assert "  " + ask in full.sections[1]
    tight = StructuredSummarizer(budget_tokens=COUNTER.count_text(full.text) - 5)
    summary = tight.summarize(messages)
    assert "request excerpts left out" in summary.sections[1]
    assert "commands left out" not in summary.sections[5]
    assert ask in summary.sections[6]  # what was dropped is a copy


def test_held_in_reads_every_piece_of_a_shortened_copy() -> None:
    text = "The head of a long message. " + "Filler words go here. " * 200 + "Its tail."
    copy = head_tail(text, 60, COUNTER)
    assert copy != text and held_in(copy, text)
    assert not held_in(copy, head_tail(text, 30, COUNTER))  # a shorter quote lacks some


def test_a_finding_a_kept_answer_quotes_is_not_listed_again() -> None:
    answer = "The bucket policy allows `s3:GetObject` from 2 roles only, not from the CDN."
    messages = [
        Message.user("Why does the CDN get 403 on the assets?"),
        Message.assistant(answer),
        Message.user("Then add the CDN role to it."),
        Message.assistant("Adding the role now."),
    ]
    summary = StructuredSummarizer().summarize(messages)
    assert answer in summary.sections[5]  # in the answers' excerpts
    assert f"{FINDING_PREFIX}{answer}" not in summary.sections[5]


# How a Cursor session on Windows (SpecStory export of Bucur21/PaperBites, set 12 of
# benchmarks/fresh_probes12, trimmed) names one file: its tools by the Windows path, the
# assistant's prose by the project's forward-slash spelling, in a Markdown link.
WINDOWS = "d:\\PaperBites\\apps\\web\\app\\feed-data.ts"
SLASHED = "apps/web/app/feed-data.ts"
PROSE = f"- [`{SLASHED}`]({SLASHED}) - `loadFeedPage`, shared `nextCursor` rules"


def test_the_prose_spelling_of_a_windows_path_is_found() -> None:
    tails = slashed_tails(PROSE + "\nsee ../apps/web/app/papers/[slug]/page.tsx")
    assert slash_spelling(WINDOWS, tails) == SLASHED
    route = "d:\\PaperBites\\apps\\web\\app\\papers\\[slug]\\page.tsx"
    assert slash_spelling(route, tails) == "apps/web/app/papers/[slug]/page.tsx"
    assert slash_spelling("d:\\PaperBites\\apps\\web\\lib\\other.ts", tails) == ""
    assert slash_spelling(ABSOLUTE, slashed_tails(ABSOLUTE)) == ""  # not a Windows path


def test_a_windows_path_folds_its_slashed_spellings_when_only_it_ends_so() -> None:
    grep = "d:/PaperBites/apps/web/app/feed-data.ts"  # Grep's own spelling of the same file
    assert slash_folds([WINDOWS, grep, SLASHED, "feed-data.ts"]) == {
        grep: WINDOWS,
        SLASHED: WINDOWS,
    }
    other = "e:\\copy\\apps\\web\\app\\feed-data.ts"
    assert slash_folds([WINDOWS, other, SLASHED]) == {}  # which of the two is unknown


def windows_session() -> list[Message]:
    read = ToolUseBlock("r", "read_file_v2", {"target_file": WINDOWS})
    return [
        Message.user("Fix the feed's pagination."),
        Message.assistant([read]),
        Message.user([ToolResultBlock("r", "export function loadFeedPage() {}\n")]),
        Message.assistant(f"Changed:\n{PROSE}"),
    ]


def test_a_windows_file_is_listed_with_the_spelling_the_conversation_writes() -> None:
    (file,) = extract_facts(windows_session()).files
    assert (file.path, file.alias) == (WINDOWS, SLASHED)
    section = StructuredSummarizer().summarize(windows_session()).sections[3]
    assert section.startswith(f"- `{WINDOWS}` — also `{SLASHED}`; read")


def test_the_spelling_a_later_call_writes_is_the_files_spelling_too() -> None:
    # Copilot CLI on Windows: ``view`` names the file by its Windows path, and the agent's
    # own later command (or a subagent's prompt) writes it with ``/``, never its prose.
    read = ToolUseBlock("r", "view", {"path": WINDOWS})
    run = ToolUseBlock("p", "powershell", {"command": f"python -c \"open(r'{SLASHED}')\""})
    session = [
        Message.user("Fix the feed's pagination."),
        Message.assistant([read]),
        Message.user([ToolResultBlock("r", "export function loadFeedPage() {}\n")]),
        Message.assistant([run]),
        Message.user([ToolResultBlock("p", "ok\n")]),
    ]
    (file,) = extract_facts(session).files
    assert (file.path, file.alias) == (WINDOWS, SLASHED)


def test_the_spelling_is_carried_by_the_next_summary_without_the_prose() -> None:
    first = StructuredSummarizer().summarize(windows_session()).text
    later = [
        Message.user(f"{CONTINUATION_NOTE}\n\n<summary>\n{first}\n</summary>"),
        Message.assistant("Continuing."),
        Message.user("and the tests?"),
        Message.assistant("They pass."),
    ]
    (file,) = extract_facts(later).files
    assert (file.path, file.alias) == (WINDOWS, SLASHED)
    assert (file.operations, file.detail) == (("read",), "1 line")


def test_a_long_word_or_an_overlong_path_is_read_in_one_pass() -> None:
    # A pasted base64 blob is one long run of path characters: read once, not once per start.
    assert slashed_tails("A" * 200_000 + " see web/a.ts") == {"web/a.ts"}
    assert slashed_tails("a/" * 3_000) == frozenset()  # past PATH_MAX: not a path


def test_two_spellings_an_earlier_summary_listed_apart_are_one_file_counted_once() -> None:
    listed = (
        "3. Files and Code Sections:\n"
        f"- `{WINDOWS}` — read (3)\n"
        "- `d:/PaperBites/apps/web/app/feed-data.ts` — searched\n\n"
        "4. Errors and Fixes:\n(none)\n"
    )
    later = [
        Message.user(f"{CONTINUATION_NOTE}\n\n<summary>\n{listed}\n</summary>"),
        Message.assistant("Continuing."),
    ]
    (file,) = extract_facts(later).files
    assert file.operations == ("read", "read", "read", "searched")
    line = StructuredSummarizer().summarize(later).sections[3].split("\n")[0]
    assert line.endswith(
        "— also `d:/PaperBites/apps/web/app/feed-data.ts`; read (3), searched; last: searched"
    )


def test_the_paths_of_prose_are_found_word_by_word_as_in_the_whole() -> None:
    """Only the words holding a ``/`` are searched for paths: the same paths as searching the
    whole prose, whatever white space (a tab, a no-break space, an ideographic space) is
    between them."""
    prose = (
        PROSE
        + "\tsee [the page](../apps/web/app/[slug]/page.tsx),\u00a0`src/a.ts`;\u3000and"
        + " <docs/guide.md> or (/etc/hosts) | tests/*.py 'lib/x.js' \"pkg/a.go\"\n"
    )
    whole: set[str] = set()
    for found in spellings._SLASHED.findall(prose):
        parts = found.split("/")
        whole.update("/".join(parts[i:]) for i in range(len(parts) - 1) if parts[i])
    assert slashed_tails(prose) == whole
    assert {"apps/web/app/[slug]/page.tsx", "src/a.ts", "docs/guide.md"} <= whole
