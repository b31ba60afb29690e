"""Walking and editing JSON documents by path, for the loaders' wrong-types-anywhere tests."""

from __future__ import annotations

from typing import Any

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
