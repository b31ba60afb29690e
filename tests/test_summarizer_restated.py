"""A finding restated in a later turn takes the summary's room once (``summarizers.restated``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

import contextwarden
from contextwarden.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from contextwarden.summarizers import StructuredSummarizer
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.findings import chosen
from contextwarden.summarizers.restated import (
    RESTATED_SHARE,
    SCANNED_PIECES,
    Holders,
    repeated_in,
    restated,
    restates,
    said_once,
    words,
)
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()

EARLIER = "LSP noise from the main checkout; the worktree is green, 5/5 `vitest` specs pass."
LATER = "Same LSP noise from the main checkout: the worktree is green and 9/9 `vitest` specs pass."
OTHER = (
    "The clipboard rejection is silent: `copy()` never reports a denied permission, so the"
    " person pastes stale data."
)


def test_a_later_line_with_the_same_words_restates_an_earlier_one() -> None:
    assert restated([EARLIER, OTHER, LATER]) == {0}
    assert restated(["The cache key is `sha256(path)`.", "THE CACHE KEY IS sha256 PATH!"]) == {0}


def test_lines_sharing_less_than_the_share_both_stay() -> None:
    first = "The retry loop waits 30 seconds between attempts on `ECONNRESET`."
    second = "The retry loop gives up after 5 attempts and logs the last error."
    shared = words(first) & words(second)
    assert len(shared) < RESTATED_SHARE * len(words(first))
    assert restated([first, second]) == set()


def test_a_later_shorter_line_does_not_drop_the_earlier_one_saying_more() -> None:
    longer = "The cache key is `sha256(path)`, so renaming a file misses the cache."
    shorter = "The cache key is `sha256(path)`."
    assert restates(words(shorter), words(longer))
    assert restated([longer, shorter]) == set()
    assert restated([shorter, longer]) == {0}


def test_no_words_restate_nothing() -> None:
    assert not restates(frozenset(), words(OTHER))
    assert restated(["", "---"]) == set()


def test_chosen_gives_the_room_of_a_restated_finding_to_another() -> None:
    candidates = [(3, 0, EARLIER), (5, 0, OTHER), (9, 0, LATER)]
    room = sum(COUNTER.count_text(text) + 1 for text in (LATER, OTHER))
    # Both older lines say more than the room left after the later one; the restated one is the
    # shorter, so ranked by substance alone it would take the room and the other line would go.
    assert COUNTER.count_text(EARLIER) < COUNTER.count_text(OTHER)
    picked = [unit for _, _, unit in chosen(candidates, "", room, COUNTER)]
    assert picked == [OTHER, LATER]


def test_a_finding_a_decision_says_word_for_word_leaves_its_room_to_another() -> None:
    # A Claude Code audit session: the same verdict in the analysis (listed as a decision) and
    # again, shorter, in the report's list (a finding); every word of the finding is in it.
    decision = (
        '- said: - **D5**: the README **under-sells** the codebase (20,512 lines vs "~2,800")'
        " rather than inflating it."
    )
    again = '**D5** under-sells the codebase (20,512 lines vs "~2,800").'
    candidates = [(4, 0, again), (7, 0, OTHER)]
    room = COUNTER.count_text(OTHER) + 1
    assert COUNTER.count_text(again) < COUNTER.count_text(OTHER)
    picked = [unit for _, _, unit in chosen(candidates, decision, room, COUNTER)]
    assert picked == [OTHER]
    # one word the decision does not hold, and the finding says something of its own
    told = '**D5** under-sells the codebase (20,512 lines vs "~2,800") in the badge.'
    assert repeated_in([again, told], [decision]) == {0}


def test_a_decision_said_again_is_kept_once_where_it_was_last_said() -> None:
    said = [
        (1, "I'll keep SQLite as the default store."),
        (3, "The real problem is the stale lock file."),
        (5, "I'll keep SQLite as the default store. It needs no server."),
        (7, "The real problem is the stale lock file."),
        (9, "I'll keep SQLite as the default"),
        (11, "So we need to handle the case where SOME rows have zero width."),
        (13, "So we need to handle the case where SOME rows have zero width, not all."),
    ]
    # The last two differ in a character (the stop): each is its own quote, both stay.
    assert said_once(said) == (
        (7, "The real problem is the stale lock file."),
        (9, "I'll keep SQLite as the default store. It needs no server."),
        (11, "So we need to handle the case where SOME rows have zero width."),
        (13, "So we need to handle the case where SOME rows have zero width, not all."),
    )


def test_a_decision_said_in_two_turns_is_listed_once() -> None:
    # An agent restates its choice when it comes back to the work (a Claude Code session's
    # "I'll keep …" before the first edit and again, with its reason, before the second).
    first = "I'll keep the SQLite store as the default because it needs no server."
    again = f"{first} The tests run on it too."
    edit = ToolUseBlock(id="e1", name="Edit", input={"file_path": "a.py", "old_string": "x"})
    redo = ToolUseBlock(id="e2", name="Edit", input={"file_path": "b.py", "old_string": "y"})
    messages = [
        Message.user("Pick a store."),
        Message("assistant", (TextBlock(first), edit)),
        Message("user", (ToolResultBlock(tool_use_id="e1", content="ok"),)),
        Message("assistant", (TextBlock(again), redo)),
        Message("user", (ToolResultBlock(tool_use_id="e2", content="ok"),)),
        Message.assistant("Done."),
    ]
    assert [text for _, text in extract_facts(messages).decisions] == [again]
    full = StructuredSummarizer().summarize(messages).text
    assert full.count("SQLite store as the default") == 1


_PROSE = st.text(alphabet="aAbÉ_1 .\n-", max_size=40)


@given(st.lists(_PROSE, max_size=6), st.lists(_PROSE, max_size=6), st.data())
def test_holders_answer_as_reading_every_text_would(
    texts: list[str], pieces: list[str], data: st.DataObject
) -> None:
    """Asking only the lines that hold a piece's rarest inner word answers as ``piece in
    text`` over every text does: for pieces cut from the texts (at any character, so words
    at their ends are cut too) and for others."""
    for text in texts:
        start = data.draw(st.integers(0, len(text)))
        pieces.append(text[start : data.draw(st.integers(start, len(text)))])
    holders = Holders(texts)
    for piece in pieces:
        assert (piece in holders.held([piece])) == any(piece in text for text in texts), piece


@given(
    st.lists(_PROSE, max_size=6),
    st.lists(_PROSE, min_size=SCANNED_PIECES + 1),
    st.integers(0, 3),
    st.data(),
)
def test_many_pieces_asked_together_are_answered_as_reading_every_text_would(
    texts: list[str], pieces: list[str], indexed: int, data: st.DataObject
) -> None:
    """Past ``SCANNED_PIECES`` pieces with no inner word, or whose rarest inner word more than
    ``indexed`` lines hold, one pass of an automaton of them all over the texts answers as
    ``piece in text`` over every text does (pieces that end others, that share their starts,
    empty ones, ones across lines)."""
    for text in texts:
        start = data.draw(st.integers(0, len(text)))
        pieces.append(text[start : data.draw(st.integers(start, len(text)))])
    expected = {piece for piece in pieces if any(piece in text for text in texts)}
    with patch("contextwarden.summarizers.restated.INDEXED_LINES", indexed):
        assert Holders(texts).held(pieces) == expected


_FEW_WORDS = st.lists(st.sampled_from("a b c d e f g".split()), max_size=8).map(" ".join)


@given(st.lists(_FEW_WORDS, max_size=40), st.integers(0, 3), st.integers(1, 40))
def test_restated_counts_for_all_lines_at_once_as_comparing_each_pair_would(
    units: list[str], scan: int, share: int
) -> None:
    """Lines of a few shared words, each compared with only ``scan`` later lines before the
    rest are counted (a bit per line for the words in ``share`` of the lines, one by one for
    the others), are restated exactly as comparing each line with every later one says."""
    sets = [words(unit) for unit in units]
    expected = {
        i
        for i, mine in enumerate(sets)
        if any(len(other) >= len(mine) and restates(mine, other) for other in sets[i + 1 :])
    }
    with (
        patch("contextwarden.summarizers.restated.RESTATED_SCAN", scan),
        patch("contextwarden.summarizers.restated.DENSE_SHARE", share),
    ):
        assert restated(units) == expected


@given(st.lists(_FEW_WORDS, max_size=20), st.lists(_FEW_WORDS, max_size=20), st.integers(0, 3))
def test_repeated_in_counts_common_words_as_intersecting_their_lines_would(
    units: list[str], lines: list[str], scan: int
) -> None:
    """Units whose every word is in many lines (here: at least ``scan``) are looked up a bit
    per line, and found repeated exactly where one line holds all their words (a unit of no
    words never is)."""
    expected = {
        i
        for i, unit in enumerate(units)
        if words(unit) and any(words(unit) <= words(line) for line in lines)
    }
    with patch("contextwarden.summarizers.restated.RESTATED_SCAN", scan):
        assert repeated_in(units, lines) == expected


def test_said_once_is_the_same_whatever_the_hash_seed() -> None:
    # "abc" and "de" have one holder each when "abc de" is read; only "de"'s holder holds it
    script = (
        "from contextwarden.summarizers.restated import said_once\n"
        "print(said_once([(0, 'abc qqqqqq'), (1, 'xabc de'), (2, 'abc de')]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(contextwarden.__file__).parents[1])}
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**env, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(8)
    }
    assert len(outputs) == 1
