"""The main thread of a Claude Code session: which records the view holds, grouped into turns.
The walk follows ``parentUuid`` links back from the last record (``parent_chain``).
"""

from __future__ import annotations

from collections.abc import Sequence

from contextwarden.formats.claude_code_records import Record, Scan
from contextwarden.formats.parent_chain import walk_back


def _main_chain(scan: Scan) -> set[str]:
    """Uuids on the parentUuid chain (the logical parent where a compaction cut it) from the
    last conversation record, bridging gaps onto conversation records."""
    if not scan.conversation:
        return set()
    links = {
        uuid: (line, parent if parent is not None else logical)
        for uuid, (line, parent, logical) in scan.nodes.items()
    }
    return set(walk_back(scan.conversation[-1][1], links, scan.conversation, scan.report))


def main_thread(scan: Scan) -> tuple[list[Record], list[Record]]:
    """(records in the view, other non-sidechain records), both in file order."""
    chain = _main_chain(scan)
    replies = {r.msg_id for r in scan.records if r.uuid in chain and r.msg_id}
    main = {r.uuid for r in scan.records if r.uuid in chain or r.msg_id in replies}
    inside = [r for r in scan.records if r.uuid in main]
    calls = {u.id for r in inside for u in r.message.tool_uses}
    answered = {res.tool_use_id for r in inside for res in r.message.tool_results}
    for rec in scan.records:  # results of parallel calls: side branches of the chain
        ids = [res.tool_use_id for res in rec.message.tool_results]
        if rec.uuid not in main and ids and all(i in calls and i not in answered for i in ids):
            main.add(rec.uuid)
            answered.update(ids)
    others = [r for r in scan.records if r.uuid not in main]
    return [r for r in scan.records if r.uuid in main], others


def turns(records: Sequence[Record]) -> list[list[Record]]:
    """Records grouped into alternating turns; one API reply's records form one assistant turn."""
    grouped: list[list[Record]] = []
    for rec in records:
        reply = _open_reply(grouped, rec.msg_id) if rec.msg_id else None
        if reply is not None:
            reply.append(rec)
        elif grouped and grouped[-1][0].message.role == rec.message.role:
            grouped[-1].append(rec)
        else:
            grouped.append([rec])
    return grouped


def _open_reply(turns: list[list[Record]], msg_id: str) -> list[Record] | None:
    """The assistant turn of reply ``msg_id`` when only its tool results were recorded since."""
    if turns and any(r.msg_id == msg_id for r in turns[-1]):
        return turns[-1]
    if len(turns) > 1 and any(r.msg_id == msg_id for r in turns[-2]):
        return turns[-2] if all(r.message.tool_results for r in turns[-1]) else None
    return None
