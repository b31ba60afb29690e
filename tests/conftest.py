"""Shared test fixtures: the trimmed transcripts shipped in tests/data/, and the whole corpus.

The default suite runs anywhere on the small real fixtures under ``tests/data/``. Tests over the
whole corpus read its location from ``$CONTEXTWARDEN_DATA`` (a directory holding ``transcripts/``
and ``text/``; ``.ci/run`` sets it to ``../shared/data``) and carry the ``corpus`` mark: without the
corpus they skip saying why, except in CI (``CI=true``), where a missing corpus is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

SUFFIXES = {".jsonl", ".json", ".traj"}
DATA_ENV = "CONTEXTWARDEN_DATA"

FIXTURES_DIR = Path(__file__).resolve().parent / "data"
FIXTURE_TRANSCRIPTS_DIR = FIXTURES_DIR / "transcripts"
FIXTURE_TEXT_DIR = FIXTURES_DIR / "text"


def _transcripts_under(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def _corpus_problem() -> str | None:
    """Why the whole corpus cannot be used, or None when it can."""
    value = os.environ.get(DATA_ENV)
    if not value:
        return (
            f"the whole-corpus tests need ${DATA_ENV} (a directory holding transcripts/ and text/)"
        )
    if not (Path(value) / "transcripts").is_dir():
        return f"${DATA_ENV}={value} has no transcripts/ directory"
    return None


CORPUS_PROBLEM = _corpus_problem()
# When the corpus is absent this points nowhere, so module constants can still be built; every
# test that opens it carries the ``corpus`` mark and skips (or fails in CI) before it does.
CORPUS_DIR = Path(os.environ.get(DATA_ENV) or f"${DATA_ENV}-is-unset").resolve()
TRANSCRIPTS_DIR = CORPUS_DIR / "transcripts"
TEXT_DIR = CORPUS_DIR / "text"
TRANSCRIPTS = [] if CORPUS_PROBLEM else _transcripts_under(TRANSCRIPTS_DIR)
FIXTURE_TRANSCRIPTS = _transcripts_under(FIXTURE_TRANSCRIPTS_DIR)

corpus = pytest.mark.corpus


def fixture_path(relative: str) -> Path:
    """A transcript shipped in tests/data/transcripts/ (a trimmed copy of the corpus file)."""
    path = FIXTURE_TRANSCRIPTS_DIR / relative
    assert path.is_file(), f"no fixture {relative}; see tests/data/make_fixtures.py"
    return path


def corpus_params(paths: list[Path] | None = None) -> list[Any]:
    """Corpus transcripts as ``corpus``-marked parameters; one skipped parameter when absent."""
    paths = TRANSCRIPTS if paths is None else paths
    if CORPUS_PROBLEM:
        return [pytest.param(None, marks=corpus, id="corpus-unavailable")]
    return [
        pytest.param(p, marks=corpus, id="corpus/" + p.relative_to(TRANSCRIPTS_DIR).as_posix())
        for p in paths
    ]


def session_params(*folders: str) -> list[Any]:
    """Every fixture transcript (runs anywhere), then every corpus transcript (when present),
    optionally only those of the given format folders."""

    def wanted(path: Path) -> bool:
        return not folders or path.parent.name in folders

    own = [
        pytest.param(p, id="fixture/" + p.relative_to(FIXTURE_TRANSCRIPTS_DIR).as_posix())
        for p in FIXTURE_TRANSCRIPTS
        if wanted(p)
    ]
    return own + corpus_params([p for p in TRANSCRIPTS if wanted(p)])


def summary_message(text: str) -> Any:
    """The user message a summarize rung leaves at the front of a history, holding ``text``: what
    a later summary reads its predecessor from."""
    from contextwarden.model import FrozenDict, Message, MessageMeta, TextBlock
    from contextwarden.summarizers.typed import SUMMARY_KEY, SUMMARY_PREFIX

    meta = MessageMeta(extra=FrozenDict({SUMMARY_KEY: True}))
    body = f"{SUMMARY_PREFIX}.\n\n<summary>\n{text}\n</summary>"
    return Message("user", (TextBlock(body),), meta)


def text_params(*kinds: str) -> list[Any]:
    """Text samples by kind (``en``, ``zh``, ``ja``, ``code``, ``json``, ``mixed``): the ~10 KB
    fixtures under tests/data/text/ (run anywhere), then the whole corpus files (``corpus``)."""
    own = [pytest.param(FIXTURE_TEXT_DIR / f"{k}.txt", id=f"fixture/{k}") for k in kinds]
    full = [pytest.param(TEXT_DIR / f"{k}.txt", id=f"corpus/{k}", marks=corpus) for k in kinds]
    return own + full


def transcript_sets() -> list[Any]:
    """The fixture transcripts, and the whole corpus (``corpus``-marked), as two parameters for
    tests about a collection of files."""
    return [
        pytest.param(FIXTURE_TRANSCRIPTS, id="fixtures"),
        pytest.param(TRANSCRIPTS, id="corpus", marks=corpus),
    ]


def _require_corpus() -> None:
    if CORPUS_PROBLEM:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{CORPUS_PROBLEM}; in CI the corpus must be present")
        pytest.skip(CORPUS_PROBLEM)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"corpus: needs the whole data corpus at ${DATA_ENV} (skips without it)"
    )
    config.addinivalue_line(
        "markers", "agents: drives the pinned third-party agents (tests/agents/; skips without)"
    )


def pytest_report_header(config: pytest.Config) -> str:
    if CORPUS_PROBLEM:
        return f"corpus: not used ({CORPUS_PROBLEM}); fixtures only"
    return f"corpus: {CORPUS_DIR} ({len(TRANSCRIPTS)} transcripts)"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("corpus") is not None:
        _require_corpus()


@pytest.fixture(scope="session")
def transcripts() -> list[Path]:
    """Every real transcript of the corpus at ``$CONTEXTWARDEN_DATA`` (27 files)."""
    _require_corpus()
    assert TRANSCRIPTS, f"no transcripts found under {TRANSCRIPTS_DIR}"
    return TRANSCRIPTS


# ----------------------------------------------------------------------------- PostgreSQL
TEST_DSN_ENV = "CONTEXTWARDEN_TEST_DSN"
DEFAULT_TEST_DSN = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """DSN of a PostgreSQL server for tests: ``$CONTEXTWARDEN_TEST_DSN``, else
    ``$CONTEXTWARDEN_DSN``, else postgres@127.0.0.1:5432/test. Tests keep to their own schema
    and drop it afterwards.

    When the server cannot be reached the test skips with the reason, except in CI (``CI=true``),
    where that is a failure.
    """
    import os

    dsn = os.environ.get(TEST_DSN_ENV) or os.environ.get("CONTEXTWARDEN_DSN") or DEFAULT_TEST_DSN
    problem: Exception | None = None
    try:
        import psycopg
    except ImportError as exc:
        problem = exc
    else:
        try:
            with psycopg.connect(dsn, connect_timeout=5) as conn:
                conn.execute("SELECT 1")
        except psycopg.Error as exc:
            problem = exc
    if problem is not None:
        reason = (
            f"PostgreSQL tests need a server at {dsn} ({type(problem).__name__}: {problem}); "
            f"start one or set {TEST_DSN_ENV}"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return dsn


@pytest.fixture
def close_event_loop() -> Iterator[None]:
    """For tests of frameworks whose ``run_sync`` leaves an event loop as the thread's current
    one (pydantic-ai, the Agents SDK): close it at the end of the test, so it is not left for
    the garbage collector to warn about later, during some other test."""
    yield
    import asyncio
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:
            return
    if not loop.is_running():
        loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture
def schema(postgres_dsn: str) -> Iterator[str]:
    """A fresh PostgreSQL schema name for one test, dropped (with what it holds) afterwards."""
    import uuid

    name = f"cwproxy_{uuid.uuid4().hex[:10]}"
    yield name
    import psycopg

    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.fixture
def calls_to(monkeypatch: pytest.MonkeyPatch) -> Callable[[object, str], list[Any]]:
    """``calls_to(module, name)``: the first argument of every call to ``module.name`` while the
    test runs, in order: how a test sees that a reading is not worked out again (a remembered one,
    ``summarizers.remembered``) or that only part of a text is read."""

    def record(module: object, name: str) -> list[Any]:
        seen: list[Any] = []
        function = getattr(module, name)

        def counted(first: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append(first)
            return function(first, *args, **kwargs)

        monkeypatch.setattr(module, name, counted)
        return seen

    return record


@pytest.fixture
def judged(calls_to: Callable[[object, str], list[Any]]) -> list[str]:
    """The outputs ``failures.failure_excerpt`` judges while the test runs, in order."""
    from contextwarden.summarizers import failures

    return calls_to(failures, "failure_excerpt")
