"""What the Go, Rust and TypeScript toolchains print when a build, a test or a program fails, in
the layouts their sources write, so ``failure_ranks`` can rank these lines with every other tool's.

Go: the compiler's located diagnostic and the lines it continues on, the package header ``go``
prints above a failed step's output, the runtime's goroutine trace, a toolchain too old for the
module. Rust: a thread's panic, the
label rustc writes under the code it shows and its closing advice, ``rustfmt --check``'s hunks,
and the lints ``cargo clippy`` warns of. TypeScript: the lines of a ``tsc`` diagnostic's message
chain, under its header. npm: the lines of one error after the line naming its code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise

GO_LOCATED = re.compile(r"^\s*(?:[\w.-]+: )?\S+\.go:\d+(?::\d+)?: (?!warning)")
"""A Go diagnostic: the compiler's and vet's (``db.go:41:9: undefined: openPool``) and a test's
``t.Error`` line. As telling as a located error once the run failed, but with no word saying
error it does not by itself say one did: a passing verbose test run prints its ``t.Log`` lines,
and linters their advice, the same way."""
GO_TOO_NEW = re.compile(
    # cmd/go's ``gover.TooNewError`` (src/cmd/go/internal/gover/toolchain.go, "%v requires go
    # >= %v (running go %v%v)"), after the "go: " its errors open with:
    # go: go.mod requires go >= 1.26 (running go 1.25; GOTOOLCHAIN=local)
    r"^\s*go: .*\brequires go >= \S+ \(running go "
    # the type checker's ``TooNew`` error (go/types and types2, check.go), located, as a tool
    # built with an older Go (govulncheck, golangci-lint, gopls) reports a newer module:
    # doc.go:18:1: package requires newer Go version go1.26 (application built with go1.25)
    r"|^\s*\S+\.go:\d+(?::\d+)?: (?:package|file) requires newer Go version go\S+ "
    r"\(application built with ",
    re.M,
)
"""A Go toolchain older than the module asks for: the module did not build, or a tool built
with an older Go could not load it (govulncheck's ``errGoVersionMismatch``, "Loading packages
failed, possibly due to a mismatch between the Go version used to build govulncheck and the Go
version on PATH", golang/vuln internal/scan/errors.go, over these lines)."""
_GO_PACKAGE = re.compile(r"^# [\w.~-]+(?:/[\w.~@+-]+)*(?: \[[^\]\n]+\])?$")
"""The header ``go build``, ``go vet`` and ``go test`` print above the output of a step that
printed any (cmd/go's ``Shell.reportCmd``: ``# github.com/x/y/internal/api``, ``# x [x.test]``
for a test binary). The compiler prints only errors, so a header followed by a located
diagnostic (``GO_LOCATED``) says the package did not build, whatever exit code a pager left."""
_GO_CONTINUED = re.compile(r"^\t+(?:have|want) \S")
"""How the Go type checker goes on with a diagnostic on the next lines, tabs in (types2's
``not enough arguments in call to f`` / ``\\thave (string)`` / ``\\twant (string, int)``, and
``\\t\\thave``/``\\t\\twant`` for the method a type lacks): what it got and what it wanted.
Other tab-indented lines under a located one are code a linter shows (golangci-lint's source
line), not the error's words."""
_GO_FRAME = re.compile(r"^(?P<call>\S[^\n]*\))\n\t[^\n]+\.go:\d+ \+0x[0-9a-f]+$", re.M)
"""A frame of the Go runtime's goroutine trace (runtime/traceback.go: the function and its
arguments, then a tab, its file and line and ``+0x`` its offset), printed when a program panics
or dies of a fatal error. A pager that cut the ``panic:`` line off leaves these."""
_GO_RUNTIME_CALL = re.compile(r"^(?:panic\(|runtime\.)")
"""Frames of the runtime's own panic machinery, above the code that panicked: never where."""
RUST_PANIC = re.compile(r"^\s*thread '[^'\n]*'(?: \(\d+\))? panicked at \S", re.M)
"""A Rust thread's panic as the standard library's hook prints it (``thread 'main' panicked at
src/main.rs:2:5:`` with the message on the next line since Rust 1.73, recent releases adding
the thread's id in parentheses; ``panicked at 'msg', src/main.rs:2:5`` before): what failed and
where, a failed test's assertion included."""
RUSTC_ADVICE = re.compile(
    r"^\s*(?:For more information about (?:this|an) error, try `rustc --explain"
    r"|Some errors have detailed explanations: )"
)
"""rustc's closing advice (``For more information about this error, try `rustc --explain
E0063`.``): it names no failure of its own, whatever its word "error"."""
RUSTFMT_DIFF = re.compile(r"^Diff in \S.*?(?::\d+| at line \d+):\s*$", re.M)
"""The header of each hunk ``rustfmt --check`` (``cargo fmt --check``) prints for a file it
would reformat (rustfmt's diff emitter: ``Diff in src/main.rs:348:``, ``Diff in src/main.rs at
line 348:`` in older releases): a file that fails the check, and where."""
_DIFF_LINE = re.compile(r"^(?:[ +-]|$)")
"""A line of the hunk under a ``Diff in`` header: context, removed or added code, blank."""
_TSC_HEADER = re.compile(r"^\S.*\berror TS\d+: \S")
"""A ``tsc`` diagnostic's header, in either layout (``src/a.ts(3,5): error TS2322: …``; with
``--pretty``, its default on a terminal, ``src/a.ts:3:5 - error TS2322: …``)."""
_TSC_CHAINED = re.compile(r"^ {2,}\S")
"""A line of a ``tsc`` diagnostic's message chain: TypeScript writes each message a diagnostic
chains under its header on a line of its own, two spaces in per level
(``flattenDiagnosticMessageText`` in its compiler's ``program.ts``): ``  Types of property 'GET'
are incompatible.`` / ``    Type 'A' is not assignable to type 'B'.``, down to the types that
did not fit. The header's message names only the outer types (``Type 'typeof import(…)' does not
satisfy the constraint …``)."""
_NPM_CODE = re.compile(r"^\s*npm (?:ERR!|error) code \S+$")
"""The line npm's exit handler opens an error with (``npm error code E404``; ``npm ERR!`` before
npm 10): the code alone. What it means follows on lines of the same prefix, in groups an empty
one (``npm error 404``) separates: the summary (``404 Not Found - PUT https://…``), then the
detail (``404  'x@1.0.0' is not in this registry.``), then advice."""
_NPM_LINE = re.compile(r"^\s*npm (?:ERR!|error) (?P<said>.*)$")
_NPM_BARE = re.compile(r"^(?:[\w-]+)?$")
"""An npm error line with nothing after its errno or code (``npm error 404``): a group ends."""
_NPM_LOG = "A complete log of this run"
"""How npm's last error line opens, the path of the run's debug log: the message has ended."""
NPM_GROUPS = 2
"""The groups of an npm error kept with its code line: the summary and the detail it gives."""
_CLIPPY = re.compile(r"\bcargo\s+(?:\+\S+\s+)?clippy\b")
_WARNINGS_COUNTED = re.compile(r"^warning: `[^`\n]+` \([^)\n]*\) generated \d+ warnings?\b", re.M)
"""cargo's count of the warnings a crate's target produced (``warning: `dual` (bin "dual")
generated 1 warning``): under ``cargo clippy`` the lints it found, what the run was for."""
_WARNING = re.compile(r"^warning: (?!`[^`\n]+` \().+$", re.M)
"""A warning's header line, cargo's count of them (``_WARNINGS_COUNTED``) left out."""
_RUSTC_SNIPPET = re.compile(r"^\s*(?:\d+\s*)?\||^\s*\.\.\.")
"""A line of the code rustc shows under a diagnostic's ``-->`` location: numbered source, the
gutter ``|`` alone, or ``...`` for lines it skipped."""
_RUSTC_LABEL = re.compile(r"^\s*\|[\s|/\\_]*?[\^-]+ (?P<label>\S.*)$")
"""The line under the code marking a span (``^^^`` the primary, ``---`` a secondary) with its
label (``expected `u32`, found `String```, ``two arguments of type `X` and `Y` are missing``):
what rustc found wrong there, in words its header does not use."""


def lines_after(lines: list[str], index: int) -> Iterator[str]:
    """The lines after ``lines[index]``, in order, read in place: a copy of the rest
    (``lines[index + 1 :]``) for each line that looks ahead made a long output's reading
    quadratic."""
    for at in range(index + 1, len(lines)):
        yield lines[at]


def go_build_failed(text: str) -> bool:
    """Whether ``text`` holds a Go package's header with a located diagnostic under it
    (``_GO_PACKAGE``): the package did not build, or vet found a problem in it."""
    return any(
        _GO_PACKAGE.match(line) and GO_LOCATED.match(following)
        for line, following in pairwise(text.splitlines())
    )


def go_trace(text: str) -> bool:
    """Whether ``text`` holds a frame of a Go goroutine trace (``_GO_FRAME``)."""
    return _GO_FRAME.search(text) is not None


def go_panicked_in(text: str) -> str | None:
    """The call a Go goroutine trace shows first, the runtime's own frames skipped: where the
    program was when it panicked (None: no trace)."""
    calls = (found.group("call") for found in _GO_FRAME.finditer(text))
    return next((call for call in calls if not _GO_RUNTIME_CALL.match(call)), None)


def go_continuation(lines: list[str], index: int) -> list[str]:
    """The lines a Go diagnostic at ``lines[index]`` goes on over (``_GO_CONTINUED``), stripped;
    none for any other line."""
    if not GO_LOCATED.match(lines[index]):
        return []
    going_on: list[str] = []
    for line in lines_after(lines, index):
        if not _GO_CONTINUED.match(line):
            break
        going_on.append(line.strip())
    return going_on


def rustc_label(lines: list[str], index: int) -> str | None:
    """The first label rustc wrote under the code it shows (``_RUSTC_LABEL``), ``lines[index]``
    the diagnostic's ``-->`` location; None when the code shown has none."""
    for line in lines_after(lines, index):
        if not _RUSTC_SNIPPET.match(line):
            return None
        found = _RUSTC_LABEL.match(line)
        if found is not None:
            return found.group("label").strip()
    return None


def says_more(label: str, header: str) -> bool:
    """Whether most of ``label``'s words are not ``header``'s: rustc often labels the code with
    its header's own words (``cannot find type `X` in this scope`` over ``not found in this
    scope``), which a summary need not say twice."""
    words, said = label.split(), set(header.split())
    new = [word for word in words if word not in said]
    return len(new) * 2 > len(words)


def rustfmt_diffed(lines: list[str]) -> set[int]:
    """The positions of the code lines of ``rustfmt --check``'s hunks (under a ``RUSTFMT_DIFF``
    header, up to the first line that is no hunk's): code, whatever words it uses
    (``error!("setup failed: {e}");``), never what failed."""
    return _lines_under(lines, RUSTFMT_DIFF, _DIFF_LINE)


def tsc_chained(lines: list[str]) -> set[int]:
    """The positions of the lines of each ``tsc`` diagnostic's message chain (``_TSC_CHAINED``,
    the lines right under a ``_TSC_HEADER``, up to the first that is not one): they say which
    part of the types did not fit, with no failure word of their own."""
    return _lines_under(lines, _TSC_HEADER, _TSC_CHAINED)


def _lines_under(lines: list[str], header: re.Pattern[str], under: re.Pattern[str]) -> set[int]:
    """The positions of the lines matching ``under`` in a run right below a ``header`` line."""
    found: set[int] = set()
    within = False
    for i, line in enumerate(lines):
        if header.match(line):
            within = True
        elif within and under.match(line):
            found.add(i)
        else:
            within = False
    return found


def clippy_warning(text: str, command: str) -> str | None:
    """The first lint ``cargo clippy`` warned of, when ``command`` runs it and cargo counted the
    warnings (``_WARNINGS_COUNTED``): what the lint run found, though it exits 0 on warnings;
    None otherwise."""
    if _CLIPPY.search(command) is None or _WARNINGS_COUNTED.search(text) is None:
        return None
    found = _WARNING.search(text)
    return found.group(0).strip() if found is not None else None


def npm_message(lines: list[str], index: int) -> list[str]:
    """The lines under npm's code line ``lines[index]`` (``_NPM_CODE``) that say what the code
    means: its first ``NPM_GROUPS`` groups of ``npm error`` lines, each group's lines as npm
    printed them, up to the path of its debug log (``_NPM_LOG``); nothing under another line."""
    if not _NPM_CODE.match(lines[index]):
        return []
    said: list[str] = []
    groups = 0
    for line in lines_after(lines, index):
        found = _NPM_LINE.match(line)
        if found is None or _NPM_CODE.match(line):
            break
        said_here = found.group("said").strip()
        if said_here.startswith(_NPM_LOG):
            break
        if _NPM_BARE.match(said_here):
            groups += 1 if said else 0
            if groups >= NPM_GROUPS:
                break
            continue
        said.append(line.strip())
    return said
