"""The code the demo agent runs and writes: one-off analysis commands and a small checker script.

Kept apart from the script that uses them so each reads as what it is: real Python that really
runs (with the interpreter contextwarden runs under) against the directory under review.
"""

from __future__ import annotations

import re
import shlex
import sys

MODULE_DOCS = """
import ast, pathlib
for path in sorted(pathlib.Path('.').rglob('*.py')):
    if '__pycache__' in path.parts:
        continue
    doc = ast.get_docstring(ast.parse(path.read_text(encoding='utf-8'))) or '(no docstring)'
    print(f"{path}: {doc.splitlines()[0]}")
"""
LONG_FUNCTIONS = """
import ast, pathlib
for path in sorted(pathlib.Path('.').rglob('*.py')):
    if '__pycache__' in path.parts:
        continue
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            size = node.end_lineno - node.lineno + 1
            if size > 30:
                print(f"{path}:{node.lineno} {node.name}() {size} lines")
"""
PROJECT_NAME = (
    "import tomllib; print(tomllib.load(open('pyproject.toml', 'rb'))['project']['name'])"
)
THRESHOLDS = r"\b\d{1,3}(?:_\d{3})+\b|\b0\.\d+\b"
OPTIONAL_IMPORTS = r"^\s*(?:import|from)\s+(?:rich|anthropic|openai|tiktoken|psycopg)\b"
DEFINITION = re.compile(r"^\s*\d+\t\s*(?:async\s+)?(class|def)\s+(\w+)", re.M)

CHECKER_NAME = "check_docstrings.py"
CHECKER = '''"""List the Python modules under a directory that have no docstring."""

import ast
import sys
from pathlib import Path


def missing_docstrings(root: Path) -> list[str]:
    """One line per module (and, later, per public definition) without a docstring."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if ast.get_docstring(tree) is None:
            found.append(f"{path}: module")
    return found


if __name__ == "__main__":
    problems = missing_docstrings(Path(sys.argv[1]))
    print("\\n".join(problems) or "every module has a docstring")
    sys.exit(1 if problems else 0)
'''
CHECKER_OLD = """            found.append(f"{path}: module")
"""
CHECKER_NEW = """            found.append(f"{path}: module")
        for node in ast.walk(tree):
            kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            if isinstance(node, kinds) and not node.name.startswith("_"):
                if ast.get_docstring(node) is None:
                    found.append(f"{path}:{node.lineno}: {node.name}")
"""
CHECKER_TEST_NAME = "test_check_docstrings.py"
CHECKER_TEST = '''"""Tests of check_docstrings.missing_docstrings on throw-away packages."""

import tempfile
import unittest
from pathlib import Path

from check_docstrings import missing_docstrings


class MissingDocstrings(unittest.TestCase):
    def package(self, files: dict[str, str]) -> Path:
        root = Path(tempfile.mkdtemp())
        for name, text in files.items():
            (root / name).write_text(text, encoding="utf-8")
        return root

    def test_module_without_docstring_is_listed(self) -> None:
        root = self.package({"a.py": "x = 1\\n", "b.py": '"""Doc."""\\n'})
        self.assertEqual(missing_docstrings(root), [f"{root / 'a.py'}: module"])

    def test_public_function_without_docstring_is_listed(self) -> None:
        root = self.package({"c.py": '"""Doc."""\\ndef f():\\n    return 1\\n'})
        self.assertEqual(missing_docstrings(root), [f"{root / 'c.py'}:2: f"])

    def test_private_function_is_not_listed(self) -> None:
        root = self.package({"d.py": '"""Doc."""\\ndef _g():\\n    return 1\\n'})
        self.assertEqual(missing_docstrings(root), [])


if __name__ == "__main__":
    unittest.main()
'''

_PY = shlex.quote(sys.executable)


def python(code: str) -> str:
    """A shell command running ``code`` with this interpreter (works in any virtualenv)."""
    return f"{_PY} -c {shlex.quote(code.strip())}"


def python_file(*args: str) -> str:
    """A shell command running this interpreter with ``args`` (a script path, ``-m`` …)."""
    return " ".join([_PY, *(shlex.quote(a) for a in args)])


def bullets(text: str, limit: int = 12) -> str:
    """Non-blank lines of ``text`` as Markdown bullets, at most ``limit`` of them."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    shown = [f"- {ln[:160]}" for ln in lines[:limit]]
    return "\n".join(shown) if shown else "- (nothing found)"


def shortened(text: str, max_lines: int) -> str:
    """``text`` with at most N bullets per section, N as large as keeps it within ``max_lines``."""
    lines = text.splitlines()
    for per_section in range(12, 0, -1):
        kept, shown = [], 0
        for line in lines:
            shown = 0 if line.startswith("#") else shown + line.startswith("- ")
            if not line.startswith("- ") or shown <= per_section:
                kept.append(line)
        if len(kept) <= max_lines:
            break
    return "\n".join(kept) + "\n"
