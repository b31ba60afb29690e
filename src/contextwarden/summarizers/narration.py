"""The assistant saying what it does next ("Let me check …", "Now I'll run …", "I'm reading
the tests"): a step narrated, which ``decisions`` and ``findings`` tell from what was concluded.
"""

from __future__ import annotations

import re

LEAD = r"(?:(?:good|great|perfect|ok(?:ay)?|now|next|then|finally|also|first)\b[,!.]?\s*)*"
"""Words a narrated step may open with before its verb ("Good, now let me …", "Next, I'll …")."""
FIRST_PERSON = (
    r"let me|let's|let us|I'll|I will|I need to|I'm going to|I am going to|time to|now\b"
    # Russian, Spanish, Portuguese, French, German, Chinese, Japanese, Korean
    r"|(?:теперь|давайте|сейчас|ahora|vamos a|voy a|agora|vou|maintenant|je vais|jetzt"
    r"|ich werde)\b|现在|让我|接下来|では|次に|이제|다음"
)
"""How the assistant says it does something next, in the sessions' languages."""
_NARRATION = re.compile(rf"{LEAD}(?:{FIRST_PERSON}|I'm \w+ing\b|I am \w+ing\b)", re.I)
"""A sentence in which the assistant says what it does next ("Let me check …", "I'm reading
the tests"); a bare imperative ("Replace X with Y.") is not one: in a plan it is a decision."""
_STEP = re.compile(
    rf"{LEAD}(?:(?:let me|let's|let us|давай(?:те)?|vamos a|vamos|allons|lass (?:mich|uns))\b"
    r"|让我|我们来)",
    re.I,
)
"""A sentence that invites the next step ("Let me check …", "Давайте проверим", "Vamos a
revisar", "Allons voir", "Lass mich prüfen", "让我看看"): what follows it is what the assistant
does now, not what it concluded; an intention ("I'll keep X as the default because …") says a
choice."""


def narrates(unit: str) -> bool:
    """Whether ``unit`` opens by saying what the assistant does next ("Let me check …", "Now
    I'll run …", "I am reading …"); a curly apostrophe counts as a straight one."""
    return _NARRATION.match(unit.replace("\u2019", "'")) is not None


def invites_step(unit: str) -> bool:
    """Whether ``unit`` opens by inviting the next step (``_STEP``); a curly apostrophe counts
    as a straight one."""
    return _STEP.match(unit.replace("\u2019", "'")) is not None
