"""Go and Rust failures read in the layouts their toolchains print (``toolchain_marks``): the
package header ``go build`` puts above a compile error, the lines a Go diagnostic goes on over,
the runtime's goroutine trace, a Rust thread's panic and the label rustc writes under its code.
Outputs are trimmed from real sessions (a Go backend built through ``| head``, a Go prompt
engine's crash through ``| tail``, a Rust CLI's ``cargo test``)."""

from __future__ import annotations

from contextwarden.summarizers.failure_quotes import further_lines
from contextwarden.summarizers.failures import failure_excerpt

GO_BUILD = (
    "# github.com/acme/backend/internal/api\n"
    "internal/api/job.go:1081:77: not enough arguments in call to resolver.Query().JobMetrics\n"
    '\thave ("context".Context, string, []string, nil)\n'
    '\twant ("context".Context, string, []string, *int, *model.ResampleAlgo)\n'
)
"""cmd/go's ``Shell.reportCmd`` prints ``# <import path>`` above a failed compile step's output;
types2 goes on with ``have``/``want`` one tab in."""


def test_a_go_build_paged_through_head_failed_and_its_error_says_what_it_wanted() -> None:
    excerpt = failure_excerpt(
        GO_BUILD, is_error=False, shell=True, command="go build ./... 2>&1 | head -30"
    )
    assert excerpt is not None
    assert excerpt.startswith("internal/api/job.go:1081:77: not enough arguments in call")
    assert excerpt.endswith('want ("context".Context, string, []string, *int, *model.ResampleAlgo)')
    # golangci-lint shows the code under its located line, one tab in: not the error's words
    lint = (
        "internal/npm/npm.go:146:23: Error return value of `resp.Body.Close` is not checked "
        "(errcheck)\n\tdefer resp.Body.Close()\n\t                    ^\n1 issues:\n* errcheck: 1"
    )
    linted = failure_excerpt(lint, is_error=True, shell=True, command="golangci-lint run")
    assert linted is not None and linted.endswith("is not checked (errcheck)")
    # ``go test -v`` prints ``t.Log`` lines located the same way when every test passes
    passed = "=== RUN   TestParse\n    parse_test.go:12: parsed 3 rows\n--- PASS: TestParse\nok"
    assert failure_excerpt(passed, is_error=False, shell=True, command="go test -v ./...") is None


GO_TRACE = (
    "=== run 2 ===\n"
    "goroutine 12 [running]:\n"
    "panic({0x7ff6d4c1e2a0?, 0x7ff6d4f0b9c0?})\n"
    "\tC:/Program Files/Go/src/runtime/panic.go:792 +0x132\n"
    "github.com/acme/prompt/src/segments.(*Git).Enabled(0x1cf1a2872540)\n"
    "\tC:/Users/dev/prompt/src/segments/git.go:184 +0xbc\n"
    "created by github.com/acme/prompt/src/engine.(*Engine).write in goroutine 8\n"
    "\tC:/Users/dev/prompt/src/engine/segments.go:98 +0x40\n"
    "(exit=0)\n"
)
"""runtime/traceback.go: each frame is the call, then a tab, its file and line and ``+0x`` its
offset; ``tail`` cut the ``panic:`` line off and left the pipe's exit code 0."""


def test_a_go_trace_a_pager_cut_says_where_the_program_panicked() -> None:
    command = './prompt stream --config repro.json 2>&1 | tail -8; echo "(exit=$?)"'
    excerpt = failure_excerpt(GO_TRACE, is_error=False, shell=True, command=command)
    assert excerpt == "github.com/acme/prompt/src/segments.(*Git).Enabled(0x1cf1a2872540)"


CARGO_TEST = (
    "test shell::tests::rc_lists_commands ... ok\n"
    "test shell::tests::rc_has_no_duplicates ... FAILED\n\n"
    "failures:\n\n"
    "---- shell::tests::rc_has_no_duplicates stdout ----\n\n"
    "thread 'shell::tests::rc_has_no_duplicates' (2443608) panicked at src/shell.rs:200:9:\n"
    "assertion `left == right` failed\n  left: 2\n right: 1\n"
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n"
    "test result: FAILED. 89 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n\n"
    "error: test failed, to rerun pass `--lib`\nExit code 101"
)
"""The standard library's panic hook: ``thread '<name>' (<id>) panicked at <file:line:col>:``,
the message on the next line."""


def test_a_rust_test_failure_is_quoted_by_where_it_panicked_and_why() -> None:
    excerpt = failure_excerpt(CARGO_TEST, is_error=True, shell=True, command="cargo test 2>&1")
    assert excerpt == (
        "thread 'shell::tests::rc_has_no_duplicates' (2443608) panicked at src/shell.rs:200:9: "
        "assertion `left == right` failed"
    )


CARGO_BUILD = (
    "   Compiling dual v2.0.0\n"
    "error[E0061]: this function takes 5 arguments but 3 arguments were supplied\n"
    "   --> tests/e2e.rs:96:16\n"
    "    |\n"
    ' 96 |     let args = build_create_args(&name, &dir, "node:20");\n'
    "    |                ^^^^^^^^^^^^^^^^^-------------------- two arguments of type "
    "`&HashMap<String, String>` and `&[String]` are missing\n"
    "    |\n"
    "note: function defined here\n\n"
    "error[E0063]: missing fields `volumes` and `extra` in initializer of `RepoHints`\n"
    "   --> tests/fixtures/mod.rs:103:17\n"
    "    |\n"
    "103 |     let hints = RepoHints {\n"
    "    |                 ^^^^^^^^^ missing `volumes` and `extra`\n\n"
    "Some errors have detailed explanations: E0061, E0063.\n"
    "For more information about an error, try `rustc --explain E0061`.\n"
    'error: could not compile `dual` (test "e2e") due to 2 previous errors\nExit code 101'
)
"""rustc's human output: the header, ``-->`` where, the code, and under it the span's label."""


def test_a_rustc_error_keeps_the_label_under_its_code_when_it_says_more() -> None:
    excerpt = failure_excerpt(CARGO_BUILD, is_error=True, shell=True, command="cargo test")
    assert excerpt == (
        "error[E0061]: this function takes 5 arguments but 3 arguments were supplied: two "
        "arguments of type `&HashMap<String, String>` and `&[String]` are missing"
    )
    more = further_lines(CARGO_BUILD, excerpt, 3)
    # the second error's label only repeats its header; rustc's advice names no failure
    assert set(more) == {
        "error[E0063]: missing fields `volumes` and `extra` in initializer of `RepoHints`",
        'error: could not compile `dual` (test "e2e") due to 2 previous errors',
    }


CLIPPY = (
    "    Checking dual v2.0.0 (/w/dual)\n"
    "warning: this `if` statement can be collapsed\n"
    "   --> src/main.rs:348:5\n"
    "    |\n"
    "348 | /     if is_new_container {\n"
    "349 | |         if let Some(ref setup) = hints.setup {\n"
    "    | |_____^\n"
    "    |\n"
    "    = note: `#[warn(clippy::collapsible_if)]` on by default\n\n"
    'warning: `dual` (bin "dual") generated 1 warning (run `cargo clippy --fix --bin "dual"` to '
    "apply 1 suggestion)\n"
    "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.97s"
)
"""cargo counts each target's warnings on its own line; clippy exits 0 on warnings."""


def test_the_lints_cargo_clippy_found_are_what_its_run_failed_on() -> None:
    excerpt = failure_excerpt(CLIPPY, is_error=False, shell=True, command="cargo clippy 2>&1")
    assert excerpt == "warning: this `if` statement can be collapsed"
    # the same warnings from a build are not a failure: the build did what it was run for
    built = CLIPPY.replace("Checking", "Compiling").replace("cargo clippy --fix", "cargo fix")
    assert failure_excerpt(built, is_error=False, shell=True, command="cargo build") is None


RUSTFMT = (
    "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.58s\n"
    "Diff in /w/dual/src/main.rs:348:\n"
    "     }\n"
    " \n"
    "\x1b[31m-    if is_new_container\n"
    "\x1b[m\x0f\x1b[32m+    if is_new_container && let Some(ref setup) = hints.setup {\n"
    '\x1b[m\x0f         error!("setup failed: {e}");\n'
)
"""rustfmt's check mode: ``Diff in <file>:<line>:`` over each hunk, coloured, each colour reset
followed by terminfo's shift-in."""


def test_cargo_fmt_check_fails_on_the_file_it_names_not_on_the_code_it_shows() -> None:
    command = "cargo test 2>&1 && cargo fmt --check 2>&1 | head -40"
    excerpt = failure_excerpt(RUSTFMT, is_error=False, shell=True, command=command)
    assert excerpt == "Diff in /w/dual/src/main.rs:348:"
    assert further_lines(RUSTFMT, excerpt, 3) == ()


LINTED_SYNTAX_ERROR = (
    "Traceback (most recent call last):\n"
    '  File "planning.py", line 91\n'
    "    The residency is a space designed to nurture the band's work.\n"
    "                                                ^\n"
    "SyntaxError: unterminated string literal (detected at line 91)\n"
    "\n"
    "## Running: python -m flake8 --select=E9,F821 --show-source --isolated planning.py\n"
    "\n"
    "planning.py:91:345: E999 SyntaxError: unterminated string literal (detected at line 91)\n"
)
"""A compile's traceback, then flake8 on the same file (aider's lint report): flake8's default
format, ``%(path)s:%(row)d:%(col)d: %(code)s %(text)s``, says where the exception is."""


def test_a_linters_located_line_of_the_tracebacks_exception_is_kept() -> None:
    command = "python -m py_compile planning.py; python -m flake8 planning.py"
    excerpt = failure_excerpt(LINTED_SYNTAX_ERROR, is_error=True, shell=True, command=command)
    assert excerpt == "SyntaxError: unterminated string literal (detected at line 91)"
    located = (
        "planning.py:91:345: E999 SyntaxError: unterminated string literal (detected at line 91)"
    )
    assert further_lines(LINTED_SYNTAX_ERROR, excerpt, 3) == (located,)
    # an unlocated line that only says the excerpt again is no further line
    repeated = LINTED_SYNTAX_ERROR.replace(located, "error: " + excerpt)
    assert further_lines(repeated, excerpt, 3) == ()
