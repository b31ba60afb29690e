"""An OpenCode session in its on-disk storage (``~/.local/share/opencode/storage/``) into a history.

Load the session's own file, ``storage/session/<projectID>/<sessionID>.json``; its messages are
read from ``storage/message/<sessionID>/<messageID>.json`` (in order of ``time.created``, then
id) and each message's parts from ``storage/part/<messageID>/<partID>.json`` (in id order, which
OpenCode makes ascending). The messages then read exactly as an export's (``opencode``). A file
there that is not JSON is reported by path and skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contextwarden.errors import FormatError
from contextwarden.formats.base import read_text, require_single
from contextwarden.formats.opencode import from_records
from contextwarden.history import ConversationHistory
from contextwarden.loadreport import LoadReport
from contextwarden.tokens.base import TokenCounter
from contextwarden.wire.common import as_mapping, loads

NAME = "opencode-storage"
EXPECTED = (
    "an OpenCode session file in its storage: storage/session/<projectID>/<sessionID>.json "
    "with storage/message/ and storage/part/ beside"
)
SESSION_DIR = "session"


def sniff(path: Path, head: str) -> bool:
    """True for ``…/session/<projectID>/ses_….json`` holding a session object."""
    if path.parent.parent.name != SESSION_DIR or not path.name.startswith("ses_"):
        return False
    try:
        value = loads(head)
    except json.JSONDecodeError:
        return False
    return isinstance(value, Mapping) and value.get("id") == path.stem


def read(
    path: Path,
    report: LoadReport,
    *,
    index: int = 0,
    counter: TokenCounter | None = None,
) -> ConversationHistory:
    """Read one stored session (merge mode); see the module docstring for the rules."""
    require_single(index, "an OpenCode session", path)
    session = _json(path, report)
    if not isinstance(session, Mapping) or not isinstance(session.get("id"), str):
        raise FormatError("expected a session object with an 'id'", path=str(path))
    report.metadata["session"] = dict(session)
    root = path.parent.parent.parent
    folder = root / "message" / session["id"]
    if not folder.is_dir():
        raise FormatError(f"no message folder {folder} beside the session file", path=str(path))
    infos = [_json(p, report) for p in sorted(folder.glob("*.json"))]
    messages = sorted((m for m in infos if isinstance(m, Mapping)), key=_order)
    for info in infos:
        if info is not None and not isinstance(info, Mapping):
            report.reject("a message file that is not an object; skipped", info)
    records = [{"info": m, "parts": _parts(root, m, report)} for m in messages]
    return from_records(records, report, counter=counter)


def _order(info: Mapping[str, Any]) -> tuple[float, str]:
    created = as_mapping(info.get("time")).get("created")
    when = float(created) if isinstance(created, int | float) else 0.0
    return when, str(info.get("id"))


def _parts(root: Path, info: Mapping[str, Any], report: LoadReport) -> list[Any]:
    folder = root / "part" / str(info.get("id"))
    return [p for p in (_json(f, report) for f in sorted(folder.glob("*.json"))) if p is not None]


def _json(path: Path, report: LoadReport) -> Any:
    try:
        return loads(read_text(path, report))
    except json.JSONDecodeError as exc:
        report.skip(f"{path}: malformed JSON ({exc.msg}); file skipped")
        return None
