"""The demo agent's script: survey a directory, read it, answer follow-ups, write a note and a
checker, report back. Each step makes real tool calls; the words are templates filled from what
the tools returned.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from contextwarden.agent.tools import Call, Outcome
from contextwarden.eval.demo_code import (
    CHECKER,
    CHECKER_NAME,
    CHECKER_NEW,
    CHECKER_OLD,
    CHECKER_TEST,
    CHECKER_TEST_NAME,
    DEFINITION,
    LONG_FUNCTIONS,
    MODULE_DOCS,
    OPTIONAL_IMPORTS,
    PROJECT_NAME,
    THRESHOLDS,
    bullets,
    python,
    python_file,
    shortened,
)
from contextwarden.eval.demo_recorder import Recorder

READ_FILES = 18
"""How many of the largest files the agent reads in full."""
NOTE_NAME = "ORIENTATION.md"
NOTE_MAX_LINES = 60
"""The limit the person asks for in the script (the agent checks it with ``wc -l``)."""
PLAN = (
    ("Survey the layout", "in_progress", "Surveying"),
    ("Read the main modules", "pending", "Reading"),
    ("Find thresholds and fragile spots", "pending", "Searching"),
    (f"Write {NOTE_NAME}", "pending", "Writing"),
)
"""The agent's first todo list: (task, status, what it shows while working on it)."""
GUESSES = ("utils.py", "helpers.py", "util.py", "common_utils.py", "misc_helpers.py")
"""Where the agent first looks for shared helpers; the first one that does not exist is read."""
SYSTEM_PROMPT = (
    "You are a coding agent working in {root}. You have tools to read, search and list files, run "
    "shell commands and write files. Work step by step and keep the user informed.\n\n"
    "(contextwarden demo: this session was produced by a scripted agent. Every tool call was "
    "really executed and every tool output is real; the assistant's words are templates.)"
)


class Review:
    """The script: survey, read, answer follow-ups, write and revise a note, report back."""

    def __init__(
        self, rec: Recorder, root: Path, files: list[Path], suffix: str, note: Path
    ) -> None:
        self.rec, self.root, self.files, self.suffix, self.note = rec, root, files, suffix, note
        self.python = suffix == ".py"
        self.findings: dict[str, str] = {}
        self.remark = ""

    def run(self) -> None:
        self.rec.user(
            f"I'm new to this codebase ({self.root}). Review it and write me a short orientation "
            f"note at {self.note}: what each module is for, where the important thresholds and "
            "limits are defined, and anything that looks fragile. Do not modify any file under "
            f"{self.root}; only write the note."
        )
        self._survey()
        self._read_modules(self.files[: READ_FILES // 2], interject=True)
        self._search()
        self._write_note()
        self.rec.user(
            f"Thanks. Keep the note under {NOTE_MAX_LINES} lines and put the thresholds section "
            "first."
        )
        self._revise_note()
        self._read_modules(self.files[READ_FILES // 2 : READ_FILES], interject=False)
        self._error_handling()
        if self.python:
            self._checker()
        self.rec.user("Great, that's all for now. Summarize what you found in three bullet points.")
        self._wrap_up()

    # ------------------------------------------------------------------ steps
    def _survey(self) -> None:
        self._act(
            "I'll start with an overview of the layout, then read the largest modules.",
            Call("todo_write", {"todos": [_todo(*item) for item in PLAN]}),
        )
        self._act(
            "Listing the files and their sizes.",
            Call("list_files", {"pattern": f"**/*{self.suffix}", "path": str(self.root)}),
            Call("bash", {"command": "ls -la", "description": "List the top directory"}),
        )
        count = f"find . -name '*{self.suffix}' -not -path '*/__pycache__/*' | sort | xargs wc -l"
        self._act(
            "Counting lines per file.",
            Call("bash", {"command": count, "description": "Line counts"}),
        )
        self._guesses()

    def _guesses(self) -> None:
        """Two guesses an agent makes about a codebase it does not know, and what comes of them."""
        guess = next((p for p in (self.root / n for n in GUESSES) if not p.exists()), None)
        missing = guess is None
        if guess is not None:
            (read,) = self._act(
                "Most projects keep shared helpers in a utils module; let me check it first.",
                Call("read_file", {"path": str(guess)}),
            )
            missing = read.is_error
        (project,) = self._act(
            f"{'No such file' if missing else 'Found it'}. Let me find the project's name in "
            "its metadata.",
            Call("bash", {"command": python(PROJECT_NAME), "description": "Read the project name"}),
        )
        self._module_docs(
            "There is no pyproject.toml here: this directory is the package itself, not the "
            "project root. The module docstrings will tell me more, one line per module."
            if project.is_error
            else f"The project is `{project.text.strip()}`. Now one line per module from the "
            "docstrings."
        )

    def _module_docs(self, text: str) -> None:
        if not self.python:
            self._act(text, Call("bash", {"command": "ls -R", "description": "Every file"}))
            return
        (docs,) = self._act(
            text,
            Call("bash", {"command": python(MODULE_DOCS), "description": "Module docstrings"}),
        )
        self.findings["modules"] = docs.text

    def _read_modules(self, files: Sequence[Path], *, interject: bool) -> None:
        pairs = [files[i : i + 2] for i in range(0, len(files), 2)]
        for n, pair in enumerate(pairs):
            names = " and ".join(f"`{p.relative_to(self.root)}`" for p in pair)
            said = self._act(
                f"Reading {names}.",
                *(Call("read_file", {"path": str(p)}) for p in pair),
                interjection=(
                    "While you're at it: which modules import optional dependencies (rich, "
                    "anthropic, openai, tiktoken, psycopg)? Those imports must stay lazy."
                    if interject and n == 1
                    else None
                ),
            )
            self.remark = " ".join(
                _describe(p.relative_to(self.root), out) for p, out in zip(pair, said, strict=True)
            )

    def _say(self, text: str) -> None:
        said = f"{self.remark}\n\n{text}" if self.remark else text
        self.remark = ""
        self.rec.say(said)

    def _act(self, text: str, *calls: Call, interjection: str | None = None) -> list[Outcome]:
        """A tool call whose text first says what the agent made of the previous results."""
        said = f"{self.remark}\n\n{text}" if self.remark else text
        self.remark = ""
        return self.rec.act(said, *calls, interjection=interjection)

    def _search(self) -> None:
        glob = f"*{self.suffix}"
        (numbers,) = self._act(
            "Now the thresholds: numbers written with digit separators and ratios.",
            Call("grep", {"pattern": THRESHOLDS, "path": str(self.root), "glob": glob}),
        )
        (optional,) = self._act(
            "And, as you asked, the modules importing optional dependencies.",
            Call("grep", {"pattern": OPTIONAL_IMPORTS, "path": str(self.root), "glob": glob}),
        )
        (todos,) = self._act(
            "Looking for admitted fragility: TODO, FIXME, XXX, HACK.",
            Call(
                "grep",
                {"pattern": r"\b(?:TODO|FIXME|XXX|HACK)\b", "path": str(self.root), "glob": glob},
            ),
        )
        self.findings.update(thresholds=numbers.text, optional=optional.text, todos=todos.text)
        if self.python:
            (long,) = self._act(
                "Long functions are where bugs hide; listing those over 30 lines.",
                Call(
                    "bash",
                    {
                        "command": python(LONG_FUNCTIONS),
                        "description": "Functions longer than 30 lines",
                    },
                ),
            )
            self.findings["long"] = long.text

    def _write_note(self) -> None:
        sections = {
            "Modules": self.findings.get("modules", ""),
            "Optional dependencies": self.findings.get("optional", ""),
            "Fragile spots": self.findings.get("long", "") + "\n" + self.findings.get("todos", ""),
            "Thresholds": self.findings.get("thresholds", ""),
        }
        body = "\n\n".join(f"## {title}\n\n{bullets(text)}" for title, text in sections.items())
        self._act(
            f"I have enough for a first version; writing {self.note.name}.",
            Call(
                "write_file",
                {
                    "path": str(self.note),
                    "content": f"# Orientation: {self.root.name}\n\n{body}\n",
                },
            ),
        )
        self._say(f"The first version of the note is at {self.note}.")

    def _revise_note(self) -> None:
        text = self.note.read_text(encoding="utf-8")
        section = text[text.index("## Thresholds") :].rstrip()
        title = text.split("\n", 1)[0]
        self._edit("Moving the thresholds section first.", "\n\n" + section, "")
        self._edit("Inserting it after the title.", title, f"{title}\n\n{section}")
        wc = f"wc -l {shlex.quote(str(self.note))}"
        (lines,) = self._act(
            "Checking the length.",
            Call("bash", {"command": wc, "description": "Count the note's lines"}),
        )
        count = int(lines.text.split()[0]) if not lines.is_error else 0
        if count > NOTE_MAX_LINES:
            self._shorten_note(count)
        self._say(f"The note has the thresholds first and is within {NOTE_MAX_LINES} lines now.")
        self.rec.user("Good. Now read the rest of the main modules too, then I have a question.")

    def _edit(self, text: str, old: str, new: str) -> None:
        edit = {"path": str(self.note), "old_string": old, "new_string": new}
        self._act(text, Call("edit_file", edit))

    def _shorten_note(self, count: int) -> None:
        text = shortened(self.note.read_text(encoding="utf-8"), NOTE_MAX_LINES)
        self._act(
            f"It is {count} lines, over the limit; keeping the first bullets of each section.",
            Call("write_file", {"path": str(self.note), "content": text}),
        )

    def _error_handling(self) -> None:
        target = self.files[0]
        self._say("I have read the remaining modules.")
        self.rec.user(
            f"One more: how does {target.name} handle errors? Quote the relevant lines in the note."
        )
        (found,) = self._act(
            f"Searching {target.name} for raise and except.",
            Call("grep", {"pattern": r"\braise\b|\bexcept\b", "path": str(target)}),
        )
        quoted = "\n".join(found.text.splitlines()[:8])
        self._act(
            "Adding the quotes to the note.",
            Call(
                "edit_file",
                {
                    "path": str(self.note),
                    "old_string": "## Modules",
                    "new_string": f"## Errors in {target.name}\n\n```\n{quoted}\n```\n\n## Modules",
                },
            ),
        )
        self._say(f"Done: {target.name} raises and catches errors at the lines quoted in the note.")

    def _checker(self) -> None:
        """Write a checker script in the scratch directory, run it, extend it, test it."""
        script = self.note.parent / CHECKER_NAME
        self.rec.user(
            "Before you finish: write a small script in the scratch directory that lists the "
            "modules without a docstring, and run it on the package."
        )
        self._act(
            f"Writing {CHECKER_NAME}.",
            Call("write_file", {"path": str(script), "content": CHECKER}),
        )
        first = self._run_checker(script, "Running it on the package.")
        self._say(f"It reports: {_first_line(first.text)}")
        self.rec.user("Extend it to public functions and classes too, and add a unittest for it.")
        edit = {"path": str(script), "old_string": CHECKER_OLD, "new_string": CHECKER_NEW}
        self._act("Adding public functions and classes to the check.", Call("edit_file", edit))
        second = self._run_checker(script, "Running the extended check.")
        self._test_checker(script.parent, len(second.text.splitlines()) - second.is_error)

    def _run_checker(self, script: Path, text: str) -> Outcome:
        command = python_file(str(script), str(self.root))
        (out,) = self._act(
            text, Call("bash", {"command": command, "description": "Docstrings missing"})
        )
        return out

    def _test_checker(self, scratch: Path, listed: int) -> None:
        test = scratch / CHECKER_TEST_NAME
        self._act(
            f"It lists {listed} line(s). Now a unittest for it.",
            Call("write_file", {"path": str(test), "content": CHECKER_TEST}),
        )
        command = f"cd {shlex.quote(str(scratch))} && " + python_file(
            "-m", "unittest", "-v", test.stem
        )
        (tests,) = self._act(
            "Running the tests.",
            Call("bash", {"command": command, "description": "Run the checker's tests"}),
        )
        verdict = "pass" if not tests.is_error else "fail; the output above says where"
        self._say(f"The checker and its tests are in {scratch}; the tests {verdict}.")

    def _wrap_up(self) -> None:
        read = min(READ_FILES, len(self.files))
        self._say(
            f"- I read the {read} largest of {len(self.files)} files under {self.root.name}.\n"
            f"- Thresholds, optional imports and long functions are listed in {self.note}.\n"
            "- The most fragile spots are the long functions listed under 'Fragile spots'."
        )


def _first_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("Exit code")]
    return lines[0] if lines else "(no output)"


def _describe(name: Path, out: Outcome) -> str:
    """A remark about a file the agent read, made from what read_file returned."""
    if out.is_error:
        return f"`{name}` could not be read ({out.text.splitlines()[0]})."
    lines = out.text.count("\n") + 1
    found = DEFINITION.findall(out.text)
    classes = [n for kind, n in found if kind == "class"]
    functions = [n for kind, n in found if kind == "def"]
    named = ", ".join(f"`{n}`" for n in (classes + functions)[:4])
    return f"`{name}` has {lines} lines, {len(classes)} classes and {len(functions)} functions" + (
        f" (among them {named})." if named else "."
    )


def _todo(content: str, status: str, active: str) -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": active}
