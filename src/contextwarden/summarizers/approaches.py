"""An approach the assistant states before it acts: what it will change, on what, and how.

"Let's fix this by updating the `isSessionRepository` function to handle …", "I'll refactor the
policy logic into a reusable `PolicyEvaluator` class": the change chosen, said in the first
person as a step is. What sets it apart from the step's narration ("Let me update the README:",
"Let me fix this:") is that it names what it changes and says how or what for.
"""

from __future__ import annotations

import re

_LEAD = (
    r"(?:(?:good|great|perfect|ok(?:ay)?|alright|now|next|then|finally|also|first|so)\b"
    r"[,!.]?\s*)*"
)
"""Words an agent opens a step with before it says what it does ("Perfect! Now, …")."""
_SPEAKER = (
    r"(?:let's|let us|let me|I'll|I will|we'll|we will|I'm going to|I am going to"
    r"|we're going to|I need to|we need to)\s+"
    r"(?:(?:now|first|also|then|just|start by|begin by|go ahead and|try to)\s+)*"
)
"""The assistant saying what it (or the two of them) will do next."""
_CHANGE = (
    r"(?:fix|implement|refactor|build|create|update|add|replace|switch|rewrite|change|modify"
    r"|introduce|extract|convert|move|rename|restructure|split|simplify|make|wrap|patch|adjust"
    r"|rework|migrate|consolidate|edit)(?:e?s|e?d|ing)?\b"
)
"""Verbs of a change to code or files (not of reading, searching or running them)."""
_MANNER = (
    # how: "by updating …", "into a reusable class", "using …", "with a …"
    r"\bby\s+\w+ing\b|\binto\s+an?\b|\busing\b|\bwith\s+an?\b"
    # what for: the behaviour the change gives the code ("to handle …", "to use …"); not a
    # step's own aim ("to see", "to document", "to ensure"), nor where a thing goes ("to the top")
    r"|\bto\s+(?:use|handle|support|accept|allow|skip|return|raise|throw|ignore|respect|store"
    r"|work|treat|pass|take|emit|load|call|reuse|share|cache|retry|wait|bypass|catch"
    # … or what it takes out of the code or puts in ("modify `x` to remove `y`")
    r"|remove|drop|exclude|include)\b"
    # what kind of thing it builds: a unit of its own, a property designed in
    r"|\ban?\s+(?:new\s+)?(?:dedicated|separate|shared|common|single|generic|reusable|standalone"
    r"|central\w*|unified|helper)\b|\b\w+-(?:free|safe|based|aware|only)\b"
    # a plan already agreed
    r"|\bas (?:specified|described|planned|suggested|discussed|agreed|requested)\b"
)
"""How the change is made or what it is for: what makes the step a choice."""
_ITEM = r"(?:[-*\u2022]\s+|\d+[.)]\s+)?"
"""A list's bullet or number: a plan's step says its approach the same way."""
_WORDS = r"(?:`[^`\n]*`|[^.!?:;`])*?"
"""What lies between the change and its manner, in one clause; a code span's dots and colons
(``src/app.py``, ``a::b``) end no sentence."""
_APPROACH = re.compile(rf"{_ITEM}{_LEAD}{_SPEAKER}{_CHANGE}{_WORDS}(?:{_MANNER})", re.I)
_OBJECT = re.compile(
    r"`[^`\n]+`|\w[\w.-]*/[\w./-]+|\b\w+\.[a-z]{1,5}\b|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*"
    r"|\b\w+_\w+"
    r"|\b(?:function|method|class|module|file|command|script|test|component|hook|helper|flag"
    r"|option|argument|parameter|field|table|endpoint|config\w*|service|schema|interface|type"
    r"|variable|constant|query|loop|handler|database|layer|package|workflow|condition|mock"
    r"|fixture|launcher|template)s?\b"
)
"""A concrete thing changed: a code span, a path or file name, an identifier (``camelCase``,
``PascalCase``, ``snake_case``), or a noun naming a part of a program."""


def states_approach(unit: str) -> bool:
    """Whether ``unit`` says, in the first person, which change the assistant makes to what
    and how or what for ("Let me fix the mock database to generate proper UUIDs"); a curly
    apostrophe counts as a straight one."""
    said = unit.replace("\u2019", "'")
    return _APPROACH.match(said) is not None and _OBJECT.search(said) is not None
