"""The lines a failing program prints, across the tools agents run: what failure lines look like.

``failures`` decides whether a result failed, ``failure_ranks`` which line tells most; this room
knows the lines themselves (a compiler's located error, a test runner's failed test, git's
conflict, an OS error message, a PowerShell error record, the same words translated), so the
summary's section 4 and microcompact's kept lines read a failure by the same marks.
"""

from __future__ import annotations

import re

from contextwarden.summarizers.os_errors import OS_ERRORS
from contextwarden.summarizers.remembered import Remembered
from contextwarden.summarizers.task_runners import SCRIPT_FAILED, TASK_FAILED
from contextwarden.summarizers.toolchain_marks import (
    GO_TOO_NEW,
    RUST_PANIC,
    RUSTFMT_DIFF,
    go_build_failed,
    go_trace,
)
from contextwarden.summarizers.translated_marks import (
    COLON,
    COMMAND_NOT_FOUND,
    CONFLICT,
    ERROR_LABEL,
    FAILURE_CHARACTERS,
    FAILURE_WORDS,
    SCRIPT_LINE,
    SEPARATOR,
)

ERROR_LINE = re.compile(
    r"^(?:(?:error|fatal|ERROR|FATAL|Error|panic)(?:\[[^\]]*\]| \[\w+\])?[:!]"
    r"|npm (?:ERR!|error) "  # npm before and since v10
    r"|\[(?:ERROR|FATAL)\] "  # Maven
    r"|[\w.-]+ (?:ERROR|FATAL) "  # a tool naming itself first: mise ERROR, a log's ERROR
    r"|e: "  # kotlinc
    rf"|(?:{ERROR_LABEL}){COLON}"  # the same prefix where the tool prints it translated
    r"|##\[error\]"  # a GitHub Actions log's error annotation
    # … and the workflow command a step prints to make one (GitHub Docs, "Workflow commands
    # for GitHub Actions": "::error file=app.js,line=1,title=T::Something went wrong")
    r"|::error(?: [^:\n]*)?::"
    # the GitHub CLI's error for an API call refused (cli/go-gh, api.HTTPError.Error:
    # "HTTP 422: Validation Failed (https://api.github.com/…)", "HTTP 404 (…)")
    r"|HTTP [45]\d\d(?::| \()"
    # Docker's CLI ("Error response from daemon: No such container: web") and kubectl's
    # ("Error from server (NotFound): pods \"web\" not found")
    r"|Error (?:response from daemon|from server(?: \(\w+\))?): "
    # PHP's error display ("PHP Parse error:  syntax error, unexpected …"), Swift's trap
    # ("Fatal error: Index out of range"), sqlite3's shell ("Parse error: no such table: t")
    r"|(?:PHP )?(?:Parse|Fatal|Runtime) error: "
    r"|\s?\u2a2f "  # Next.js and Turbopack mark an error line with U+2A2F
    r"|\s*\u25cf (?:\w+ )*Error:"  # Jest's config errors: "● Validation Error:" (jest-validate)
    r"|\s*\u25cf Multiple configurations found:"  # … and jest-config's, its paths listed under it
    # a CLI's own message for what it was doing when it failed, the way Node's
    # console.error("Error starting session:", err) prints it: "Error reading tasks file: ENOENT…"
    r"|Error [a-z]+ing\b[^:\n]{0,80}?: \S"
    r").*$",
    re.M,
)
"""A line a program starts with its error prefix (``error:``, ``fatal:``, ``npm ERR!``…), and an
uncaught error as Node.js prints it when it carries a code (``Error [ERR_MODULE_NOT_FOUND]:
Cannot find package 'x'``, esbuild's ``Error [TransformError]:``; the Node.js "Errors" page), and
Jest's heading of an error in its configuration (jest-validate's ``● Validation Error:``, its
message on the next line: ``Watch plugin x cannot be found.``; jest-config's ``● Multiple
configurations found:`` over the files it found, then ``Implicit config resolution does not
allow multiple configuration files.``, exit code 1), after which no test ran."""
_DBT_TIME = r"\d\d:\d\d:\d\d\s+"
DBT_TIME = re.compile(rf"^{_DBT_TIME}")
"""The time dbt 1.5 and later print before each line of a run's log (``12:01:06  ``)."""
_DBT_NODE_ERROR = (
    rf"(?:{_DBT_TIME})?(?:Database|Compilation|Runtime|Parsing|Dependency) Error in "
    r"(?:model|test|seed|snapshot|macro|source|analysis|sql_operation|operation|unit_test) \S"
)
DBT_NODE_ERROR = re.compile(rf"^\s*{_DBT_NODE_ERROR}")
"""dbt's summary of a node that failed, after its run (``Database Error in model stg_orders
(models/staging/stg_orders.sql)``): the cause is the next line (``column "order_dt" does not
exist``), in words no failure mark knows."""
_TELLING_LINE = (
    r"^\s*(?:"
    # a located diagnostic: gcc, clang, rustc, javac, mypy (path:line: error:), tsc and MSBuild
    # (path(line,col): error TS2352: / error CS1002:), tsc --pretty, its default on a terminal
    # (path:line:col - error TS2352:), markdownlint (path:line:col error MD059)
    # MSBuild's canonical format also spaces its colons and may give no code
    # (strings.resx(2) : error BC30188:, NuGet.targets(156,5): error : Unable to load …)
    # … and GCC's kind translated (a.c:3:5: Fehler: …, a.h:4:10: 致命的エラー: …)
    r"\S+?(?:\(\d+(?:,\d+)*\)|(?::\d+)+)\s?(?::| -)?\s*(?:(?:fatal )?(?:error|fatal)"
    rf"(?:(?:\[\w+\])? ?:|\s+[A-Z]{{1,8}}\d+\b)|(?:{ERROR_LABEL}){COLON})"
    r"|\S+?(?::\d+)+:\s+[A-Z]{1,4}\d{3,4}\b"  # a linter's rule code: ruff, flake8, pylint
    r"|\d+:\d+\s+error\s+\S"  # eslint's stylish format, under its file's name
    r"|\d+:\d+\s+Error: \S"  # … and as next lint and next build print it
    # systemctl: "Unit x.service could not be found.", "Failed to start x.service: Access denied"
    r"|Unit [\w@.-]+ could not be found\."
    r"|Failed to [a-z-]+ [\w@.-]+\.(?:service|socket|timer|target|mount|path|slice|scope): "
    # MSBuild's canonical error whose origin is a tool or a file named without a line
    # (CSC : error CS…, /src/app.csproj : error NU1101: …); "Origin : error CODE : text",
    # learn.microsoft.com/visualstudio/msbuild/msbuild-diagnostic-format-for-tasks
    r"|\S+ : (?:fatal )?error(?: [A-Z]+\d+)? ?:"
    # TAP's failed test point, "not ok" with its number and description, unless a TODO or
    # SKIP directive excuses it (testanything.org, TAP 14 "Test Points", "Directives"): bats
    # and node:test print it when stdout is no terminal, as an agent's shell is not
    r"|not ok\b(?![^\n#]*#\s*(?:TODO|SKIP)\b)"
    # dotnet test's console logger: a failed test, then its duration in brackets
    # (microsoft/vstest, ConsoleLogger: "  Failed Ns.Class.Test [12 ms]")
    r"|Failed [\w.`+<>,()\[\]\\\" :=-]+? \[(?:< )?[\d.]+ (?:ms|s|m)(?: [\d.]+ (?:ms|s))?\]\s*$"
    r"|[\w.+-]+: (?:(?:fatal )?error: (?!ld returned|linker command failed)"  # gcc: fatal error:
    rf"|(?:{ERROR_LABEL}){SEPARATOR})"  # … translated: "gcc: фатальная ошибка: не заданы …"
    # git merge, rebase, cherry-pick, in English or translated (KONFLIKT (Inhalt): …)
    rf"|(?:CONFLICT|{CONFLICT}) ?[(\uff08][\w/ -]+[)\uff09]{COLON}"
    r"|\S+:\d+: leftover conflict marker\s*$"  # git diff --check
    r"|! \[(?:remote )?rejected\]"  # git push
    r"|(?:FAIL|FAILED|\(fail\)|--- FAIL:|[\u00d7\u2715\u2716\u2717\u274c])[ \t]+\S"
    r"|X Failed to \S"  # gh's failure icon without colour: "X Failed to log in to github.com …"
    # pnpm audit's table of an advisory opens with its severity and title, and lists only
    # those at or above --audit-level: "│ high │ Undici: Malicious WebSocket … │"
    r"|\u2502 (?:critical|high|moderate|low) +\u2502 \S"
    # a command's usage error: "cat: illegal option -- A", "tar: unrecognized option '--x'",
    # after its program's name and any further "name: " prefixes, which ".*" takes in too
    # (one "name: " then ".*": each line tried once, where "(?:name: )+.*" tried the rest of the
    # line again for every prefix it gave back, quadratic in a line of "x: x: x: …")
    r"|[\w.-]+: .*\b(?:illegal|invalid|unrecognized|unknown) (?:option|argument|command"
    r"|subcommand)\b"
    r"|\[?ERR_[A-Z][A-Z0-9_]{3,}\b"  # npm, pnpm ([ERR_PNPM_…]) and Node error codes
    r"|curl: \(\d+\) "  # curl's error and its exit code (curl(1), EXIT CODES)
    r"|jq: error \(at [^)\n]*\): "  # jq's runtime error: "jq: error (at <stdin>:3): …"
    r"|Undefined symbols for\b"  # Apple's ld
    r"|nginx: \[(?:emerg|alert|crit)\] \S"  # nginx -t: "nginx: [emerg] unknown directive …"
    # Elixir's uncaught error: "** (CompileError) lib/app.ex:3: undefined function foo/0 …"
    r"|\*\* \([A-Z][\w.]*\) \S"
    rf"|{_DBT_NODE_ERROR}"
    # a shell's or awk's syntax error: "bash: -c: line 2: syntax error: unexpected end of
    # file", "awk: syntax error at source line 3", dash's "sh: 1: Syntax error: …", zsh's
    # "(eval):1: parse error near `)'"
    r"|[\w.+/()-]+(?::\d+)?: (?:(?:[^\s:'\"`]+|line \d+): )*(?:[Ss]yntax|parse) error\b"
    r")"
)
"""A line opening so names what failed and where (``TELLING``)."""
_TELLING_WORDS = {
    "undefined reference to": r"\bundefined reference to\b",  # GNU ld
    "is not recognized as ": (
        r"\bis not recognized as (?:an internal or external command|(?:the|a) name of a cmdlet)"
    ),
}
"""… and so do these words anywhere in a line, each pattern by a string its matches hold."""
_TELLING_OS_ERROR = (
    rf": (?:{OS_ERRORS})\b"  # cp: cannot stat 'x': No such file or directory
    # … after a fullwidth colon, GCC's zh_CN "x.h", U+FF1A, then glibc's zh_CN ENOENT; apart,
    # so that the engine rules most places out by the ASCII colon alone
    rf"|\uff1a ?(?:{OS_ERRORS})\b"
)
"""… and an OS error message after a colon."""
TELLING = re.compile("|".join([_TELLING_LINE, *_TELLING_WORDS.values(), _TELLING_OS_ERROR]), re.M)
"""A line that names what failed and where: most telling of all."""
_TELLING_PARTS = (
    (re.compile(_TELLING_LINE, re.M), ""),
    *((re.compile(pattern), word) for word, pattern in _TELLING_WORDS.items()),
    (re.compile(_TELLING_OS_ERROR), ""),
)
"""``TELLING``'s parts, each with a string every match of it holds ("" when none is needed)."""


def tells(text: str) -> bool:
    """Whether a line of ``text`` is ``TELLING``: its parts looked for one at a time, the words
    only in a text that holds them. In one pattern the engine tries every part at every place
    of a long output; apart, the OS errors' part is found by its colon, and a word is looked
    for as a string, a fast scan in C."""
    return any(word in text and part.search(text) is not None for part, word in _TELLING_PARTS)


SHELL_PREFIX = (
    rf"(?:(?:/[\w/]+/)?(?:ba|da|k|z)?sh(?:: (?:line \d+|{SCRIPT_LINE})|: ?\d+)?|\(eval\):\d+)"
    rf"{SEPARATOR}"
)
"""How a shell starts a line it prints itself: ``bash: line 1: ``, dash's ``sh: 1: ``, zsh's
``zsh:1: `` (``(eval):1: `` when an agent runs the command through ``eval``)."""
SHELL_DID_NOT_RUN = re.compile(
    rf"^{SHELL_PREFIX}(?:no match(?:es found)?: \S"
    r"|command not found: \S"
    rf"|[^:\uff1a\n]+{SEPARATOR}(?:command not found|not found|{COMMAND_NOT_FOUND})\.?\s*$)"
)
"""The shell's own line saying a command did not run: a glob that matched nothing (zsh's
``zsh:1: no matches found: *.go`` under its ``NOMATCH`` option, bash's ``bash: no match: *.go``
under ``failglob``) or a word that is no command (``zsh:1: command not found: X``, bash's
``bash: line 1: X: command not found``, dash's ``sh: 1: X: not found``)."""
SHELL_WARNING = re.compile(rf"^{SHELL_PREFIX}warning: \S")
"""The shell's own warning (bash's ``bash: line 7: warning: here-document at line 1 delimited
by end-of-file (wanted `EOF')``, its ``parse.y``): in a failed output, why the shell read the
command line as it did, the cause of the syntax error it reports next."""
SERVER_LOG_ERROR = re.compile(
    r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(?:error|crit|alert|emerg)\] \d+#\d+: \S"
)
"""nginx's error log line at a failing level (``2026/01/02 03:04:05 [emerg] 41#41: unknown
directive "proxy_pas" in /etc/nginx/conf.d/app.conf:7``; nginx's ``error_log`` documentation:
levels ``error``, ``crit``, ``alert``, ``emerg``), as ``nginx -t`` prints it: the line that says
what failed, before the ``test failed`` verdict. It ranks as an error line but does not by
itself make an output failed: a log shown (``tail error.log``) holds such lines by the
hundred."""
HTTP_ERROR_HEADING = re.compile(
    r"^\s*(?:<[^<>]+>\s*)*[45]\d\d [A-Z][A-Za-z-]*(?: [A-Za-z-]+){0,4}\s*(?:</?[^<>]+>\s*)*$"
)
"""An HTTP error page's heading, its status and reason alone, in its tags or not (nginx's
``<title>504 Gateway Time-out</title>``, Apache's ``<h1>404 Not Found</h1>``, CloudFront's
``504 Gateway Timeout ERROR``): an error whatever it says besides (RFC 9110, 15.5 and 15.6)."""
TRAILER = re.compile(
    r"^(?:Found [1-9]\d* errors?\b"  # tsc, mypy, biome: the count of errors
    r"|Errors {2}Files\s*$"  # … and tsc --pretty's table of that count per file
    r"|FAIL\s*$|FAILED\s*$|FAILED \((?:failures|errors)=\d"  # a test run's verdict alone
    r"|\s*\+ (?:CategoryInfo|FullyQualifiedErrorId)\s*:"  # a PowerShell error record
    r"|At (?:line:\d+|\S.*:\d+) char:\d+"  # … and where the script was
    r"|(?:g?make|ninja)(?:\[\d+\])?: \*\*\*"  # make: *** [all] Error 2
    r"|BUILD FAILED\b|FAILURE: Build failed\b|\[INFO\] BUILD FAILURE\b"  # Gradle, Ant, Maven
    r"|x Build failed in [\d.]+m?s\b"  # Vite's, above its "error during build:" and the error
    r"|\[warn\] Code style issues (?:found|were found)\b"  # prettier --check, under the files
    # dbt's: "Completed with 1 error and 0 warnings:", "Done. PASS=2 WARN=0 ERROR=1 SKIP=0 …"
    rf"|(?:{_DBT_TIME})?(?:Completed with [1-9]\d* errors? and \d+ warnings?:"
    r"|Done\. PASS=\d+ WARN=\d+ ERROR=[1-9])"
    r"|collect2: error: ld returned|clang: error: linker command failed"
    r"|\s*[1-9]\d* (?:failed|failing)\s*$"  # Playwright's and Mocha's count of failed tests
    r"|Failed!\s+- Failed:"  # dotnet test's verdict: "Failed!  - Failed:     1, Passed: …"
    r"|test result: FAILED\."  # Rust's libtest: "test result: FAILED. 2 passed; 1 failed; …"
    r"|\s*\u00d7 Some errors were emitted while\b"  # Biome's verdict
    # git merge's and git pull's, under the CONFLICT lines naming the paths (builtin/merge.c)
    r"|Automatic merge failed; fix conflicts\b"
    rf"|(?:{SCRIPT_FAILED})"  # a package manager's: yarn, pnpm (``task_runners``)
    r")",
    re.M,
)
"""A line only a failure prints that says nothing of what failed: it tells a run failed, and is
the last line chosen."""
_RUNNER = r"E {2,}"
RUNNER_MARK = re.compile(rf"^{_RUNNER}")
"""pytest's mark before the lines of the exception a failed test raised."""
EXCEPTION_LINE = re.compile(
    rf"^(?:{_RUNNER})?"
    r"(?:[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b|(?<=E  )\s*assert\b).*$",
    re.M,
)
"""An exception raised, as Python, Java and others print it, and as pytest shows it under a
failed test (``E       ValueError: bad voice``, ``E       assert 1 == 2``)."""
INDENTED_EXCEPTION = re.compile(r"^\s+(?:[A-Za-z_][\w.]*)?(?:Error|Exception)(?: \[\w+\])?: \S")
"""...and as JavaScript test runners print it, indented under the failed test's title (Jest,
Vitest, Mocha, Playwright: ``    TypeError: x is not a constructor``, ``    Error: 500``)."""
_FAILURE_WORDS = re.compile(
    r"\b(?:errors?|err!|exception|fail(?:ed|s|ure)?|fatal|panic|cannot|can't|"
    r"could not|unable|not found|no such|denied|invalid|refused|timed out|not allow(?:ed)?"
    rf"|{FAILURE_WORDS})\b|{FAILURE_CHARACTERS}"
)
"""A line of a failed output that says what went wrong uses one of these words, in the languages
the tools print them in ("Traceback (most recent call last):" is a header saying nothing of
what went wrong, so not "traceback"). Matched in the line lower-cased: without ``re.I`` the
engine rules an alternative out by its first letter, twice as fast over a session's lines."""


GH_ANNOTATION = re.compile(r"^(?P<icon>[X!]) (?P<message>\S.*)\n(?=.*: \S*#\d+\s*$)", re.M)
"""An annotation as ``gh run view`` and ``gh run watch`` list it under ``ANNOTATIONS``: the
level's icon and the message, then the job's name and the annotation's path and line
(cli/cli, ``pkg/cmd/run/shared``: ``RenderAnnotations``, ``"%s: %s#%d"``). ``AnnotationSymbol``
gives ``X`` (``FailureIcon``) to a failure, ``!`` (``WarningIcon``) to a warning: ``X
Process completed with exit code 1.`` is why the job failed, ``! Failed to restore: Cache
service responded with 400`` a warning in a job that went on."""


def gh_annotation_level(lines: list[str], index: int) -> str | None:
    """``"failure"`` or ``"warning"`` when ``lines[index]`` is a ``GH_ANNOTATION``'s message
    line, the line after it naming the job and the annotation's place; None otherwise."""
    following = lines[index + 1] if index + 1 < len(lines) else ""
    found = GH_ANNOTATION.match(f"{lines[index]}\n{following}")
    if found is None:
        return None
    return "failure" if found.group("icon") == "X" else "warning"


def says_what_failed(line: str) -> bool:
    """True when ``line`` uses a word that names a failure (``error``, ``failed``, ``cannot``…)."""
    return _FAILURE_WORDS.search(line.lower()) is not None


def marks_a_failure(text: str) -> bool:
    """True when ``text`` holds a line only a failing program prints (an error prefix's line, a
    telling line, a verdict): an output whose exit code was lost still failed."""
    return _marked(text)


def _marks(text: str) -> bool:
    """``marks_a_failure``, worked out."""
    marks = (ERROR_LINE, TRAILER, RUST_PANIC, RUSTFMT_DIFF, GO_TOO_NEW, TASK_FAILED)
    marked = tells(text) or any(p.search(text) is not None for p in marks)
    marked = marked or _failure_annotation(text)
    return marked or go_build_failed(text) or go_trace(text)


_marked = Remembered(_marks)
"""A result is asked again at each compaction whose judgement reaches it, and ``TELLING`` scans
every line of it (a result's lines, most of the time it takes): once per text is enough."""


def _failure_annotation(text: str) -> bool:
    """``text`` lists a failure's annotation (``GH_ANNOTATION`` with gh's ``X`` icon); gh's
    heading is looked for first, so an output without one is not searched line by line."""
    if "ANNOTATIONS" not in text:
        return False
    return any(m.group("icon") == "X" for m in GH_ANNOTATION.finditer(text))
