"""Walking and editing JSON documents by path, for the loaders' wrong-types-anywhere tests, and
the checks those tests share: a loader given any of them loads a valid history or refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from contextwarden.errors import FormatError
from contextwarden.formats import load
from contextwarden.rules import validate

JsonPath = tuple[str | int, ...]


def set_path(record: Any, path: JsonPath, value: Any) -> bool:
    """Set ``record[path]`` to ``value`` where the path exists; False where it does not."""
    *head, last = path
    for key in head:
        if isinstance(record, dict) and isinstance(key, str) and key in record:
            record = record[key]
        elif isinstance(record, list) and isinstance(key, int) and len(record) > key:
            record = record[key]
        else:
            return False
    if isinstance(record, dict) and isinstance(last, str) and last in record:
        record[last] = value
        return True
    if isinstance(record, list) and isinstance(last, int) and len(record) > last:
        record[last] = value
        return True
    return False


def json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in ``value``, the empty one first, depth first."""
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    return [prefix] + [p for key, child in children for p in json_paths(child, (*prefix, key))]


WRONG_VALUES = (None, 5, "x", [], {"a": 1})
"""A value of each JSON kind that a field of another kind may be given instead."""


def assert_wrong_types_never_crash(
    records: list[dict[str, Any]], path: JsonPath, file: Path, format_name: str
) -> None:
    """Give ``path`` each wrong value in every record that has it, write the records to ``file``
    as JSON lines and load it leniently: the loader refuses a file with nothing left to read, or
    loads a valid history whose issues each name their line."""
    for value in WRONG_VALUES:
        mutated = [json.loads(json.dumps(r)) for r in records]
        assert any([set_path(r, path, value) for r in mutated]), f"no record has {path}"
        file.write_text("\n".join(json.dumps(r) for r in mutated) + "\n", encoding="utf-8")
        try:
            history = load(file, format_name, lenient=True)  # every record is corrupt
        except FormatError as exc:  # nothing left to salvage: refused whatever the flags
            assert "no message could be read" in str(exc)
            continue
        assert history.source is not None and history.source.records == len(records)
        assert validate(history.messages) == []
        assert all(i.line is not None for i in history.source.issues)


def draw_mutations(data: st.DataObject, document: Any, odd: st.SearchStrategy[Any]) -> None:
    """Replace one to four values anywhere below ``document``'s root with values drawn from
    ``odd``, each path drawn from what the document holds by then."""
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.sampled_from(json_paths(document)[1:]))
        set_path(document, path, data.draw(odd))
