"""A command run through another shell, host, container, user or limit is read as the command it
runs: its program, the files it names and its failure patterns. Each form is the one its tool
documents: POSIX ``sh -c command_string``, ssh(1)'s ``destination [command [argument …]]``
(joined with spaces for the remote shell), ``docker exec [OPTIONS] CONTAINER COMMAND``,
``docker compose exec [OPTIONS] SERVICE COMMAND``, ``kubectl exec POD -- COMMAND``, sudo(8),
env(1), timeout(1), nohup(1), time(1)."""

from __future__ import annotations

import pytest

from contextwarden.model import ToolUseBlock
from contextwarden.summarizers.commands import filters_a_run, shows_text
from contextwarden.summarizers.failures import failure_excerpt
from contextwarden.summarizers.shell_syntax import shell_words
from contextwarden.summarizers.shell_wrappers import inner_command, unwrapped_command
from contextwarden.summarizers.tools import file_ops


def _ops(command: str) -> list[tuple[str, str]]:
    block = ToolUseBlock(id="t1", name="Bash", input={"command": command})
    return [(op.path, op.operation) for op in file_ops(block)]


@pytest.mark.parametrize(
    ("command", "inner"),
    [
        ("bash -lc 'cd /repo && pytest -x'", "cd /repo && pytest -x"),
        ('sh -c "cat a.py"', "cat a.py"),
        ("zsh -ec 'make test'", "make test"),
        ("bash -o pipefail -c 'npm test | tee out.txt'", "npm test | tee out.txt"),
        (
            "ssh -p 2222 -i ~/.ssh/key deploy@web 'tail -n 50 /var/log/app.log'",
            "tail -n 50 /var/log/app.log",
        ),
        ("ssh -tt ci systemctl status nginx", "systemctl status nginx"),
        ("docker exec -it -e DEBUG=1 -w /app api pytest -q", "pytest -q"),
        ("docker compose exec -T web python manage.py migrate", "python manage.py migrate"),
        ("kubectl exec -n prod api-7d9 -c app -- cat /etc/app.yaml", "cat /etc/app.yaml"),
        ("sudo -u postgres psql -c 'select 1'", "psql -c 'select 1'"),
        ("env -u HOME LANG=C sort data.txt", "sort data.txt"),
        ("timeout -s KILL 30s make check", "make check"),
        ("nohup python serve.py", "python serve.py"),
        ("time -p cargo build", "cargo build"),
        ("CI=1 npm test", "npm test"),
        ("bash deploy.sh", None),  # a script file: bash is the program
        ("ssh web", None),  # a login shell, no command
        ("docker ps -a", None),
    ],
)
def test_the_command_a_wrapper_runs(command: str, inner: str | None) -> None:
    assert inner_command(shell_words(command)) == inner


def test_nested_wrappers_are_read_to_the_innermost_command() -> None:
    assert unwrapped_command("ssh ci 'docker exec db sh -c \"cat /etc/my.cnf\"'") == (
        "cat /etc/my.cnf"
    )
    assert unwrapped_command("cd /r && timeout 300 pytest -q | tail -5") == (
        "cd /r && pytest -q | tail -5"
    )
    assert unwrapped_command("pytest -q; echo done") == "pytest -q; echo done"


@pytest.mark.parametrize(
    ("command", "ops"),
    [
        ("bash -lc \"sed -n '1,20p' src/app.py\"", [("src/app.py", "read")]),
        ("sudo -u www-data cat config/nginx.conf", [("config/nginx.conf", "read")]),
        ("timeout 30 tail -n 100 logs/server.log", [("logs/server.log", "read")]),
        ("env LC_ALL=C head -5 data/rows.csv", [("data/rows.csv", "read")]),
        ("sh -c 'cd web && sed -i s/a/b/ index.html'", [("index.html", "edited")]),
    ],
)
def test_files_named_by_a_command_run_through_a_wrapper(
    command: str, ops: list[tuple[str, str]]
) -> None:
    assert _ops(command) == ops


@pytest.mark.parametrize(
    "command",
    [
        "ssh router 'cat /etc/config/network'",
        "docker exec app cat /app/settings.py",
        "kubectl exec pod-1 -- cat /etc/app.yaml",
    ],
)
def test_files_on_another_host_or_in_a_container_are_not_the_workspaces(command: str) -> None:
    assert _ops(command) == []


def test_a_sed_script_a_wrapper_split_names_no_file() -> None:
    """``ssh h "sed -i 's/--mode no/--bind ::1/' f"`` inside a single-quoted ``bash -c`` loses
    its quotes: sed gets ``s/--mode`` as its script, reads it whole first and stops with
    ``unterminated `s' command``, opening none of the words after it."""
    assert _ops("sed -i s/--mode no/--bind ::1 --mode yes/ /opt/redis/server") == []
    assert _ops("sed -i 's|a\\|b|c|g' f.txt") == [("f.txt", "edited")]


def test_a_search_run_in_a_container_answers_no_with_exit_code_1() -> None:
    """grep's exit status 1 means no line matched (POSIX grep): run through ``docker exec … sh
    -c`` it still only searched."""
    command = "docker exec app sh -c 'grep -n DEBUG /app/settings.py'"
    assert failure_excerpt("Exit code 1", is_error=True, shell=True, command=command) is None
    assert failure_excerpt("Exit code 1", is_error=True, shell=True, command="make") is not None


def test_a_file_shown_through_a_shell_is_text_not_a_run() -> None:
    """``bash -lc 'cat build.log'`` shows a log that may say anything; exit code 0 stands."""
    text = "compiling…\nerror: linker `cc` not found\nExit code 0"
    shown = failure_excerpt(text, is_error=False, shell=True, command="bash -lc 'cat build.log'")
    assert shown is None
    ran = failure_excerpt(text, is_error=False, shell=True, command="bash -lc 'cargo build'")
    assert ran == "error: linker `cc` not found"


def test_a_run_filtered_through_a_search_inside_a_wrapper() -> None:
    assert filters_a_run("ssh ci 'cd app && pytest -q 2>&1 | grep FAILED'")
    assert not filters_a_run("timeout 10 cat test.log | grep Error")


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ('git commit -m "wip; cat notes"', False),  # a quoted ; runs no cat
        ('echo "select id from tbl;;" | sqlfluff lint - | head -5', False),  # sqlfluff runs
        ("cat data.csv | sort | uniq -c | head", True),
        ("find . -name '*.py' -exec wc -l {} \\; | sort -n", False),
    ],
)
def test_what_a_pipeline_shows_split_as_the_shell_splits_it(command: str, shown: bool) -> None:
    assert shows_text(command) is shown
