"""The agents people run, unchanged but for the base URL, through ``contextwarden proxy``.

Each pinned agent (tests/agents/package.json; aider from PyPI) runs non-interactively in its own
network namespace against a scripted model on 127.0.0.1 (tests/agent_upstream.py) that plays a
20-step tool task over a copy of the project's source with the agent's own tools. Directly, the
run is the baseline; through the proxy at a 30,000-token window (45,000 for Claude Code on a
model whose system prompt and tools take 22,000) it must end the same way with every upstream
request valid and inside the window, one session for the conversation, no 5xx, few summaries,
and an upstream prefix that changes only where the proxy compacted or the agent itself rewrote
its history.

The agents are large downloads: without them these tests skip saying why (``.ci/run`` installs
them; under ``CI=true`` a missing agent fails). ``-m "not agents"`` leaves them out.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import pytest

from contextwarden.proxy import ProxyConfig, running
from tests.agent_checks import ProxyLine, RunStats, proxy_lines, run_stats
from tests.agent_recorder import Sent, recording
from tests.agent_runs import AGENTS, Agent, Finished, required, run_isolated, task_workspace
from tests.agent_task import FINAL_ANSWER, SIDE_ANSWER, ScriptedTask, Seen
from tests.agent_upstream import scripted_model

pytestmark = pytest.mark.agents

REQUESTS_PER_SUMMARY = 5
"""At most one summary per this many requests."""
KNOWN_PROXY_FAILURES: dict[str, str] = {}
"""What the proxy still gets wrong with an agent (strict: a fix makes the test fail until the
entry goes)."""


@dataclass(frozen=True)
class Run:
    finished: Finished
    seen: list[Seen]
    sent: list[Sent]
    lines: list[ProxyLine]
    stats: RunStats


@pytest.fixture(params=AGENTS, ids=[a.name for a in AGENTS])
def agent(request: pytest.FixtureRequest) -> Agent:
    return required(request.param)


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    """A copy of the project's source, and the modules the task reads in it."""
    root = tmp_path / "workspace"
    yield root, task_workspace(root)


def run(agent: Agent, workspace: tuple[Path, list[str]], tmp: Path, proxied: bool) -> Run:
    """``agent`` over ``workspace`` against the scripted model, through the proxy or not."""
    root, modules = workspace
    task = ScriptedTask(root, modules)
    home, socket = tmp / "home", tmp / "agent.sock"
    home.mkdir()
    with scripted_model(task) as model, proxy_lines() as lines:
        config = ProxyConfig(model.url, window=agent.window, store=str(tmp / "proxy.sqlite3"))
        upstream = running(config) if proxied else nullcontext(model.url)
        with upstream as url, recording(socket, url) as recorder:
            finished = run_isolated(agent, root, home, socket, modules)
        stats = run_stats(agent.api, task.seen, recorder.sent, lines if proxied else [])
        return Run(finished, list(task.seen), list(recorder.sent), list(lines), stats)


def assert_finished(agent: Agent, result: Run) -> None:
    done = result.finished
    assert done.returncode == 0, f"{agent.name} exited {done.returncode}: {done.stderr[-2000:]}"
    expected = SIDE_ANSWER if agent.name == "aider" else FINAL_ANSWER
    assert expected in done.stdout, done.stdout[-2000:]


def test_agent_runs_directly(
    agent: Agent, workspace: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """The baseline: the agent and the scripted model understand each other with no proxy."""
    result = run(agent, workspace, tmp_path, proxied=False)
    print(f"\n{agent.name} {agent.version} direct: {result.stats.row()}")
    assert_finished(agent, result)
    assert result.stats.invalid == 0, [s.problems for s in result.seen if s.problems]
    assert result.stats.main_requests >= 10


def test_agent_runs_through_the_proxy(
    agent: Agent,
    workspace: tuple[Path, list[str]],
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    if agent.name in KNOWN_PROXY_FAILURES:
        reason = KNOWN_PROXY_FAILURES[agent.name]
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    result = run(agent, workspace, tmp_path, proxied=True)
    stats = result.stats
    print(f"\n{agent.name} {agent.version} proxy: {stats.row()}")
    assert_finished(agent, result)
    assert stats.server_errors == 0, [s for s in result.sent if s.status >= 500]
    assert stats.invalid == 0, [s.problems for s in result.seen if s.problems]
    assert stats.largest <= agent.window, f"an upstream request of {stats.largest} tokens"
    side = stats.requests - stats.main_requests
    assert stats.main_session_requests >= stats.main_requests, stats
    assert stats.sessions <= 1 + side, stats
    assert stats.summaries * REQUESTS_PER_SUMMARY <= stats.main_requests, stats
    assert not stats.unexplained_breaks, stats
