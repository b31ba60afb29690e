"""One fact per file the tools touched: its operations in order, what the last one said, the
code written, and the spelling the conversation writes it by; spellings of one file are one fact."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from contextwarden.summarizers.file_op import FileOp
from contextwarden.summarizers.spellings import same_files, slash_folds, slash_spelling

EARLIER = "earlier: "
"""Opens what an earlier summary said was done to a file, as it said it, when that cannot be read
back as operations (``carried_operations``)."""
LAST = "; last: "
"""Between a file's operations and its last one (``structured_lines.operations``)."""
_DONE_RE = re.compile(
    r"(?P<op>[\w-]+(?: \(failed\))?)(?: \((?P<times>\d+)\))?(?: \((?P<detail>[^()]*)\))?"
)
"""One operation of a file line as ``structured_lines.operations`` writes it: ``edited``,
``edited (failed) (2)``, ``read (3) (120 lines)`` (how many times, then the last one's detail)."""


@dataclass(frozen=True, slots=True)
class FileFact:
    """A file tools touched: every operation in order, the last one's details, code written."""

    path: str
    operations: tuple[str, ...]
    detail: str
    code: str = ""
    first_index: int | None = None
    """Index of the message whose tool call first touched the file (or carried it forward)."""
    alias: str = ""
    """How the conversation writes the file when its tools named it by a Windows path
    (``spellings.slash_spelling``), or ''."""

    @property
    def last_operation(self) -> str:
        return self.operations[-1]

    @property
    def read_or_written(self) -> bool:
        """A tool read, wrote or edited it (not only searched it, not only failed to)."""
        return any(op != "searched" and not op.endswith("(failed)") for op in self.operations)


def file_facts(
    file_ops: Sequence[tuple[int, FileOp]], aliases: dict[str, str], tails: frozenset[str]
) -> tuple[FileFact, ...]:
    """One fact per file, in the order first touched; the spellings of one file
    (``spellings.same_files``) are one fact under the longest, its operations in order. A file
    a tool named by a Windows path is one fact with its spellings with ``/`` (``slash_folds``),
    and carries the longest of them, of the one an earlier summary gave it (``aliases``) and
    of the one the conversation writes (``tails``) as its ``alias``: it holds the others."""
    paths = list(dict.fromkeys(op.path for _, op in file_ops))
    folded = same_files(paths)
    slashed = slash_folds([p for p in paths if p not in folded])
    spellings: dict[str, list[str]] = {}
    for spelled, path in slashed.items():
        folded[spelled] = folded.get(path, path)
        spellings.setdefault(folded[spelled], []).append(spelled)
    ops: dict[str, list[FileOp]] = {}
    first: dict[str, int] = {}
    for index, op in file_ops:
        path = folded.get(op.path, op.path)
        ops.setdefault(path, []).append(op)
        first.setdefault(path, index)
    facts = []
    for path, done in ops.items():
        named = [*spellings.get(path, ()), aliases.get(path, ""), slash_spelling(path, tails)]
        facts.append(replace(file_fact(path, done, first[path]), alias=max(named, key=len)))
    return tuple(facts)


def file_fact(path: str, ops: list[FileOp], first_index: int) -> FileFact:
    operations: list[str] = []
    for op in ops:  # spellings of one file an earlier summary listed apart: one "earlier: …"
        if operations and op.operation.startswith(EARLIER) and operations[-1].startswith(EARLIER):
            operations[-1] += ", " + op.operation.removeprefix(EARLIER)
        else:
            operations.append(op.operation)
    code = next((op.code for op in reversed(ops) if op.code), "")
    detail = next((op.detail for op in reversed(ops) if op.detail), "")
    return FileFact(path, tuple(operations), detail, code, first_index)


def carried_operations(path: str, done: str) -> list[FileOp]:
    """The operations an earlier summary's file line lists (``done``: ``read (3), edited
    (failed) (2), edited; last: edited (+4 -2 lines)``), each as many times as it says and the
    last one last, with its detail: counted again with what followed, the next summary says
    ``edited (5)``, not ``earlier: …, edited (2)`` after each compaction's ``edited (3)``. A
    line in another layout is carried as it is written (its last one left out: it is among
    the ones before), after ``EARLIER``."""
    listed, _, last = done.partition(LAST)
    parsed = [_DONE_RE.fullmatch(part) for part in _parts(listed)]
    final = _DONE_RE.fullmatch(last) if last else (parsed[-1] if parsed else None)
    ops = [FileOp(path, m["op"]) for m in parsed if m for _ in range(int(m["times"] or 1))]
    at = [i for i, op in enumerate(ops) if final and op.operation == final["op"]]
    if None in parsed or final is None or not at:
        return [FileOp(path, f"{EARLIER}{listed}")]
    ops.append(replace(ops.pop(at[-1]), detail=final["detail"] or ""))
    return ops


def _parts(listed: str) -> list[str]:
    """``listed`` split at each ``, `` outside parentheses (a detail may hold one)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(listed):
        depth += (char == "(") - (char == ")")
        if depth == 0 and listed.startswith(", ", i):
            parts.append(listed[start:i])
            start = i + 2
    return [*parts, listed[start:]]
