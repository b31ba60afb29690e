"""Shared test fixtures: where the shared data lives, and the list of real transcripts."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TRANSCRIPTS_DIR = SHARED_DATA / "transcripts"
SUFFIXES = {".jsonl", ".json", ".traj"}
TRANSCRIPTS = sorted(p for p in TRANSCRIPTS_DIR.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


@pytest.fixture(scope="session")
def transcripts() -> list[Path]:
    """Every real transcript in ../shared/data/transcripts/ (27 files)."""
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
