"""Tool responses a Gemini CLI history holds twice, found in a ``/chat share`` export's sections.

Gemini CLI can send a completed call's response once more (a known bug of the CLI): its history
then holds a second content of the same responses, which answers no call and would become the
person's text (tens of thousands of tokens in a long session). The CLI gives every call its own
``id`` (``<name>__<name>_<time>_<n>``), so a response under an id already answered, with the same
``name``, is that response again when it is one of:

- the same payload, word for word;
- the same response with one copy masked: the CLI's tool-output masking replaces an older
  output in its history with ``<tool_output_masked>`` (a preview and "Output too large. Full
  output available at: <file>"), and a copy it sent again may be masked too (to another file) or
  not. The call is answered once, by the whole output where one copy has it (else the first
  copy); the masked copy not loaded is kept in the load report's
  ``metadata["masked_responses"]`` (wire id → its masked outputs).

Anything else under a known id is new and is loaded. Each section that held repeats is reported.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from contextwarden.loadreport import LoadReport

MASKED_OPENING = "<tool_output_masked>"
"""How the CLI's masked tool output begins (its ``MASKING_INDICATOR_TAG``)."""
WORD_FOR_WORD = "word for word (the CLI sent it again)"
MASKED = (
    "but for the CLI's masking of a copy's output (<tool_output_masked>); loaded once, "
    "whole where a copy is"
)

Parts = list[dict[str, Any]]


def unrepeated(sections: Sequence[tuple[int, Parts]], report: LoadReport) -> list[Parts]:
    """Each section's parts (``(line, parts)``) without the responses that repeat one an earlier
    section holds; a whole copy takes the place of a masked one loaded before it."""
    kept = [list(parts) for _, parts in sections]
    loaded: dict[str, list[tuple[int, int]]] = {}  # wire id -> where its responses are kept
    for n, (line, parts) in enumerate(sections):
        repeats: list[tuple[str, int, str]] = []
        gone: set[int] = set()
        for k, part in enumerate(parts):
            wire = _wire_id(part)
            if wire is None:
                continue
            place = next((p for p in loaded.get(wire, ()) if _same(kept[p[0]][p[1]], part)), None)
            if place is None:
                loaded.setdefault(wire, []).append((n, k))
                continue
            how = _keep_whole(kept, place, part, report)
            gone.add(k)
            repeats.append((wire, sections[place[0]][0], how))
        kept[n] = [part for k, part in enumerate(kept[n]) if k not in gone]
        if repeats:
            _report(repeats, line, report)
    return kept


def _wire_id(part: Mapping[str, Any]) -> str | None:
    response = part.get("functionResponse")
    wire = response.get("id") if isinstance(response, Mapping) else None
    return wire if isinstance(wire, str) and wire else None


def _same(first: Mapping[str, Any], again: Mapping[str, Any]) -> bool:
    """Whether ``again`` is ``first`` sent once more: word for word, or one copy masked."""
    a, b = first["functionResponse"], again["functionResponse"]
    if _key(a) == _key(b):
        return True
    return a.get("name") == b.get("name") and (_masked(a) is not None or _masked(b) is not None)


def _keep_whole(kept: list[Parts], place: tuple[int, int], again: Any, report: LoadReport) -> str:
    """Keep the whole copy where the first one was; return how the two copies differ."""
    n, k = place
    first = kept[n][k]
    if _key(first["functionResponse"]) == _key(again["functionResponse"]):
        return WORD_FOR_WORD
    if _masked(first["functionResponse"]) and not _masked(again["functionResponse"]):
        kept[n][k], first, again = again, again, first
    response = again["functionResponse"]
    report.metadata.setdefault("masked_responses", {}).setdefault(response["id"], []).append(
        _masked(response)
    )
    return MASKED


def _masked(response: Mapping[str, Any]) -> str | None:
    """The masked output a response carries (the CLI's snippet), or None."""
    body = response.get("response")
    output = body.get("output") if isinstance(body, Mapping) else None
    return output if isinstance(output, str) and output.startswith(MASKED_OPENING) else None


def _key(response: Mapping[str, Any]) -> str:
    return json.dumps(response, sort_keys=True, default=str)


def _report(repeats: list[tuple[str, int, str]], line: int, report: LoadReport) -> None:
    for how in dict.fromkeys(h for _, _, h in repeats):
        ids = [wire for wire, _, h in repeats if h == how]
        first = min(at for _, at, h in repeats if h == how)
        what = (
            f"tool response {ids[0]} repeats the one"
            if len(ids) == 1
            else f"{len(ids)} tool responses ({', '.join(ids)}) repeat the ones"
        )
        report.skip(f"{what} loaded from line {first} {how}; not loaded twice", line=line)
