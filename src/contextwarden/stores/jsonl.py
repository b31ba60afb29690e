"""JsonlStore: one file per session, one event per line, every append fsync'd.

Writers take an exclusive ``flock`` on the file, readers a shared one, so several processes may
share a directory. A line left half-written by a killed process is reported and skipped on read;
the next append first ends it with a newline, so the file stays append-only (POSIX only).
A crash mid-batch can leave the batch's first events without the rest (unlike the SQL stores);
each was checked in order, so what remains is still a valid view.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from contextwarden.errors import StoreError
from contextwarden.loadreport import LoadIssue
from contextwarden.log import LogEntry
from contextwarden.rules import DEFAULT_RULES, Rule
from contextwarden.stores.backend import StoreBase
from contextwarden.stores.base import (
    StoreConflictError,
    as_entries,
    validate_session_id,
)
from contextwarden.stores.codec import decode_object, encode, paused_gc
from contextwarden.stores.state import SessionState
from contextwarden.wire.common import loads

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the package still imports, JsonlStore refuses
    fcntl = None  # type: ignore[assignment]

SUFFIX = ".jsonl"
_EXCLUSIVE, _SHARED = True, False


class JsonlStore(StoreBase):
    """Sessions as ``<directory>/<session_id>.jsonl`` files (created on first append)."""

    format_name = "contextwarden-jsonl"

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        fsync: bool = True,
        rules: Iterable[Rule] = DEFAULT_RULES,
    ) -> None:
        if fcntl is None:
            raise StoreError("JsonlStore needs POSIX file locks (fcntl); use SqliteStore here")
        self.directory = Path(directory)
        self.fsync = fsync
        """fsync each append (and the directory when a file is created); off only for tests."""
        self.rules = tuple(rules)
        self._states: dict[str, SessionState] = {}

    def __repr__(self) -> str:
        return f"JsonlStore({str(self.directory)!r})"

    def close(self) -> None:
        """No file stays open between calls; only the cached session states are dropped."""
        self._states.clear()

    def path(self, session_id: str) -> Path:
        """The session's file (the id is checked first, so it never leaves the directory)."""
        return self.directory / (validate_session_id(session_id) + SUFFIX)

    def _where(self, session_id: str) -> str:
        return str(self.path(session_id))

    # ----------------------------------------------------------------- writing
    def append(
        self,
        session_id: str,
        events: Iterable[LogEntry],
        *,
        expected_version: int | None = None,
    ) -> int:
        path = self.path(session_id)
        batch = as_entries(events)
        lines = "".join(encode(e) + "\n" for e in batch)
        created = not path.exists()
        if created:
            # Check before creating the file, so a rejected first batch leaves nothing behind.
            self._expect(session_id, SessionState(), expected_version)
            if not batch:
                return 0
            SessionState().checked(session_id, batch, self.rules)
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the store directory {self.directory}: {exc}"
                ) from exc
        with self._locked(path, _EXCLUSIVE, create=True) as fd:
            state = self._refresh(session_id, fd)
            self._expect(session_id, state, expected_version)
            new = state.checked(session_id, batch, self.rules)
            if batch:
                # A line cut short by a crash is ended first, so ours starts on a line of its own.
                data = ("\n" if _unterminated(fd) else "") + lines
                try:
                    _write_all(fd, data.encode("ascii"))
                    if self.fsync:
                        os.fsync(fd)
                except OSError as exc:  # disk full, quota, I/O error
                    raise StoreError(f"cannot append to {path}: {exc}") from exc
            self._states[session_id] = replace(new, offset=os.fstat(fd).st_size)
        if created and self.fsync:
            _fsync_directory(self.directory)
        return new.version

    def _expect(self, session_id: str, state: SessionState, expected: int | None) -> SessionState:
        if expected is not None and expected != state.version:
            raise StoreConflictError(session_id, expected, state.version)
        return state

    def delete(self, session_id: str) -> bool:
        path = self.path(session_id)
        self._states.pop(session_id, None)
        if not os.path.lexists(path):  # a dangling symlink is refused, not "no session"
            return False
        with self._locked(path, _EXCLUSIVE, create=False) as fd:
            if fd < 0:
                return False
            try:
                path.unlink()
            except OSError as exc:
                raise StoreError(f"cannot delete {path}: {exc}") from exc
        return True

    # ----------------------------------------------------------------- reading
    def version(self, session_id: str) -> int:
        path = self.path(session_id)
        if not os.path.lexists(path):  # a dangling symlink is refused, not "no session"
            return 0
        with self._locked(path, _SHARED, create=False) as fd:
            return self._refresh(session_id, fd).version if fd >= 0 else 0

    def list_sessions(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        files = self.directory.glob("*" + SUFFIX)
        names = (p.name[: -len(SUFFIX)] for p in files if not p.is_symlink() and _nonempty(p))
        return sorted(n for n in names if _valid_id(n))

    def _read_log(self, session_id: str) -> tuple[list[LogEntry], list[LoadIssue]]:
        path = self.path(session_id)
        if not os.path.lexists(path):  # a dangling symlink is refused, not "no session"
            return [], []
        with self._locked(path, _SHARED, create=False) as fd:
            data = _read_from(fd, 0) if fd >= 0 else b""
        entries: list[LogEntry] = []
        issues: list[LoadIssue] = []
        with paused_gc():
            for number, raw in enumerate(data.split(b"\n"), start=1):
                entry = _parse(raw, path, number, issues)
                if entry is not None:
                    entries.append(entry)
        return entries, issues

    def _refresh(self, session_id: str, fd: int) -> SessionState:
        """The session's state, reading only what was appended since the cached offset."""
        info = os.fstat(fd)
        token = f"{info.st_dev}:{info.st_ino}"
        state = self._states.get(session_id)
        if state is None or state.token != token or state.offset > info.st_size:
            state = SessionState(token=token)
        data = _read_from(fd, state.offset)
        with paused_gc():
            parsed = [_parse(raw, None, 0, []) for raw in data.split(b"\n")]
        entries = [e for e in parsed if e is not None]
        state = replace(state.advance(entries), offset=state.offset + len(data))
        self._states[session_id] = state
        return state

    @contextmanager
    def _locked(self, path: Path, exclusive: bool, *, create: bool) -> Iterator[int]:
        """An fd of ``path`` holding an exclusive or shared ``flock``; -1 when it vanished (and
        not ``create``).

        Re-opens when the file was deleted or replaced while we waited for the lock, so a write
        never lands in an unlinked file.
        """
        # A reader needs no write access (a read-only store can be read); nobody follows a
        # symlink planted in the directory, which could send appends anywhere.
        mode = os.O_RDWR | os.O_APPEND if exclusive else os.O_RDONLY
        flags = mode | os.O_CLOEXEC | os.O_NOFOLLOW | (os.O_CREAT if create else 0)
        while True:
            try:
                fd = os.open(path, flags, 0o644)
            except FileNotFoundError:
                yield -1
                return
            except OSError as exc:
                raise StoreError(_open_failure(path, exc)) from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
                if _same_file(fd, path):
                    yield fd
                    return
            finally:
                os.close(fd)

    def export_claude_code(self, session_id: str, path: str | os.PathLike[str]) -> Path:
        """Write the session in Claude Code's session JSONL format (see ``claude_code_writer``)."""
        from contextwarden.stores.claude_code_writer import write_claude_code

        return write_claude_code(self.log(session_id), path, session_id=session_id)


def _parse(raw: bytes, path: Path | None, number: int, issues: list[LoadIssue]) -> LogEntry | None:
    """One line's event; a blank line is skipped, a line that is not JSON (torn) is reported."""
    if not raw.strip():
        return None
    try:
        body = loads(raw)
    except ValueError:
        issues.append(
            LoadIssue(
                f"incomplete event ({len(raw)} bytes that are not JSON, most likely a write "
                "cut short by a crash); skipped",
                line=number,
            )
        )
        return None
    where = f"{path}: line {number}" if path else "event"
    return decode_object(body, where=where)


def _open_failure(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP or path.is_symlink():
        return (
            f"refusing to open {path}: it is a symbolic link, and a session file must be a "
            "regular file inside the store's directory"
        )
    if isinstance(exc, PermissionError):
        return f"cannot open {path}: permission denied (a read-only store can only be read)"
    return f"cannot open {path}: {exc}"


def _read_from(fd: int, offset: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _unterminated(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StoreError(f"cannot sync the store directory {directory}: {exc}") from exc


def _nonempty(path: Path) -> bool:
    """False for an empty file (a create cut short: no session yet) or one deleted meanwhile."""
    try:
        return path.stat().st_size > 0
    except FileNotFoundError:
        return False


def _valid_id(name: str) -> bool:
    try:
        validate_session_id(name)
    except StoreError:
        return False
    return True
