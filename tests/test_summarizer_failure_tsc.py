"""tsc's errors read in both layouts TypeScript prints (``toolchain_marks.TSC_HEADER``):
``--pretty false``'s ``path(line,col): error TSnnnn:`` and ``--pretty``'s ``path:line:col - error
TSnnnn:`` (the default on a terminal, coloured: ``formatDiagnosticsWithColorAndContext``), each
with the message chain it indents two spaces a level under the header. Outputs are trimmed from
a Next.js app type-checked through ``| head``, which hides tsc's exit code."""

from __future__ import annotations

from contextwarden.summarizers.failures import failure_excerpt, further_lines

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


def test_a_pretty_tsc_error_paged_through_head_is_a_located_failure_with_its_chain() -> None:
    excerpt = failure_excerpt(PRETTY, is_error=False, shell=True, command=PAGED)
    assert excerpt is not None
    assert excerpt.startswith(
        "src/app/blog/[slug]/page.tsx:12:5 - error TS2344: Type 'Props' does not satisfy"
    )
    # the chain says which property did not fit; the code and its ~~~ marks are no message
    assert "Types of property 'params' are incompatible. Type '{ slug: string; }'" in excerpt
    assert "~" not in excerpt
    # watch mode's closing line under --pretty is a message, not an error
    watched = "[\x1b[90m10:42:07 AM\x1b[0m] Found 0 errors. Watching for file changes.\n"
    assert failure_excerpt(watched, is_error=False, shell=True, command=PAGED) is None
    more = further_lines(PRETTY, excerpt, 2)
    assert more[0] == (
        "src/lib/db.ts:4:10 - error TS2305: Module '\"./schema\"' has no exported member 'Session'."
    )


def test_a_plain_tsc_error_keeps_its_chain_too() -> None:
    """``--pretty false`` indents the same chain under ``path(line,col): error``."""
    plain = (
        "src/components/Chart.tsx(41,7): error TS2322: Type '{ data: Point[]; }' is not "
        "assignable to type 'IntrinsicAttributes & ChartProps'.\n"
        "  Property 'data' does not exist on type 'IntrinsicAttributes & ChartProps'.\n"
    )
    excerpt = failure_excerpt(plain, is_error=True, shell=True, command="npx tsc --noEmit")
    assert excerpt == (
        "src/components/Chart.tsx(41,7): error TS2322: Type '{ data: Point[]; }' is not "
        "assignable to type 'IntrinsicAttributes & ChartProps'. Property 'data' does not exist "
        "on type 'IntrinsicAttributes & ChartProps'."
    )
