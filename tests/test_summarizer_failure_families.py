"""The telling line of a failure, per family of tools agents run: each output (written from the
tool's documented format) is read as it comes from a shell whose exit code was lost (piped into
``tail``), so the failure lines alone must say it failed; the line picked first is the one naming
what failed, the summary and microcompact keep the same lines, and a success is not flagged."""

# ruff: noqa: RUF001 (CJK colons and Cyrillic text on purpose)

from __future__ import annotations

import pytest

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.failure_quotes import further_lines
from contextwarden.summarizers.failure_ranks import TELLING_RANK, TRAILER_RANK, line_rank
from contextwarden.summarizers.failures import failure_excerpt, failure_lines

FAMILIES = {
    "git rebase conflict": (
        "Auto-merging lib/parse.c\n"
        "CONFLICT (content): Merge conflict in lib/parse.c\n"
        "error: could not apply 1a2b3c4... parse: accept tabs\n"
        "hint: Resolve all conflicts manually, mark them as resolved with\n"
        'hint: "git add/rm <conflicted_files>", then run "git rebase --continue".\n'
        "Could not apply 1a2b3c4... parse: accept tabs",
        "CONFLICT (content): Merge conflict in lib/parse.c",
    ),
    "git push rejected": (
        "To github.com:acme/site.git\n"
        " ! [rejected]        main -> main (fetch first)\n"
        "error: failed to push some refs to 'github.com:acme/site.git'",
        "! [rejected]        main -> main (fetch first)",
    ),
    "powershell error record": (
        "Get-Item : Cannot find path 'C:\\build\\out.zip' because it does not exist.\n"
        "At line:1 char:1\n"
        "+ Get-Item C:\\build\\out.zip\n"
        "    + CategoryInfo          : ObjectNotFound: (C:\\build\\out.zip:String) [Get-Item], "
        "ItemNotFoundException\n"
        "    + FullyQualifiedErrorId : PathNotFound,Microsoft.PowerShell.Commands.GetItemCommand",
        "Get-Item : Cannot find path 'C:\\build\\out.zip' because it does not exist.",
    ),
    # A parser error's message comes under the carets and names no failure word: as Cursor's
    # terminal showed it in Bucur21/PaperBites's SpecStory history (MIT, commit 7a7c53c).
    "powershell parser error": (
        "At C:\\Users\\bucur\\AppData\\Local\\Temp\\ps-script-c6ee5b49.ps1:106 char:79\n"
        "+ ... erBites\\services\\api; npm install bcryptjs @fastify/cookie && npm ins ...\n"
        "+                                                                ~~\n"
        "The token '&&' is not a valid statement separator in this version.\n"
        "    + CategoryInfo          : ParserError: (:) [], ParentContainsErrorRecordException\n"
        "    + FullyQualifiedErrorId : InvalidEndOfLine",
        "The token '&&' is not a valid statement separator in this version.",
    ),
    "powershell unknown command": (
        "nmake: The term 'nmake' is not recognized as a name of a cmdlet, function, script file, "
        "or executable program.",
        "nmake: The term 'nmake' is not recognized as a name of a cmdlet, function, script file, "
        "or executable program.",
    ),
    # gh prints its failure icon as "X" (cli/cli's auth status: "%s Failed to log in to %s
    # account %s (%s)"), then what to do
    "gh auth status": (
        "github.com\n"
        "  X Failed to log in to github.com account monalisa (GH_TOKEN)\n"
        "  - Active account: true\n"
        "  - The token in GH_TOKEN is invalid.\n"
        "  - To re-authenticate, run: gh auth login -h github.com",
        "X Failed to log in to github.com account monalisa (GH_TOKEN)",
    ),
    "curl": (
        "  % Total    % Received % Xferd  Average Speed\n"
        "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Couldn't connect to server",
        "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Couldn't connect to server",
    ),
    "jq runtime error": (
        'jq: error (at <stdin>:12): Cannot index string with string "name"',
        'jq: error (at <stdin>:12): Cannot index string with string "name"',
    ),
    "docker daemon": (
        "Error response from daemon: No such container: web",
        "Error response from daemon: No such container: web",
    ),
    "php parse error": (
        'PHP Parse error:  syntax error, unexpected token "}" in /srv/app/index.php on line 12',
        'PHP Parse error:  syntax error, unexpected token "}" in /srv/app/index.php on line 12',
    ),
    "sqlite3 shell": (
        "Parse error: no such table: runtime_flags",
        "Parse error: no such table: runtime_flags",
    ),
    # tsc's overload error: the line after "gave the following error." says which type
    "tsc overload": (
        "vite.config.ts(8,3): error TS2769: No overload matches this call.\n"
        "  The last overload gave the following error.\n"
        "    Type 'Plugin<any>[]' is not assignable to type 'PluginOption'.\n"
        "      Type 'Plugin<any>[]' is not assignable to type 'PluginOption[]'.",
        "vite.config.ts(8,3): error TS2769: No overload matches this call.",
    ),
    "win32 message": (
        "Loading profile\nbench.test: open bench.test: The system cannot find the file specified.\n"
        "Showing nodes accounting for 0s",
        "bench.test: open bench.test: The system cannot find the file specified.",
    ),
    "msbuild": (
        "  Determining projects to restore...\n"
        "Program.cs(12,17): error CS1002: ; expected [/src/App/App.csproj]\n"
        "Build FAILED.",
        "Program.cs(12,17): error CS1002: ; expected [/src/App/App.csproj]",
    ),
    "go build": (
        "# example.com/app/store\nstore/db.go:41:9: undefined: openPool\n",
        "store/db.go:41:9: undefined: openPool",
    ),
    "go test": (
        "--- FAIL: TestParse (0.00s)\n    parse_test.go:18: got 3 fields, want 4\nFAIL\n"
        "FAIL\texample.com/app/parse\t0.012s",
        "--- FAIL: TestParse (0.00s)",
    ),
    "rustc": (
        "   Compiling app v0.1.0\nerror[E0308]: mismatched types\n --> src/main.rs:4:18\n"
        'error: could not compile `app` (bin "app") due to 1 previous error',
        "error[E0308]: mismatched types",
    ),
    "eslint stylish": (
        "/src/app/index.js\n   12:5  error  'cfg' is assigned a value but never used  "
        "no-unused-vars\n\n\u2716 1 problem (1 error, 0 warnings)",
        "12:5  error  'cfg' is assigned a value but never used  no-unused-vars",
    ),
    # next build, as Next.js prints a failed type check, a module webpack cannot resolve and its
    # ESLint findings: the location on a line of its own, the diagnostic under it
    "next build type error": (
        "   Linting and checking validity of types ...\nFailed to compile.\n\n"
        "./src/components/Avatar3D.tsx:32:5\n"
        "Type error: Module '\"lucide-react\"' has no exported member 'Instagram'.\n\n"
        "  30 | import {\n> 32 |   Instagram,\n     |   ^\n"
        "Next.js build worker exited with code: 1 and signal: null",
        "./src/components/Avatar3D.tsx:32:5 "
        "Type error: Module '\"lucide-react\"' has no exported member 'Instagram'.",
    ),
    "next build module not found": (
        "Failed to compile.\n\n./src/app/admin/page.tsx:5:1\n"
        "Module not found: Can't resolve '@/lib/auth/requireAdmin'\n\n"
        "https://nextjs.org/docs/messages/module-not-found\n\n"
        "> Build failed because of webpack errors",
        "./src/app/admin/page.tsx:5:1 Module not found: Can't resolve '@/lib/auth/requireAdmin'",
    ),
    "next lint": (
        "Failed to compile.\n\n./src/app/page.tsx\n"
        "59:10  Error: 'AmbientBackground' is not defined.  react/jsx-no-undef\n\n"
        "info  - Need to disable some ESLint rules? Learn more here: "
        "https://nextjs.org/docs/basic-features/eslint#disabling-rules",
        "59:10  Error: 'AmbientBackground' is not defined.  react/jsx-no-undef",
    ),
    # vite build: its verdict, then what Rollup could not do
    "vite build": (
        "vite v5.0.0 building for production...\n\u2713 34 modules transformed.\n"
        "x Build failed in 1.02s\nerror during build:\n"
        '[vite]: Rollup failed to resolve import "axios" from "/home/u/app/src/api.ts".\n'
        "This is most likely unintended because it can break your application at runtime.",
        'error during build: [vite]: Rollup failed to resolve import "axios" from '
        '"/home/u/app/src/api.ts".',
    ),
    # dbt run (dbt 1.5+ prints the time first): the node that failed and, under it, why
    "dbt run": (
        "12:01:02  Running with dbt=1.7.4\n"
        "12:01:05  1 of 3 ERROR creating sql view model public.stg_orders .... [ERROR in 0.05s]\n"
        "12:01:06  Completed with 1 error and 0 warnings:\n12:01:06  \n"
        "12:01:06  Database Error in model stg_orders (models/staging/stg_orders.sql)\n"
        '12:01:06    column "order_dt" does not exist\n'
        "12:01:06    LINE 5:     order_dt as ordered_at\n12:01:06  \n"
        "12:01:06  Done. PASS=2 WARN=0 ERROR=1 SKIP=0 TOTAL=3",
        "12:01:06  Database Error in model stg_orders (models/staging/stg_orders.sql) "
        'column "order_dt" does not exist',
    ),
    "nginx -t": (
        'nginx: [emerg] unknown directive "proxy_pas" in /etc/nginx/sites-enabled/app:12\n'
        "nginx: configuration file /etc/nginx/nginx.conf test failed",
        'nginx: [emerg] unknown directive "proxy_pas" in /etc/nginx/sites-enabled/app:12',
    ),
    "elixir compile error": (
        "== Compilation error in file lib/app.ex ==\n"
        "** (CompileError) lib/app.ex:3: undefined function foo/0\n",
        "** (CompileError) lib/app.ex:3: undefined function foo/0",
    ),
    "prettier --check": (
        "Checking formatting...\n[warn] src/app.ts\n"
        "[warn] Code style issues found in the above file. Run Prettier with --write to fix.",
        "[warn] Code style issues found in the above file. Run Prettier with --write to fix.",
    ),
    # webpack: the module and where in it, the message on the next line
    "webpack": (
        "ERROR in ./src/index.js 3:0-28\n"
        "Module not found: Error: Can't resolve './App' in '/home/u/app/src'\n\n"
        "webpack 5.88.0 compiled with 1 error in 512 ms",
        "ERROR in ./src/index.js 3:0-28 "
        "Module not found: Error: Can't resolve './App' in '/home/u/app/src'",
    ),
    # docker run says it will pull an image it lacks before the pull's own error
    "docker run pull denied": (
        "Unable to find image 'myapp:latest' locally\n"
        "docker: Error response from daemon: pull access denied for myapp, repository does not "
        "exist or may require 'docker login'.",
        "docker: Error response from daemon: pull access denied for myapp, repository does not "
        "exist or may require 'docker login'.",
    ),
    "markdownlint": (
        "Linting: 1 file\nSummary: 1 issue in 1 file\n"
        "docs/intro.md:7:81 error MD013/line-length Line length [Expected: 80; Actual: 95]",
        "docs/intro.md:7:81 error MD013/line-length Line length [Expected: 80; Actual: 95]",
    ),
    "ruff": (
        "app/cli.py:3:8: F401 [*] `sys` imported but unused\nFound 1 error.",
        "app/cli.py:3:8: F401 [*] `sys` imported but unused",
    ),
    "gradle": (
        "> Task :app:compileKotlin FAILED\n"
        "e: file:///w/app/src/main/kotlin/Main.kt:5:13 Unresolved reference: lunch\n"
        "FAILURE: Build failed with an exception.\n* What went wrong:\n"
        "Execution failed for task ':app:compileKotlin'.",
        "e: file:///w/app/src/main/kotlin/Main.kt:5:13 Unresolved reference: lunch",
    ),
    "maven": (
        "[INFO] BUILD FAILURE\n[ERROR] /w/src/main/java/App.java:[7,9] cannot find symbol\n",
        "[ERROR] /w/src/main/java/App.java:[7,9] cannot find symbol",
    ),
    "linker": (
        "/usr/bin/ld: main.o: in function `main':\n"
        "main.c:(.text+0x1a): undefined reference to `parse_args'\n"
        "collect2: error: ld returned 1 exit status",
        "main.c:(.text+0x1a): undefined reference to `parse_args'",
    ),
    "make": (
        "cc -c util.c\nutil.c:9:1: error: expected ';' before '}' token\n"
        "make: *** [Makefile:4: util.o] Error 1",
        "util.c:9:1: error: expected ';' before '}' token",
    ),
    "php": (
        'PHP Parse error:  syntax error, unexpected token "}" in /w/index.php on line 12',
        'PHP Parse error:  syntax error, unexpected token "}" in /w/index.php on line 12',
    ),
    "ruby": (
        "app.rb:3:in `<main>': undefined local variable or method `nme' for main (NameError)",
        "app.rb:3:in `<main>': undefined local variable or method `nme' for main (NameError)",
    ),
    "docker": (
        '#5 [2/3] RUN make\n#5 ERROR: process "/bin/sh -c make" did not complete\n'
        'ERROR: failed to solve: process "/bin/sh -c make" did not complete successfully',
        'ERROR: failed to solve: process "/bin/sh -c make" did not complete successfully',
    ),
    "kubectl": (
        'Error from server (NotFound): deployments.apps "web" not found',
        'Error from server (NotFound): deployments.apps "web" not found',
    ),
    "terraform": (
        "\u2577\n\u2502 Error: Invalid reference\n\u2502\n\u2502   on main.tf line 4",
        "\u2502 Error: Invalid reference",
    ),
    "sql": (
        'psql:init.sql:3: ERROR:  relation "users" does not exist',
        'psql:init.sql:3: ERROR:  relation "users" does not exist',
    ),
    "posix cp": (
        "cp: cannot stat 'dist/app.js': No such file or directory",
        "cp: cannot stat 'dist/app.js': No such file or directory",
    ),
    "german strerror": (
        "ls: Zugriff auf 'build' nicht möglich: Datei oder Verzeichnis nicht gefunden",
        "ls: Zugriff auf 'build' nicht möglich: Datei oder Verzeichnis nicht gefunden",
    ),
    # git's fr.po writes both prefixes with a space before the colon ("fatal\u00a0: "); its die()
    # line is picked as "fatal: not a git repository" is before "error: …" in English
    "french git": (
        "fatal : pas un dépôt git\nerreur : impossible de lire l'arbre",
        "fatal : pas un dépôt git",
    ),
    "ruff full format": (
        "E501 Line too long (93 > 88)\n  --> tests/conftest.py:150:89\n    |\n"
        "150 |     # Real API returns names with descriptions\n    |\n\nFound 1 error.",
        "E501 Line too long (93 > 88)",
    ),
    "rustc, its location on the next line": (
        "   Compiling tij v0.4.0\nerror[E0412]: cannot find type `DiffFormat` in this scope\n"
        "  --> src/ui/diff.rs:41:17\n   |\n41 |     format: DiffFormat,\n   |             "
        "^^^^^^^^^^ not found in this scope\n\nerror: could not compile `tij` (lib) due to 1 "
        "previous error",
        "error[E0412]: cannot find type `DiffFormat` in this scope",
    ),
    "a tool naming itself before ERROR": (
        "mise ERROR Config files in ~/app/mise.toml are not trusted.\n"
        "Trust them with `mise trust`.",
        "mise ERROR Config files in ~/app/mise.toml are not trusted.",
    ),
    "russian": ("Загрузка\nошибка: файл не найден", "ошибка: файл не найден"),
    "chinese": ("正在构建\n错误：找不到模块 app", "错误：找不到模块 app"),
}
"""Each family: an output whose exit code was lost, and the line a reader must be told first."""


@pytest.mark.parametrize(("output", "telling"), FAMILIES.values(), ids=FAMILIES.keys())
def test_the_telling_line_is_picked_first(output: str, telling: str) -> None:
    assert failure_excerpt(output, is_error=True, shell=True) == telling


@pytest.mark.parametrize(
    "family",
    [
        "git rebase conflict",
        "git push rejected",
        "win32 message",
        "msbuild",
        "go test",
        "markdownlint",
        "ruff",
        "linker",
        "make",
        "posix cp",
        "german strerror",
        "powershell unknown command",
        "gh auth status",
        "curl",
        "jq runtime error",
        "docker daemon",
        "kubectl",
        "php parse error",
        "sqlite3 shell",
    ],
)
def test_an_output_whose_exit_code_was_lost_still_failed(family: str) -> None:
    output, telling = FAMILIES[family]
    assert failure_excerpt(output, is_error=False, shell=True, command="build | tail") == telling


@pytest.mark.parametrize(
    "output",
    [
        "Successfully rebased and updated refs/heads/fix.\n",
        "To github.com:acme/site.git\n   1a2b3c4..5d6e7f8  main -> main",
        "Build succeeded.\n    0 Warning(s)\n    0 Error(s)",
        "ok  \texample.com/app/parse\t0.012s",
        "=== RUN   TestParse\n    parse_test.go:18: parsed 4 fields\n--- PASS: TestParse (0.00s)"
        "\nPASS",
        "cache/map.go:204:13: possible misuse of unsafe.Pointer",  # vet's advice: no exit code
        "   Compiling app v0.1.0\n    Finished `dev` profile [unoptimized] in 1.2s",
        "All checks passed!",
        "BUILD SUCCESSFUL in 4s",
        "Summary: 0 issues in 1 file",
        "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.",
        "deployment.apps/web created",
    ],
)
def test_a_success_is_not_flagged(output: str) -> None:
    assert failure_excerpt(output, is_error=False, shell=True, command="build | tail") is None


def test_pytest_keeps_the_raised_exception_beside_the_failed_test() -> None:
    """A failed test's line names the test; its E-line says what it raised (said once: when the
    summary line already gives the exception, the E-line is not repeated)."""
    output = (
        "    def test_unknown_voice(self):\n>       resolve_voice('zzz')\n"
        "E       app.types.VoiceNotFoundError: zzz\n\napp/voices.py:367: VoiceNotFoundError\n"
        "FAILED tests/test_voices.py::test_unknown_voice\n"
        "FAILED tests/test_voices.py::test_other_voice\n"
        "========================= 2 failed, 238 passed in 15.54s ========================="
    )
    excerpt = failure_excerpt(output, is_error=True, shell=True)
    assert excerpt == "FAILED tests/test_voices.py::test_unknown_voice"
    assert "E       app.types.VoiceNotFoundError: zzz" in further_lines(output, excerpt, 3)
    stated = output.replace("test_unknown_voice\n", "test_unknown_voice - app.types.Voice"
                            "NotFoundError: zzz\n")  # fmt: skip
    excerpt = failure_excerpt(stated, is_error=True, shell=True)
    assert excerpt is not None and excerpt.endswith("VoiceNotFoundError: zzz")
    assert not any("E   " in line for line in further_lines(stated, excerpt, 3))


def test_a_warning_with_a_location_is_not_a_failure() -> None:
    output = "warning: unused variable: `x`\n --> src/main.rs:2:9\n    Finished `dev` profile"
    assert failure_excerpt(output, is_error=False, shell=True, command="cargo build | tail") is None


def test_a_verdict_alone_ranks_after_what_failed() -> None:
    """A run's verdict (``FAIL``, make's ``***``, a PowerShell record's fields) says a run
    failed, not what: kept after the lines that do."""
    assert line_rank("FAIL") == TRAILER_RANK
    assert line_rank("FAILED (errors=1)") == TRAILER_RANK
    assert line_rank("make: *** [Makefile:4: util.o] Error 1") == TRAILER_RANK
    assert line_rank("    + FullyQualifiedErrorId : PathNotFound") == TRAILER_RANK
    assert line_rank("CONFLICT (add/add): Merge conflict in go.mod") == TELLING_RANK
    assert line_rank("hint: Resolve all conflicts manually") is None


def test_the_further_lines_are_ranked_not_in_output_order() -> None:
    """After a rebase's first conflict come its error line, then its next conflict: a few lines
    say the different things the output says; its advice is never kept."""
    output = (
        "CONFLICT (content): Merge conflict in a.go\n"
        "hint: after resolving the conflicts, mark the corrected paths\n"
        "error: could not apply 1a2b3c4... wip\n"
        "CONFLICT (modify/delete): b.go deleted in HEAD and modified in 1a2b3c4.\n"
    )
    excerpt = failure_excerpt(output, is_error=True, shell=True)
    assert excerpt == "CONFLICT (content): Merge conflict in a.go"
    assert further_lines(output, excerpt, 2) == (
        "error: could not apply 1a2b3c4... wip",
        "CONFLICT (modify/delete): b.go deleted in HEAD and modified in 1a2b3c4.",
    )


def test_a_merges_verdict_comes_after_every_conflict() -> None:
    """``git merge`` prints a ``CONFLICT`` line per path, then its verdict, which names none
    (builtin/merge.c: ``Automatic merge failed; fix conflicts and then commit the result.``):
    the lines kept name the paths to resolve first."""
    paths = ("CHANGELOG.md", "src/a.ts", "src/b.ts", "src/c.ts")
    output = "".join(
        f"Auto-merging {p}\nCONFLICT (content): Merge conflict in {p}\n" for p in paths
    )
    output += "Automatic merge failed; fix conflicts and then commit the result.\n"
    call = ToolUseBlock("m", "Bash", {"command": "git merge origin/main"})
    kept = failure_lines(call, ToolResultBlock("m", output, is_error=True), 4)
    assert kept == tuple(f"CONFLICT (content): Merge conflict in {p}" for p in paths)
    assert line_rank("Automatic merge failed; fix conflicts and then commit the result.") == (
        TRAILER_RANK
    )


def test_a_line_ending_in_a_colon_brings_what_it_introduces() -> None:
    text = "InputValidationError: Search failed due to the following issue:\nUnknown flag `-z`"
    assert failure_excerpt(text, is_error=True, shell=False) == (
        "InputValidationError: Search failed due to the following issue: Unknown flag `-z`"
    )


def test_a_tools_message_keeps_the_line_after_its_excerpt() -> None:
    """An edit that did not find its text says so, then quotes the text: the summary and a
    cleared result keep both, and the same."""
    call = ToolUseBlock(id="e1", name="Edit", input={"file_path": "a.py", "old_string": "x = 1"})
    result = ToolResultBlock(
        tool_use_id="e1",
        content="<tool_use_error>String to replace not found in file.\n"
        "String: x = 1</tool_use_error>",
        is_error=True,
    )
    assert failure_lines(call, result, 2) == (
        "String to replace not found in file.",
        "String: x = 1",
    )


def test_a_javascript_test_runner_keeps_why_each_test_failed() -> None:
    """Jest (and Vitest, Playwright) indent the error a test threw under its ``●`` title, or
    give only a message there: that line, not the suite's ``FAIL`` verdict alone, says why."""
    output = (
        "FAIL tests/api.test.ts\n"
        "  ● Console\n\n    console.log\n      listening on 3000\n\n"
        "  ● API › creates an order\n\n"
        "    TypeError: OrderStore is not a constructor\n\n"
        "      12 |   const store = new OrderStore();\n"
        "  ● Test suite failed to run\n\n"
        "    Cannot find module '../lib/clock' from 'tests/clock.test.ts'\n\n"
        "Tests:       2 failed, 5 passed, 7 total"
    )
    kept = failure_lines(ToolUseBlock("t", "Bash", {"command": "npx jest"}),
                         ToolResultBlock("t", output), 4)  # fmt: skip
    assert "TypeError: OrderStore is not a constructor" in kept
    assert "Cannot find module '../lib/clock' from 'tests/clock.test.ts'" in kept
    assert "console.log" not in kept  # what ● Console heads is logged output, not a failure
    assert line_rank("    Error: Failed to create order: 500") is not None
    assert line_rank("    raise ValueError(name)") is None  # code, not what was raised


def test_nextjs_marks_its_error_lines() -> None:
    output = " ⚠ Attempted to load @next/swc-wasm-web\n ⨯ Failed to load SWC binary for linux/x64\n"
    assert failure_excerpt(output, is_error=False, shell=True, command="next build | tail") == (
        "⨯ Failed to load SWC binary for linux/x64"
    )


def test_tscs_overload_error_keeps_the_type_that_did_not_fit() -> None:
    output, telling = FAMILIES["tsc overload"]
    assert further_lines(output, telling, 2) == (
        "The last overload gave the following error. "
        "Type 'Plugin<any>[]' is not assignable to type 'PluginOption'.",
        # the chain's next level, in a place no other line takes (``tsc_chained``)
        "Type 'Plugin<any>[]' is not assignable to type 'PluginOption[]'.",
    )
