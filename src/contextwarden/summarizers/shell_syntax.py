"""How a shell command line splits into the commands it runs, and those into words, as a POSIX
shell reads them: an operator inside quotes or after a backslash splits nothing.

``sed -i 's|a|b|' f.txt`` is one command editing ``f.txt``, and ``echo "done; cat x.txt"`` runs
no ``cat``: splitting the raw text at ``|`` or ``;`` would lose the first and invent the second.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

_TOKEN = re.compile(r"""'[^']*'|"(?:[^"\\]|\\.)*"|\\.|&&|\|\||[;|\n]""", re.DOTALL)
"""What the split looks at: a quoted string or an escaped character (kept whole, part of a
word), a line continuation (backslash, newline), or an operator: ``&&``, ``||``, ``;``, a
newline (each ending a command of a list) or ``|`` (a pipe)."""
_LIST_OPERATORS = frozenset({"&&", "||", ";", "\n"})
_CONTINUATION = "\\\n"
_HEREDOC = re.compile(r"<<(?P<dash>-?)[ \t]*(?P<quote>['\"]?)(?P<word>[A-Za-z_][\w-]*)(?P=quote)")
"""A here-document's redirection (``<<'EOF'``, ``<<-END``): the lines after its command, up to
the word alone on a line, are the command's input, not commands."""


def pipeline_heads(command: str) -> Iterator[str]:
    """The first command of each pipeline of ``command``'s lists, here-document bodies left
    out: what reads the files it names (the commands after a ``|`` read their input)."""
    text = without_heredoc_bodies(command)
    current: list[str] = []
    piped = False  # past a pipe: the rest of this pipeline is not read
    at = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] in "'\"" or (token[0] == "\\" and token != _CONTINUATION):
            continue  # quoted or escaped: part of a word
        if not piped:
            current.append(text[at : match.start()])
        at = match.end()
        if token in _LIST_OPERATORS:
            yield "".join(current)
            current, piped = [], False
        elif token == "|":
            piped = True
    if not piped:
        current.append(text[at:])
    yield "".join(current)


def without_heredoc_bodies(command: str) -> str:
    """``command`` without the lines its here-documents feed a program: a Python script's
    ``head = …`` or ``tail -3`` line is no ``head`` or ``tail`` command reading a file named
    ``=`` or ``-3``."""
    lines: list[str] = []
    pending: list[tuple[str, bool]] = []  # each open here-document's word, and ``<<-``
    for line in command.split("\n"):
        if pending:
            word, dash = pending[0]
            ending = line.rstrip("\r")
            if (ending.lstrip("\t") if dash else ending) == word:
                pending.pop(0)
            continue
        lines.append(line)
        pending.extend((m["word"], m["dash"] == "-") for m in _HEREDOC.finditer(line))
    return "\n".join(lines)


def shell_words(command: str) -> list[str]:
    """The words of one simple command, quotes removed; none when its quoting is unbalanced."""
    try:
        return shlex.split(command, comments=False, posix=True)
    except ValueError:
        return []
