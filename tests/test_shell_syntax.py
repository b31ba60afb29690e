"""Shell command lines split as a POSIX shell splits them: an operator inside single or double
quotes, or after a backslash, splits nothing; a pipe's later commands read no file."""

from __future__ import annotations

import pytest

from contextwarden.model import ToolUseBlock
from contextwarden.summarizers.shell_syntax import pipeline_heads, shell_words
from contextwarden.summarizers.tools import file_ops


def _ops(command: str) -> list[tuple[str, str]]:
    block = ToolUseBlock(id="t1", name="Bash", input={"command": command})
    return [(op.path, op.operation) for op in file_ops(block)]


@pytest.mark.parametrize(
    ("command", "heads"),
    [
        ("sed -i 's|a|b|' f.txt", ["sed -i 's|a|b|' f.txt"]),
        ('grep -E "x|y;z" a.py | head -3', ['grep -E "x|y;z" a.py ']),
        ("echo a\\;b && cat c.txt", ["echo a\\;b ", " cat c.txt"]),
        ("git commit -m 'a && b' || cat d.md", ["git commit -m 'a && b' ", " cat d.md"]),
        ('echo "it\'s \\"x|y\\"" ; ls', ['echo "it\'s \\"x|y\\"" ', " ls"]),
        ("sed -n '1,5p' \\\n  src/a.py | wc -l", ["sed -n '1,5p'   src/a.py "]),
        ("cat a | grep b | sort\ncat c", ["cat a ", "cat c"]),
    ],
)
def test_commands_split_outside_quotes_only(command: str, heads: list[str]) -> None:
    assert list(pipeline_heads(command)) == heads


def test_a_quoted_pipe_keeps_sed_s_file() -> None:
    assert _ops("sed -i 's|old|new|g' src/app.py") == [("src/app.py", "edited")]
    assert _ops('sed -n "/a|b/p" notes.md') == [("notes.md", "read")]


def test_a_quoted_separator_neither_loses_nor_invents_a_command() -> None:
    assert _ops('grep -n "a;b" src/x.py') == [("src/x.py", "searched")]
    assert _ops("rg -e 'x&&y' lib/y.ts && cat README.md") == [
        ("lib/y.ts", "searched"),
        ("README.md", "read"),
    ]
    assert _ops('echo "done; cat secrets.txt"') == []
    assert _ops("printf '%s\\n' 'x | cat z.txt'") == []


def test_a_line_continuation_joins_the_command() -> None:
    assert _ops("sed -n '1,20p' \\\n  src/long_name.py") == [("src/long_name.py", "read")]


def test_here_document_bodies_and_unbalanced_quotes_name_no_file() -> None:
    assert _ops("python - <<'EOF'\nhead = 3\ntail -3\nEOF\ncat out.txt") == [("out.txt", "read")]
    assert shell_words("cat 'unclosed") == []
