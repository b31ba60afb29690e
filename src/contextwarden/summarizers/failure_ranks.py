"""Which of a failed output's lines tells most: each line's rank, and the lines in that order.

``failure_marks`` knows what failure lines look like; this room ranks them, reading the layout
around them (a test's title, source shown, a console log, a rustc pointer, a matcher's values),
so the summary's section 4 and microcompact's kept lines pick the same line first: the one naming
what failed and where.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from contextwarden.summarizers.browser_log import browser_logged
from contextwarden.summarizers.failure_marks import (
    DBT_NODE_ERROR,
    DBT_TIME,
    ERROR_LINE,
    EXCEPTION_LINE,
    HTTP_ERROR_HEADING,
    INDENTED_EXCEPTION,
    SERVER_LOG_ERROR,
    SHELL_WARNING,
    TRAILER,
    gh_annotation_level,
    says_what_failed,
    tells,
)
from contextwarden.summarizers.runner_reports import COUNTED_VERDICT
from contextwarden.summarizers.toolchain_marks import (
    GO_LOCATED,
    GO_TOO_NEW,
    RUST_PANIC,
    RUSTC_ADVICE,
    RUSTFMT_DIFF,
    go_continuation,
    lines_after,
    npm_message,
    rustc_label,
    rustfmt_diffed,
    says_more,
    tsc_chained,
)

_NAMED_ERROR = re.compile(r"^\s*(?:E {2,})?[A-Za-z_][\w.]*(?:Error|Exception)\b(?: \[\w+\])?:")
"""A line that opens with the class of the error raised, as Python, Java and JavaScript print
it (``TypeError: …``, ``E   app.types.VoiceNotFoundError: zzz``)."""
_TEST_TITLE = re.compile(
    r"^\s*(?:\u25cf (?!Console\s*$|Multiple configurations found:)\S"
    r"|\d+\) (?:\[[^\]]+\] \u203a )?\S+:\d+:\d+ \u203a )"
)
"""Jest's and Vitest's title of a failed test or suite (``● Suite > does x``, the arrow
U+203A; ``● Test suite failed to run``; ``● Console`` heads logged output, jest-config's
``● Multiple configurations found:`` the files it found), and Playwright's
(``  1) [chromium] › tests/chat.spec.ts:66:7 › Chat › sends``, its list reporter): the first
line under it says why."""  # noqa: RUF001
_PS_CARET = re.compile(r"^\s*\+\s*~+\s*$")
"""The carets a PowerShell parser error draws under the code it shows (``+   ~~``): the next
line is its message, which often uses no failure word (``The token '&&' is not a valid
statement separator in this version.``, ``Missing closing '}' in statement block``)."""
_CONSOLE = re.compile(r"^(\s*)\u25cf Console\s*$")
"""Jest's heading of what a test file logged (``console.log``, ``console.error`` entries, each
with where it was called), indented under it: what the code printed, passing or not, not why
a test failed, so it ranks after every line that says that; an entry's label
(``console.error``) says nothing."""
_CONSOLE_ENTRY = re.compile(r"^\s*console\.\w+\s*$")
_CODE_FRAME = re.compile(r"^\s*+(?:>\s*+)?\d+(?:\s+\d+)?\s*[|\u2502]")
"""A line of source shown around an error (``> 30 |     const r = await fetch(url)``: Babel's
code frame in Jest, Vitest and Playwright, ``355 │`` in Biome's, ``221 221 │`` in the diff
Biome's formatter shows, old and new line numbers): code, never what failed. The blanks before
and after the ``>`` are taken whole (possessive), so a line of blanks is read once."""
_BIOME_HEADER = re.compile(
    r"^\s*(?:at )?\S+?(?::\d+:\d+)? [a-z]\w*(?:/\w+)*(?:\s+[A-Z]+)*\s+\u2501+\s*$"
)
"""Biome's diagnostic header (``src/x.ts:797:5 lint/style/useBlockStatements  FIXABLE  ━━━``,
``src/x.ts:862:2 parse ━━━``; Biome's "Diagnostics" reference): where and which rule, its
message (``× …`` an error, ``! …`` a warning, ``i …`` information) on the next line; line and
column only when the diagnostic has a span (``PrintHeader``, biome_diagnostics' ``display.rs``:
``src/x.ts format ━━━``, ``big.json check ━━━``), after ``at `` in some Biome 2 builds. The
run's summary (``check ━━━``) names no file. Warnings print headers too: no failure alone."""  # noqa: RUF001
_RULE = " \u2501"
_INTRODUCES = re.compile(r"[:：]$|\bgave the following error\.$")  # noqa: RUF001
"""A line that only introduces the next: one ending with a colon, or tsc's ``The last overload
gave the following error.`` / ``Overload 1 of 2, '…', gave the following error.`` (TypeScript's
diagnostics 2770 and 2772), whose next line says which type did not fit."""
_POINTER = re.compile(r"^\s*--> \S+?:\d+")
"""Where a diagnostic printed on the line before it is (rustc, ruff's full format):
``error[E0412]: cannot find type `X` in this scope`` / ``E501 Line too long (93 > 88)``, then
``  --> src/x.rs:3:5``."""
_LOCATION = re.compile(r"^\s*(?:\.{1,2}/|/)\S*?:\d+:\d+\s*$")
"""A bare location on a line of its own, where the diagnostic on the next line is: webpack and
Next.js print a failed build so (``./src/app/page.tsx:5:1`` over ``Module not found: Can't
resolve '@/lib/x'``, ``./src/x.tsx:32:5`` over ``Type error: …``), the path relative to the
project (``./``, ``../``) or absolute."""
_WEBPACK_HEADER = re.compile(r"^\s*ERROR in \S")
"""webpack's heading of an error (``ERROR in ./src/index.js 3:0-28``): the module and where in
it; the message is the next line (``Module not found: Error: Can't resolve './App' in …``)."""
_HINT = re.compile(r"^\s*(?:hint|note|help|info|warning|tip):", re.I)
"""Advice a tool prints after its error (git's ``hint:``, rustc's ``help:``): never the error."""
_NONE_FAILED = re.compile(
    r"^\s*+(?:[\w ]+:\s*)?0 (?:fail(?:ed|s|ures?)?|errors?)\b|^\s*test result: ok\.", re.I
)
"""A run's count of its failures when there were none (bun's `` 0 fail``, ``Errors: 0 errors``,
Rust's libtest ``test result: ok. 24 passed; 0 failed; 0 ignored; …``): it uses a failure word
and says nothing failed. The leading blanks are taken whole (possessive): given back to the
label one at a time, a line of blanks was read again for each."""
_PASSED_TEST = re.compile(r"^\s*[\u2713\u2714\u221a] ")
"""A test runner's mark for a test that passed (bun's and Vitest's ``✓``, Jest's and Mocha's
``✓``/``✔``, ``√`` on Windows consoles): its title may use a failure word (``✓ throws on an
invalid status``) but says nothing failed."""
_ECHOED_COMMAND = re.compile(r"^\$ \S")
"""A command a runner echoes before running it: a package script as bun, yarn and pnpm print
it (``$ biome check --error-on-warnings``), a line a shell transcript prompts with. It is what
ran, not what failed, whatever words its flags use."""
_PULLING = re.compile(r"^Unable to find image '[^'\n]+' locally\s*$")
"""What ``docker run`` prints before it pulls an image it does not have: the pull's own error,
if any, comes after."""
_MATCHER_HINT = re.compile(r"\bexpect\(received\)\.(?:not\.)?\w+\(")
"""The matcher hint Jest and bun print for a failed assertion (``expect(received).toBe(expected)``,
jest-matcher-utils ``matcherHint``): what the test got is on the ``Received`` line under it."""
_MATCHER_VALUE = re.compile(r"^\s*(?:Expected|Received)\b[\w ]*:\s*\S")
"""The lines under a matcher hint giving the values compared (``Expected: "a/b"``,
``Received: "b"``, bun's ``Expected to contain: …``, Jest's ``Received string: …``)."""
_EXPECTED_VALUE = re.compile(r"^\s*Expected\b")
"""Of those, the value the test asked for (jest-matcher-utils' ``printExpected``): words in it
(an error message the code should print, ``Expected to contain: "Session 'x' not found."``)
are the test author's, not a failure that happened; ``Received`` is what the code did."""
_STACK_FRAME = re.compile(
    r"^\s*at (?:async )?(?:new )?\S[^\n]*?(?:\([^()\s]*:\d+(?::\d+)?\)|\(native\)"
    r"|\((?:Native Method|Unknown Source)\)|\S:\d+:\d+)\s*$"
)
"""A frame of a stack trace as V8 prints it (v8.dev, "Stack trace API": ``    at
Type.functionName [as methodName] (file.js:10:5)``, ``    at file.js:10:5``, ``at async f
(…)``, ``at new C (…)``) and as the JVM's ``Throwable.printStackTrace`` does (``\tat
com.x.Errors.check(Errors.java:42)``, ``(Native Method)``): where the code was, never what
failed, whatever words its function's name uses (``at Reaction.error (…)``). The location
is matched from its one character before the colon, not from a run of them: a run would be
scanned again from every position of a long line (quadratic in its length)."""
TELLING_RANK = 0
ERROR_RANK = 1
EXCEPTION_RANK = 2
COUNT_RANK = 3
WORD_RANK = 4
LOGGED_RANK = 5
TRAILER_RANK = 6
CHAINED_RANK = 7
NOISE_RANK = 8
"""Ranks of a failure line, most telling first: a line naming what failed and where, an error
prefix's line, an exception's, pytest's count of what failed (``COUNTED_VERDICT``), one
with a failure word, one the code under test logged (``_CONSOLE``), a run's verdict alone, a
line of a ``tsc`` diagnostic's message chain (``tsc_chained``), a browser's log noise
(``browser_log``)."""
_LAST_RANKS = (TRAILER_RANK, CHAINED_RANK, NOISE_RANK)
"""Ranks whose lines come after every other line, in this order. A ``tsc`` diagnostic's chain
says more of a failure its header already names, so it takes only a place no other line would:
ranked with the lines with a failure word, it took the place of a third diagnostic of study set
8 (``Cannot find name 'GitCheckpointStore'``, a probe), and the run's count (``Found 2 errors in
2 files.``) says what no diagnostic's line does. What the code under test
logged (``LOGGED_RANK``) still takes its turn among the others: put last, it gave its place to a
second suite's ``FAIL`` line and lost an error probe of study set 7, the ``Error: getaddrinfo
ENOTFOUND`` a test's mocked client logged (errs10)."""
MARKED_RANKS = frozenset({TELLING_RANK, ERROR_RANK, EXCEPTION_RANK})
"""The ranks of lines that say a failure by their form, not only by a word in them."""


def _rank_or_word(line: str) -> int:
    """``line_rank`` of ``line``, a line that ranks nowhere counted as one with a failure word."""
    rank = line_rank(line)
    return WORD_RANK if rank is None else rank


def _unnamed(line: str) -> bool:
    """Neither a failure word nor the name of the error raised (``TypeError: x is not a
    constructor``, ``ReferenceError: fetch is not defined``: its class says what kind of failure
    it is) is in ``line``."""
    return not says_what_failed(line) and _NAMED_ERROR.match(line) is None


def line_rank(line: str) -> int | None:
    """How telling ``line`` is of a failure (``TELLING_RANK`` first), None when it says nothing of
    one. Advice (``hint:``), a count of no failures and a command echoed before it ran rank
    nowhere, and a verdict alone ranks last even though it uses a failure word; the shell's own
    warning (``SHELL_WARNING``) ranks with the lines that use one.

    A line of ordinary length is ranked once per process (``_RANKED_LINES``): a failed result is
    ranked again at every compaction of its session, some thirty patterns a line each time."""
    return _remembered_rank(line) if len(line) <= _REMEMBERED_CHARS else _rank(line)


_RANKED_LINES = 8192
"""How many lines' ranks are remembered, the least recently ranked forgotten first."""
_REMEMBERED_CHARS = 1000
"""Only lines this long or shorter are remembered, so the memory stays small: ``_RANKED_LINES``
lines of at most this many characters."""


def _rank(line: str) -> int | None:
    """``line_rank``, worked out."""
    quiet = (
        _HINT,
        _NONE_FAILED,
        _PASSED_TEST,
        _ECHOED_COMMAND,
        RUSTC_ADVICE,
        _STACK_FRAME,
        _PULLING,
    )
    if any(p.match(line) for p in quiet):
        return None
    if TRAILER.match(line) and not COUNTED_VERDICT.match(line):  # a count says how much failed
        return TRAILER_RANK
    located = (GO_LOCATED, GO_TOO_NEW, _BIOME_HEADER, RUST_PANIC, RUSTFMT_DIFF)
    if tells(line) or any(p.match(line) for p in located):
        return TELLING_RANK
    if ERROR_LINE.match(line) or SERVER_LOG_ERROR.match(line) or HTTP_ERROR_HEADING.match(line):
        return ERROR_RANK
    if EXCEPTION_LINE.match(line) or INDENTED_EXCEPTION.match(line):
        return EXCEPTION_RANK
    if COUNTED_VERDICT.match(line):
        return COUNT_RANK
    return WORD_RANK if says_what_failed(line) or SHELL_WARNING.match(line) else None


_remembered_rank = lru_cache(maxsize=_RANKED_LINES)(_rank)


def _points_at(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` is a diagnostic whose location the next line gives
    (``_POINTER``); advice (``warning:``, ``help:``) is not one."""
    line = lines[index]
    following = lines[index + 1] if index + 1 < len(lines) else ""
    return bool(line.strip()) and _POINTER.match(following) is not None and not _HINT.match(line)


def _location_above(lines: list[str], index: int) -> str | None:
    """The bare location (``_LOCATION``) on the last non-blank line before ``lines[index]``, or
    None: it says where the diagnostic ``lines[index]`` is."""
    above = next((lines[at] for at in range(index - 1, -1, -1) if lines[at].strip()), "")
    return above.strip() if _LOCATION.match(above) else None


def with_what_follows(lines: list[str], index: int) -> str:
    """``lines[index]``, stripped, with the next non-blank line after it when it only introduces
    it (``_INTRODUCES``: ``ERROR:``, ``failed due to the following issue:``) and is neither a
    failure line of its own nor source shown (``_CODE_FRAME``: what Biome's ``Formatter would
    have printed the following content:`` introduces is code), or when it is a diagnostic's
    header whose message comes next (``_BIOME_HEADER``, its rule of ``━`` dropped), or a
    matcher's hint with the values it compared (``_MATCHER_HINT``); a Go diagnostic with the
    lines it goes on over (what it got and wanted), a rustc diagnostic with the label under
    its code, npm's code line with what the code means (``toolchain_marks``). A diagnostic under
    a bare location (``_location_above``) opens with it."""
    located = _location_above(lines, index)
    if located is not None:
        return f"{located} {_introducing(lines, index)}"
    return _introducing(lines, index)


def _introducing(lines: list[str], index: int) -> str:
    """``with_what_follows`` of ``lines[index]``, its location above left out."""
    line = lines[index].strip()
    following = next((n.strip() for n in lines_after(lines, index) if n.strip()), "")
    if _MATCHER_HINT.search(line):
        return " ".join([line, *_compared_values(lines, index + 1)])
    if GO_LOCATED.match(line):
        return " ".join([line, *go_continuation(lines, index)])
    npm = npm_message(lines, index)
    if npm:
        return " ".join([line, *npm])
    if RUSTFMT_DIFF.match(line):  # its colon introduces the hunk's code, not words
        return line
    if DBT_NODE_ERROR.match(line):  # its cause, in words no failure mark knows, comes next
        return f"{line} {DBT_TIME.sub('', following)}".rstrip()
    if _WEBPACK_HEADER.match(line):
        return f"{line} {following}".rstrip()
    label = rustc_label(lines, index + 1) if _points_at(lines, index) else None
    if label is not None and says_more(label, line):
        return f"{line}: {label}"
    if _BIOME_HEADER.match(line):
        return f"{line.rstrip(_RULE)} {following}".rstrip()
    if COUNTED_VERDICT.match(line):  # its frame of "=" says nothing
        return line.strip("= ")
    if not _INTRODUCES.search(line) or _CODE_FRAME.match(following):
        return line
    if not following or line_rank(following) not in (None, WORD_RANK):
        return line
    return f"{line} {following}"


def _compared_values(lines: list[str], start: int) -> list[str]:
    """The ``Expected``/``Received`` lines (``_MATCHER_VALUE``) that open ``lines[start:]``, blank
    lines skipped: what a failed assertion compared, which tells one failure of a run from
    another."""
    return [lines[at].strip() for at in _value_positions(lines, start)]


def _value_positions(lines: list[str], start: int) -> list[int]:
    """The positions of the ``_MATCHER_VALUE`` lines that open ``lines[start:]``, blank lines
    before them skipped, none between them."""
    found: list[int] = []
    for at in range(start, len(lines)):
        if _MATCHER_VALUE.match(lines[at]):
            found.append(at)
        elif lines[at].strip() or found:
            break
    return found


def ranked_lines(text: str) -> list[tuple[int, str]]:
    """The failure lines of ``text`` with their ranks (``line_rank``), most telling first, each
    with what it introduces (``with_what_follows``).

    The best line of each rank comes before the second of any, and a run's verdict alone, then
    a browser's log noise, after all (``_LAST_RANKS``): a rebase's first
    conflict, then its error line, then its next conflict, so a few lines say the different
    things an output says, not one thing several times (a line repeated, as fifteen tests
    failing on the same assertion repeat it, counts once). Within a rank, lines naming a
    failure come first, then in the output's order.
    """
    lines = text.splitlines()
    groups: dict[int, list[int]] = {}
    for i, rank in _line_ranks(lines):
        groups.setdefault(rank, []).append(i)
    texts: dict[int, list[str]] = {}
    for rank, found in sorted(groups.items()):
        logged = rank == LOGGED_RANK  # then as it would rank outside the log
        found.sort(key=lambda i: (logged and _rank_or_word(lines[i]), _unnamed(lines[i]), i))
        texts[rank] = list(dict.fromkeys(with_what_follows(lines, i) for i in found))
    rounds = [(r, t) for r, t in texts.items() if r not in _LAST_RANKS]
    longest = max((len(t) for _, t in rounds), default=0)
    order = [(r, t[k]) for k in range(longest) for r, t in rounds if k < len(t)]
    return order + [(r, line) for r in _LAST_RANKS for line in texts.get(r, [])]


def _expected_values(lines: list[str]) -> frozenset[int]:
    """Where the ``Expected`` values under a matcher's hint (``_compared_values``) are: they
    rank nowhere, as the hint is quoted with them (``with_what_follows``) and a failure word in
    what the test expected says nothing failed. A ``Received`` value ranks by what it holds: an
    error the code printed in the place of what was expected (``Received: "error: Cannot find
    package 'x' from …"``) is a failure of its own."""
    return frozenset(
        at
        for index, line in enumerate(lines)
        if _MATCHER_HINT.search(line)
        for at in _value_positions(lines, index + 1)
        if _EXPECTED_VALUE.match(lines[at])
    )


def _says_why_below(line: str) -> bool:
    """Whether the line after ``line`` says why something failed: ``line`` is a failed test's
    title (``_TEST_TITLE``) or the carets under the code a PowerShell parser error shows
    (``_PS_CARET``)."""
    return _TEST_TITLE.match(line) is not None or _PS_CARET.match(line) is not None


def _line_ranks(lines: list[str]) -> Iterator[tuple[int, int]]:
    """Each failure line's position and rank. A test's title (``_TEST_TITLE``) and source shown
    around an error (``_CODE_FRAME``) rank nowhere, the first line under a title or under a
    PowerShell parser error's carets ranks as an exception (it says why), and what a test
    logged (``_CONSOLE``) ranks as logged; a ``rustfmt --check`` hunk's code ranks nowhere, and
    the lines of a ``tsc`` diagnostic's message chain (``tsc_chained``) rank as chained: they
    say which types did not fit."""
    above = ""  # the last non-blank line before this one
    console: int | None = None  # the indent of the ● Console heading we are under
    browser = browser_logged(lines)
    diffed = rustfmt_diffed(lines)
    chained = tsc_chained(lines)
    expected = _expected_values(lines)
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if console is not None and line.strip() and indent <= console:
            console = None
        heading = _CONSOLE.match(line)
        console = len(heading.group(1)) if heading else console
        shapes = (_TEST_TITLE, _CODE_FRAME, _CONSOLE_ENTRY)
        shown = i in diffed or i in expected or any(p.match(line) for p in shapes)
        rank = None if shown else line_rank(line)
        annotated = gh_annotation_level(lines, i) if line[:2] in ("X ", "! ") else None
        if _points_at(lines, i) or annotated == "failure":
            rank = TELLING_RANK
        elif rank is not None and _LOCATION.match(above):
            rank = TELLING_RANK  # located by the line above, as a compiler's path:line: is
        elif annotated == "warning":  # a job that went on: never why it failed
            rank = None
        elif rank in (None, WORD_RANK) and line.strip() and _says_why_below(above):
            rank = EXCEPTION_RANK
        elif rank is None and i in chained:
            rank = CHAINED_RANK
        if rank is not None and i in browser:
            yield i, NOISE_RANK
        elif rank is not None:
            yield i, rank if console is None else max(rank, LOGGED_RANK)
        if line.strip():
            above = line
