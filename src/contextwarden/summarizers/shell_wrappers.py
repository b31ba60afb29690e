"""Commands that run another command: a shell given a command string, a remote host, a
container, another user or a time limit. What the line runs is the command inside them.

``ssh host 'pytest -x'`` fails as ``pytest -x`` does, and ``docker exec app sh -c 'cat a.py'``
reads ``a.py``: the programs, files and failure patterns are the inner command's.
"""

from __future__ import annotations

import shlex

from contextwarden.summarizers.shell_syntax import operator_split, shell_words

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash"})
"""POSIX ``sh -c [options] command_string [command_name [argument…]]`` (bash, zsh, dash and
ksh take the same form): the first operand after the options is the command line run."""
_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_SSH_VALUED = frozenset("BbcDEeFIiJLlmOoPpQRSWw")
"""ssh(1)'s options that take a value (``-i identity_file``, ``-p port``, ``-o option``):
``ssh [options] destination [command [argument …]]``; the arguments are joined with spaces
into one line the remote shell runs."""
_DOCKER_EXEC_VALUED = frozenset(
    {"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys", "--index"}
)
"""``docker exec [OPTIONS] CONTAINER COMMAND [ARG…]`` and ``docker compose exec [OPTIONS]
SERVICE COMMAND [ARGS…]``: the options that take a value (the rest are flags: ``-it``,
``-d``, ``-T``, ``--privileged``)."""
_SUDO_VALUED = frozenset({"-u", "-g", "-p", "-C", "-D", "-h", "-r", "-t", "-U", "-T"})
"""sudo(8)'s options that take a value (``-u user``, ``-g group``, ``-D directory``)."""
_ENV_VALUED = frozenset({"-u", "--unset", "-C", "--chdir"})
_TIMEOUT_VALUED = frozenset({"-s", "--signal", "-k", "--kill-after"})
_PREFIXES = {
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),  # GNU time's valued options
    "stdbuf": frozenset({"-i", "-o", "-e"}),  # each takes a MODE (``-o L``, or ``-oL``)
    "nice": frozenset({"-n", "--adjustment"}),
}
"""Run the command after their options as it is (``time -p``, ``stdbuf -oL``, ``nice -n 5``),
with the options that take a value."""
ELSEWHERE = frozenset({"ssh", "docker", "podman", "docker-compose", "kubectl"})
"""Programs that run a command on another host or in a container: its paths are that
machine's, which no tool of the session's reads."""
LOCAL_WRAPPERS = frozenset({*_SHELLS, *_PREFIXES, "sudo", "doas", "env", "timeout"})
WRAPPERS = LOCAL_WRAPPERS | ELSEWHERE
"""The programs ``inner_command`` reads (a command's first word, by its base name)."""


def inner_command(words: list[str], *, elsewhere: bool = True) -> str | None:
    """The command line that ``words`` (one simple command, quotes removed) hands to another
    shell or host, or runs as another user or under a limit; None when it runs its own
    program, or (not ``elsewhere``) runs it on another host or in a container (``ELSEWHERE``).
    Variable assignments before a command (``CI=1 npm test``) are the shell's."""
    assigned = 0
    while assigned < len(words) and _is_assignment(words[assigned]):
        assigned += 1
    words = words[assigned:]
    if not words:
        return None
    program, args = words[0].rsplit("/", 1)[-1], words[1:]
    if program in ELSEWHERE and not elsewhere:
        return None
    if program in _SHELLS:
        return _shell_string(args)
    if program == "ssh":
        rest = _after_options(args, _SSH_VALUED, letters=True)
        return " ".join(rest[1:]) or None
    if program in ("docker", "podman", "docker-compose", "kubectl"):
        return _exec_command(program, args)
    runs = _prefix_rest(program, args)
    if runs is None:  # its own program, run with the variables set before it
        return shlex.join(words) if assigned else None
    return shlex.join(runs) if runs else None


def unwrapped_command(command: str) -> str:
    """``command`` with each command that runs another (``inner_command``) replaced by the
    command line it runs, recursively; ``command`` itself when it has none."""
    pieces = list(operator_split(command))
    changed = False
    parts: list[str] = []
    for piece, operator in pieces:
        head = piece.split(None, 1)
        inner = None
        if head and (head[0].rsplit("/", 1)[-1] in WRAPPERS or _is_assignment(head[0])):
            inner = inner_command(shell_words(piece))
        if inner is not None:
            piece, changed = f" {unwrapped_command(inner)} ", True
        parts.append(piece + operator)
    return "".join(parts).strip() if changed else command


def _is_assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier()


def _shell_string(args: list[str]) -> str | None:
    """``sh -c``'s command string: the first operand after options that hold ``c`` (``-c``,
    ``-lc``, ``-ec``); None for a shell that runs a script file or reads its input."""
    command_mode = False
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _SHELL_VALUED:
            skip = True
        elif arg.startswith("--"):
            continue  # --login, --norc, --noprofile
        elif arg[:1] in "-+" and len(arg) > 1:
            command_mode = command_mode or (arg[0] == "-" and "c" in arg[1:])
        else:
            return arg if command_mode else None
    return None


def _after_options(args: list[str], valued: frozenset[str], *, letters: bool = False) -> list[str]:
    """``args`` from the first operand on, options and their values skipped. ``letters``:
    ``valued`` holds option letters, and in a cluster (``-tt``, ``-Ap 22``, ``-p22``) the first
    valued letter takes the rest of the word, or the next word when it ends the word."""
    skip = False
    for index, arg in enumerate(args):
        if skip:
            skip = False
        elif arg == "--":
            return args[index + 1 :]
        elif not arg.startswith("-") or arg == "-":
            return args[index:]
        elif letters and not arg.startswith("--"):
            at = next((i for i, c in enumerate(arg[1:], 1) if c in valued), None)
            skip = at == len(arg) - 1
        else:
            skip = arg in valued
    return []


def _exec_command(program: str, args: list[str]) -> str | None:
    """What ``docker [container|compose] exec``, ``docker-compose exec`` or ``kubectl exec POD
    -- COMMAND`` runs in a container (``kubectl exec``'s command is what follows ``--``)."""
    if program == "kubectl":
        if not args or args[0] != "exec" or "--" not in args:
            return None
        rest = args[args.index("--") + 1 :]
        return shlex.join(rest) if rest else None
    if program != "docker-compose" and args[:1] in (["container"], ["compose"]):
        args = args[1:]
    if not args or args[0] != "exec":
        return None
    rest = _after_options(args[1:], _DOCKER_EXEC_VALUED)
    return shlex.join(rest[1:]) if len(rest) > 1 else None


def _prefix_rest(program: str, args: list[str]) -> list[str] | None:
    """The command ``sudo``, ``env``, ``timeout`` or a plain prefix (``nohup``, ``time``,
    ``nice``) runs: its words after the prefix's options (and ``timeout``'s duration,
    ``env``'s assignments); None for another program."""
    if program in ("sudo", "doas"):
        return _after_options(args, _SUDO_VALUED)
    if program == "env":
        rest = _after_options(args, _ENV_VALUED)
        while rest and _is_assignment(rest[0]):
            rest = rest[1:]
        return rest
    if program == "timeout":
        return _after_options(args, _TIMEOUT_VALUED)[1:]
    if program in _PREFIXES:
        return _after_options(args, _PREFIXES[program])
    return None
