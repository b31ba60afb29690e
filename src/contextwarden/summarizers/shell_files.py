"""The files a shell command reads, writes, edits or searches, read from its words: obvious cases.

A command is split as the shell splits it (``shell_syntax``). Anything cleverer would guess
wrong, and a wrong path in a summary is worse than a missing one: what is read is documented on
``shell_file_ops``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import PurePosixPath

from contextwarden.summarizers.file_op import FileOp, line_count, lines
from contextwarden.summarizers.shell_syntax import pipeline_heads, shell_words

_SHELL_READERS = frozenset({"cat", "head", "tail", "nl", "less", "more"})
_SHELL_SEARCHES = frozenset({"grep", "egrep", "fgrep", "rg"})
_SHELL_PROGRAMS = _SHELL_READERS | _SHELL_SEARCHES | {"sed", "git"}
_SED_VALUED = frozenset("efl")
"""sed's short options that take a value (``-e SCRIPT``, ``-f SCRIPT-FILE``, ``-l N``)."""
_SED_LONG_VALUED = frozenset({"--expression", "--file", "--line-length"})
_BSD_SUFFIX = re.compile(r"\A(?:\.[^/]*)?\Z")
"""BSD sed's ``-i`` backup suffix, a word of its own: ``-i .bak``, or ``-i ''`` for none."""
_GIT_SHOWN = re.compile(r"\A[^-:][^:]*:(?P<path>[^:]+)\Z")
"""``git show REV:PATH``'s operand: the file as that revision has it."""
_SEARCH_VALUED = frozenset(
    {
        "-e",
        "-f",
        "-m",
        "-A",
        "-B",
        "-C",
        "-d",
        "-D",
        "-g",
        "-t",
        "-T",
        "-M",
        "-j",
        "--regexp",
        "--file",
        "--max-count",
        "--after-context",
        "--before-context",
        "--context",
        "--glob",
        "--type",
        "--type-not",
        "--include",
        "--exclude",
        "--exclude-dir",
    }
)
"""Options of grep and ripgrep whose value is the next word (``-A 20``, ``-g '*.py'``)."""
_SHELL_META = re.compile(r"[*?$`<>|;&(){}\[\]]")


def shell_file_ops(command: str, result_text: str) -> Iterator[FileOp]:
    """File paths from the obvious shell forms only.

    Each ``&&``/``||``/``;``/newline-separated part, before any pipe, is read (split as the
    shell does, ``shell_syntax``: ``sed -i 's|a|b|' f.txt`` is one command) when it is
    ``cat|head|tail|nl|less|more FILE…`` (read), ``sed -n 'X' FILE`` (read), ``sed -i … FILE``
    (edited), ``cat > FILE`` / ``cat >> FILE`` (wrote, a heredoc), ``git show REV:FILE`` (read:
    that revision's file) or ``grep|rg PATTERN FILE…``
    (searched, as a Grep call's path is: only operands that name a file, with an extension; a
    folder searched is no file touched). Operands that hold shell syntax (globs, variables,
    substitutions) are skipped: their real path is unknown.
    """
    for part in pipeline_heads(command):
        head = part.split(None, 1)
        if not head or head[0] not in _SHELL_PROGRAMS:
            continue  # shlex is slow; split only the parts that can name a file
        words = shell_words(part)
        if not words:
            continue
        if words[0] == "cat" and len(words) >= 3 and words[1] in (">", ">>"):
            if not _SHELL_META.search(words[2]):
                yield FileOp(words[2], "wrote")
            continue
        yield from _shell_reads(words, result_text)


def _shell_reads(words: list[str], result_text: str) -> Iterator[FileOp]:
    program, args = words[0], words[1:]
    if program == "sed" and args:
        operands, in_place = _sed_files(args)
        if not in_place and "-n" not in args:
            return
        kind = "edited" if in_place else "read"
    elif program in _SHELL_READERS:
        operands = [a for a in args if not a.startswith("-") and not a.isdigit()]
        kind = "read"
    elif program in _SHELL_SEARCHES:
        operands = [a for a in _search_operands(args) if PurePosixPath(a).suffix]
        kind = "searched"
    elif program == "git" and next((a for a in args if not a.startswith("-")), "") == "show":
        shown = (_GIT_SHOWN.match(a) for a in args)
        operands = [m["path"] for m in shown if m and PurePosixPath(m["path"]).suffix]
        kind = "read"
    else:
        return
    files = [a for a in operands if a and not _SHELL_META.search(a)]
    for path in files:
        single = len(files) == 1 and kind == "read" and result_text
        yield FileOp(path, kind, lines(line_count(result_text)) if single else "")


def _sed_files(args: list[str]) -> tuple[list[str], bool]:
    """The files a sed command reads, and whether it edits them in place. GNU sed's synopsis is
    ``sed [OPTION]... {script-only-if-no-other-script} [input-file]...``: the first operand is
    the script unless ``-e``/``--expression``/``-f``/``--file`` gave one, and an option's value
    (``-e 's/a\\./b./g'``, ``-l 80``) is no file. BSD sed's ``-i`` takes its backup suffix as
    the next word (``sed -i '' -e …``, ``-i .bak``); GNU's ``-i[SUFFIX]`` has it attached."""
    operands: list[str] = []
    scripted = False
    skip = False
    for index, arg in enumerate(args):
        valued = next((i for i, c in enumerate(arg) if c in _SED_VALUED), 0)
        if skip or arg == "--":
            skip = False
        elif arg == "-" or not arg.startswith("-") or "--" in args[:index]:
            operands.append(arg)
        elif arg.startswith("--"):
            scripted = scripted or arg.startswith(("--expression", "--file"))
            skip = arg in _SED_LONG_VALUED
        elif arg == "-i":
            skip = index + 1 < len(args) and _BSD_SUFFIX.match(args[index + 1]) is not None
        elif valued and not arg.startswith("-i"):
            scripted = scripted or arg[valued] in "ef"
            skip = valued == len(arg) - 1
    in_place = any(a.startswith(("-i", "--in-place")) for a in args)
    return (operands if scripted else operands[1:]), in_place


def _search_operands(args: list[str]) -> list[str]:
    """The paths a grep or ripgrep command searches: its operands after the pattern (every
    operand when ``-e``/``-f`` gives the pattern), an option's value skipped."""
    operands: list[str] = []
    pattern_given = False
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--":
            continue
        elif arg.startswith("-") and len(arg) > 1:
            skip = arg in _SEARCH_VALUED
            pattern_given = pattern_given or arg in ("-e", "-f", "--regexp", "--file")
            pattern_given = pattern_given or arg.startswith(("--regexp=", "--file="))
        else:
            operands.append(arg)
    return operands if pattern_given else operands[1:]
