"""Every optional import names the extra that installs it, and that extra really lists the
package: ``pip install 'contextwarden[X]'`` after a MissingDependencyError fixes it."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQUIRE = re.compile(r'require\("([\w.]+)", "([\w-]+)"\)')
PROVIDERS = {"langchain_openai": "langchain", "langchain_anthropic": "langchain"}
"""Packages the README's examples import that no module of ours does: the chat models."""


def extras() -> dict[str, set[str]]:
    """Each extra's distribution names (normalised), ``contextwarden[...]`` expanded."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    raw: dict[str, list[str]] = table["optional-dependencies"]
    names = {extra: {_name(r) for r in reqs} for extra, reqs in raw.items()}
    for extra, reqs in raw.items():
        for req in reqs:
            inner = re.match(r"contextwarden\[(.+)\]", req)
            for other in inner.group(1).split(",") if inner else ():
                names[extra] |= names[other.strip()]
    return names


def _name(requirement: str) -> str:
    head = re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", head).lower()


def wanted() -> dict[str, str]:
    """Top-level module → the extra our code says installs it."""
    found = dict(PROVIDERS)
    for path in (ROOT / "src").rglob("*.py"):
        for module, extra in REQUIRE.findall(path.read_text(encoding="utf-8")):
            found[module.split(".")[0]] = extra
    return found


def test_every_optional_import_is_in_the_extra_it_names() -> None:
    declared, owners = extras(), packages_distributions()
    missing = []
    for module, extra in sorted(wanted().items()):
        dists = {_name(d) for d in owners.get(module, [])}
        assert dists, f"{module} is not installed in the test environment"
        if not dists & declared[extra]:
            missing.append(f"{module} ({', '.join(sorted(dists))}) not in [{extra}]")
    assert missing == []
    assert {"langchain-openai", "langchain-anthropic"} <= declared["langchain"]
    assert "pydantic-ai-slim" in declared["pydantic-ai"]
