"""tsc's errors read in ``--pretty``'s layout (``failure_marks.TELLING``) as in ``--pretty
false``'s ``path(line,col): error TSnnnn:``: ``path:line:col - error TSnnnn:``, the default on a
terminal, coloured (TypeScript's ``formatDiagnosticsWithColorAndContext``), then the code with
its ``~~~`` marks and, after every error, ``Found N errors in M files.`` and a table of them per
file. Output trimmed from a Next.js app type-checked through ``| head``, which hides tsc's exit
code."""

from __future__ import annotations

from contextwarden.summarizers.failure_quotes import further_lines
from contextwarden.summarizers.failures import failure_excerpt

_CYAN, _YELLOW, _RED, _GREY, _RESET = "\x1b[96m", "\x1b[93m", "\x1b[91m", "\x1b[90m", "\x1b[0m"


def _pretty_header(path: str, line: int, col: int, code: int) -> str:
    """The header as tsc --pretty colours it: file cyan, line and column yellow, ``error`` red,
    the code grey."""
    return (
        f"{_CYAN}{path}{_RESET}:{_YELLOW}{line}{_RESET}:{_YELLOW}{col}{_RESET} - "
        f"{_RED}error{_RESET}{_GREY} TS{code}: {_RESET}"
    )


PRETTY = (
    _pretty_header("src/app/blog/[slug]/page.tsx", 12, 5, 2344)
    + "Type 'Props' does not satisfy the constraint 'PageProps'.\n"
    "  Types of property 'params' are incompatible.\n"
    "    Type '{ slug: string; }' is missing the following properties from type "
    "'Promise<any>': then, catch, finally\n"
    "\n"
    "\x1b[7m12\x1b[0m     params: { slug: string };\n"
    "\x1b[7m  \x1b[0m \x1b[91m    ~~~~~~\x1b[0m\n"
    "\n"
    + _pretty_header("src/lib/db.ts", 4, 10, 2305)
    + "Module '\"./schema\"' has no exported member 'Session'.\n"
    "\n"
    '\x1b[7m4\x1b[0m import { Session } from "./schema";\n'
    "\x1b[7m \x1b[0m \x1b[91m         ~~~~~~~\x1b[0m\n"
    "\n"
    "\n"
    "Found 2 errors in 2 files.\n"
    "\n"
    "Errors  Files\n"
    "     1  src/app/blog/[slug]/page.tsx:12\n"
    "     1  src/lib/db.ts:4\n"
)
PAGED = "npx tsc --noEmit --pretty 2>&1 | head -40"


def test_a_pretty_tsc_error_paged_through_head_is_a_located_failure() -> None:
    # head cut the output before tsc's count of errors: only the header says it failed
    cut = PRETTY[: PRETTY.index("\n\nFound")]
    excerpt = failure_excerpt(cut, is_error=False, shell=True, command=PAGED)
    assert excerpt is not None
    assert excerpt.startswith(
        "src/app/blog/[slug]/page.tsx:12:5 - error TS2344: Type 'Props' does not satisfy"
    )
    assert "~" not in excerpt  # the code shown under it is no message
    # watch mode's closing line under --pretty is a message, not an error
    watched = "[\x1b[90m10:42:07 AM\x1b[0m] Found 0 errors. Watching for file changes.\n"
    assert failure_excerpt(watched, is_error=False, shell=True, command=PAGED) is None
    # the next error comes next, the count and its table per file (``Errors  Files``) last
    more = further_lines(PRETTY, excerpt, 3)
    assert more[0] == (
        "src/lib/db.ts:4:10 - error TS2305: Module '\"./schema\"' has no exported member 'Session'."
    )
    assert more[1:] == ("Found 2 errors in 2 files.", "Errors  Files")


def test_a_diagnostics_message_chain_takes_the_places_no_other_line_would() -> None:
    # tsc writes what a diagnostic chains under its header two spaces in per level; Next.js
    # type-checks the same route under two generated paths, so the two headers say one thing
    chain = (
        "Type 'typeof import(\"app/api/route\")' does not satisfy the constraint "
        "'RouteHandlerConfig<\"/api\">'.\n"
        "  Types of property 'GET' are incompatible.\n"
        "    Type 'RouteHandler' is not assignable to type '(request: NextRequest) => Response'.\n"
        "      Types of parameters 'context' and 'context' are incompatible.\n"
    )
    paged = (
        _pretty_header(".next/dev/types/validator.ts", 171, 31, 2344)
        + chain
        + "\n"
        + _pretty_header(".next/types/validator.ts", 171, 31, 2344)
        + chain
    )
    excerpt = failure_excerpt(paged, is_error=False, shell=True, command=PAGED)
    assert excerpt is not None and excerpt.startswith(".next/dev/types/validator.ts:171:31")
    more = further_lines(paged, excerpt, 3)
    assert more[0].startswith(".next/types/validator.ts:171:31 - error TS2344:")
    assert more[1:] == (
        "Types of property 'GET' are incompatible.",
        "Type 'RouteHandler' is not assignable to type '(request: NextRequest) => Response'.",
    )
    # every other line of a run comes first: the next error, the count and its table
    first = failure_excerpt(PRETTY, is_error=False, shell=True, command=PAGED)
    assert first is not None
    assert further_lines(PRETTY, first, 5)[1:3] == ("Found 2 errors in 2 files.", "Errors  Files")
    assert further_lines(PRETTY, first, 5)[3:] == (
        "Types of property 'params' are incompatible.",
        "Type '{ slug: string; }' is missing the following properties from type "
        "'Promise<any>': then, catch, finally",
    )
