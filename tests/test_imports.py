"""One direction through the house: no import cycle in ``src/contextwarden`` and no lower room
importing a higher one, counting every import (inside functions and ``TYPE_CHECKING`` blocks too).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "contextwarden"

BELOW_HISTORY = (
    "model",
    "content_ids",
    "rules",
    "log",
    "repair",
    "loadreport",
    "errors",
    "toolnames",
    "tokens",
    "wire",
)
"""Rooms the history is built on: they know nothing of it or of anything above it."""
HISTORY = ("history", "history_checks", "history_read", "history_record")
"""The history's room: ``ConversationHistory`` and the modules it is split into."""
ABOVE_HISTORY = (
    "formats",
    "stores",
    "manager",
    "manager_runs",
    "compaction",
    "summarizers",
    "cost",
    "mirror",
)
ENTRY_POINTS = ("integrations", "proxy", "agent", "cli", "eval", "__main__")


def _modules() -> dict[str, Path]:
    found = {}
    for path in (SRC / PACKAGE).rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imported(name: str, path: Path) -> Iterator[str]:
    """Every module of the package that ``name`` imports, wherever the import statement is.

    ``from pkg import sub`` imports the submodule ``pkg.sub`` (an edge to it, not to ``pkg``'s
    ``__init__``); the parent packages Python initialises on the way are not counted, or every
    module would depend on ``contextwarden/__init__``.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                if f"{source}.{alias.name}" in MODULES:
                    yield f"{source}.{alias.name}"
                elif source in MODULES:
                    yield source


GRAPH = {name: set(_imported(name, path)) - {name} for name, path in MODULES.items()}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(GRAPH[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


def test_the_walk_sees_imports_inside_functions_and_type_checking() -> None:
    # Known edges that only exist inside a function or a TYPE_CHECKING block: if the walk missed
    # them, the cycle test below could not fail.
    assert "contextwarden.history" in GRAPH["contextwarden.formats"]  # TYPE_CHECKING
    assert "contextwarden.proxy.app" in GRAPH["contextwarden.proxy.serve"]  # inside a function


def test_no_import_cycle() -> None:
    assert _cycles() == []


@pytest.mark.parametrize("room", BELOW_HISTORY)
def test_rooms_below_the_history_import_nothing_above_it(room: str) -> None:
    higher = {*HISTORY, *ABOVE_HISTORY, *ENTRY_POINTS}
    offenders = sorted(
        f"{module} -> {target}"
        for module in GRAPH
        if _room(module) == room
        for target in GRAPH[module]
        if _room(target) in higher
    )
    assert offenders == []


@pytest.mark.parametrize("room", HISTORY)
def test_the_history_imports_no_loader_store_or_manager(room: str) -> None:
    higher = {*ABOVE_HISTORY, *ENTRY_POINTS}
    assert sorted(t for t in GRAPH[f"{PACKAGE}.{room}"] if _room(t) in higher) == []


def test_nothing_below_the_entry_points_imports_them() -> None:
    offenders = sorted(
        f"{module} -> {target}"
        for module in GRAPH
        if _room(module) not in ENTRY_POINTS and module != PACKAGE
        for target in GRAPH[module]
        if _room(target) in ENTRY_POINTS
    )
    assert offenders == []
