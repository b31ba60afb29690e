"""The person's answers to an agent's question tool, read from the tool's result as typed words.

An agent asks through a tool and the person's choice or typed reply comes back as that tool's
result, so no user text block holds it; yet it is what the person said. Each agent's real wording:

- Claude Code ``AskUserQuestion``: ``User has answered your questions: "<question>"="<answer>",
  …. You can now continue with the user's answers in mind.`` (the result text of its session
  JSONL; the transcripts of 2026's releases, claude-opus-4-7 and 4-8, word it ``Your questions
  have been answered: "<question>"="<answer>", …. You can now continue with these answers in
  mind.``; an answer may go on with ``user notes:``, kept unless it repeats a typed answer as
  Claude Code writes it for an "Other" reply, or ``selected markdown:`` and the chosen option's
  preview, which the agent wrote and is dropped). With the call, each question is named by its
  ``header``, the short label the dialog shows (Codex and Gemini CLI calls carry one too).
- SpecStory's markdown export of that tool (v2.1.0): each question in bold, ``Options:`` and its
  list, then ``**Answer:** <answer>``.
- Codex ``request_user_input``: the output is JSON ``{"answers": {"<id>": {"answers": ["…"]}}}``
  and the call's ``questions`` name each id's question (Codex CLI rollout files).
- Gemini CLI ``ask_user``: ``{"answers": {"0": "Option A", "1": "Some text"}}``, keyed by the
  question's position in the call (gemini-cli ``docs/tools/ask-user.md``).
- qwen-code ``ask_user_question``: ``User has provided the following answers:`` then a line
  ``**<header>**: <answer>`` per answer, ``**Question N**`` for a question with no header
  (qwen-code 0.24's ``AskUserQuestionTool``).
- Copilot CLI ``ask_user``: the call asks one ``question`` with its ``choices``, and the result is
  ``User selected: <choice>``, or ``User responded: <text>`` when the person typed a reply of
  their own (its session files, ``tool.execution_complete``, 2026). Read only with the call,
  whose question it answers: a program may print those words too.

Every answer is carried as ``"<question>"="<answer>"`` — Claude Code's own shape — without the
option list, so a summary quotes what was asked and what the person chose, compactly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping

from contextwarden.model import ToolResultBlock, ToolUseBlock

_CLAUDE_CODE_RE = re.compile(
    r"\A(?:User has answered your questions|Your questions have been answered): (.+?)\.?\s*"
    r"You can now continue with (?:the user's|these) answers in mind\.\s*\Z",
    re.DOTALL,
)
_PREVIEW_RE = re.compile(r' selected markdown:\n.*?(?=, "[^"\n]*"="|\Z)', re.DOTALL)
_ECHOED_NOTE_RE = re.compile(r'(="(.*?)") user notes: \2(?=, "|\Z)', re.DOTALL)
_EXPORT_QUESTION_RE = re.compile(r"^\*\*(.+?)\*\*\s*\n\s*\nOptions:\n", re.MULTILINE)
_JSON_ANSWERS_RE = re.compile(r'\{\s*"answers"\s*:')
_QWEN_HEAD = "User has provided the following answers:"
_QWEN_ANSWER_RE = re.compile(r"^\*\*(.+?)\*\*: (.*?)(?=\n\*\*[^*\n]+\*\*: |\Z)", re.DOTALL | re.M)
_QWEN_UNNAMED_RE = re.compile(r"^Question (\d+)$")
_COPILOT_HEADS = ("User selected: ", "User responded: ")
_EXPORT_ANSWER_RE = re.compile(r"^\*\*Answer:\*\*[ \t]*(.+?)\s*(?:\n\s*\n|\Z)", re.DOTALL | re.M)


def question_answers(block: ToolResultBlock, call: ToolUseBlock | None = None) -> tuple[str, ...]:
    """The person's answers a question tool's result holds, one text per answer; () for any other
    result. ``call``: the tool call it answers, which names the questions of a JSON answer."""
    if block.is_error:
        return ()
    text = block.text.strip()
    found = _CLAUDE_CODE_RE.match(text)
    if found:
        pairs = _ECHOED_NOTE_RE.sub(r"\1", _PREVIEW_RE.sub("", found.group(1)).strip())
        return (_headed(pairs, call),)
    if text.startswith("{"):
        return tuple(_json_answers(text, call))
    if text.startswith(_QWEN_HEAD):
        return tuple(_qwen_answers(text[len(_QWEN_HEAD) :].strip(), call))
    for head in _COPILOT_HEADS:
        if text.startswith(head):
            return _copilot_answer(text[len(head) :].strip(), call)
    return tuple(_exported_answers(text))


def _copilot_answer(answer: str, call: ToolUseBlock | None) -> tuple[str, ...]:
    """Copilot CLI's choice, paired with the one ``question`` its call asked; () without it."""
    question = call.input.get("question") if call is not None else None
    if not answer or not isinstance(question, str) or not question.strip():
        return ()
    return (_pair(question.strip(), answer),)


def _qwen_answers(text: str, call: ToolUseBlock | None) -> Iterator[str]:
    """qwen-code's lines, each named by its header (an unnamed ``Question N`` by the call's
    N-th question)."""
    asked = _questions(call)
    for found in _QWEN_ANSWER_RE.finditer(text):
        named, answer = found.group(1).strip(), found.group(2).strip()
        unnamed = _QWEN_UNNAMED_RE.match(named)
        if unnamed:
            named = asked.get(str(int(unnamed.group(1)) - 1), named)
        if answer:
            yield _pair(named, answer)


def _headed(pairs: str, call: ToolUseBlock | None) -> str:
    """Claude Code's pairs with each question the call gives a ``header`` for named by it."""
    for question in _listed(call):
        header, text = question.get("header"), question.get("question")
        if isinstance(header, str) and header.strip() and isinstance(text, str):
            pairs = pairs.replace(f'"{text}"=', f'"{header.strip()}"=')
    return pairs


def _listed(call: ToolUseBlock | None) -> list[Mapping[str, object]]:
    listed = call.input.get("questions") if call is not None else None
    if not isinstance(listed, list | tuple):
        return []
    return [q for q in listed if isinstance(q, Mapping)]


def _pair(question: str, answer: str) -> str:
    return f'"{question}"="{answer}"'


def _exported_answers(text: str) -> Iterator[str]:
    """SpecStory's export: each bold question followed, after its options, by its answer."""
    if not text.startswith("**"):
        return
    questions = list(_EXPORT_QUESTION_RE.finditer(text))
    for i, question in enumerate(questions):
        end = questions[i + 1].start() if i + 1 < len(questions) else len(text)
        answer = _EXPORT_ANSWER_RE.search(text, question.end(), end)
        if answer and answer.group(1).strip():
            yield _pair(question.group(1).strip(), answer.group(1).strip())


def _json_answers(text: str, call: ToolUseBlock | None) -> Iterator[str]:
    """Codex's and Gemini CLI's JSON: ``{"answers": {key: answer}}`` and nothing else (any
    other JSON result, a command's output say, is not parsed to find that out)."""
    if _JSON_ANSWERS_RE.match(text) is None:
        return
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return
    if not isinstance(value, dict) or set(value) != {"answers"}:
        return
    answers = value["answers"]
    if not isinstance(answers, dict):
        return
    asked = _questions(call)
    for key, answer in answers.items():
        chosen = _chosen(answer)
        if chosen:
            yield _pair(asked.get(str(key), str(key)), chosen)


def _chosen(answer: object) -> str:
    """One answer: a string (Gemini CLI) or ``{"answers": [...]}`` (Codex)."""
    if isinstance(answer, str):
        return answer.strip()
    if isinstance(answer, Mapping):
        listed = answer.get("answers")
        if isinstance(listed, list | tuple):
            return ", ".join(a.strip() for a in listed if isinstance(a, str) and a.strip())
    return ""


def _questions(call: ToolUseBlock | None) -> dict[str, str]:
    """Each question's header (or, without one, its text) by its id (Codex) and by its position
    (Gemini CLI)."""
    found: dict[str, str] = {}
    for position, question in enumerate(_listed(call)):
        named = question.get("header") or question.get("question")
        if not isinstance(named, str) or not named.strip():
            continue
        found[str(position)] = named.strip()
        if isinstance(question.get("id"), str):
            found[str(question["id"])] = named.strip()
    return found
