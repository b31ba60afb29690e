"""The public API is exported from ``contextwarden`` and stays complete as the code grows."""

from __future__ import annotations

import importlib
import inspect

import contextwarden
from contextwarden.errors import ContextWardenError

# Subpackages whose public classes users need; each class in their __all__ must be top-level.
SUBPACKAGES = ("contextwarden.compaction", "contextwarden.stores", "contextwarden.summarizers")
# Public in their subpackage for extension authors, deliberately not at top level.
NOT_TOP_LEVEL = {
    "Facts",  # summarizers: the extracted facts, for custom summarizers
    "LLMSummarizer",  # summarizers: base class for another provider's summarizer
    "SummaryRequest",  # summarizers: what an LLM summarizer sends, for that base class
    "TokenCache",  # compaction: per-message count cache, for strategy authors
    "StoreWarning",  # stores: warning category (torn JSONL line), filterable by its path
    "WriteThrough",  # stores: the listener ConversationHistory.open installs
}


def test_all_is_unique_and_resolvable() -> None:
    names = contextwarden.__all__  # its order is checked by ruff (RUF022)
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(contextwarden, name), name


def test_every_error_class_is_exported() -> None:
    def subclasses(cls: type) -> set[type]:
        found = set(cls.__subclasses__())
        return found.union(*(subclasses(c) for c in found))

    for module in SUBPACKAGES:
        importlib.import_module(module)
    missing = {c.__name__ for c in subclasses(ContextWardenError) | {ContextWardenError}}
    missing -= set(contextwarden.__all__)
    assert not missing


def test_public_classes_of_subpackages_are_exported() -> None:
    missing = []
    for module_name in SUBPACKAGES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value) and name not in NOT_TOP_LEVEL:
                if name not in contextwarden.__all__:
                    missing.append(f"{module_name}.{name}")
    assert not missing, f"export these from contextwarden/__init__.py: {missing}"


def test_names_the_readme_uses_exist() -> None:
    for name in (
        "ConversationHistory",
        "ContextManager",
        "ContextPolicy",
        "load",
        "validate",
        "HeuristicCounter",
        "TiktokenCounter",
        "StructuredSummarizer",
        "AnthropicSummarizer",
        "OpenAISummarizer",
        "SqliteStore",
        "JsonlStore",
        "PostgresStore",
        "Truncate",
    ):
        assert name in contextwarden.__all__
