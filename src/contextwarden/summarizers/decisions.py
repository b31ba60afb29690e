"""What the assistant decided or found, in its own words: the lines of its text a summary keeps.

A decision is a root cause found, an approach chosen, an alternative ruled out, a constraint kept.
Agents say these in the languages their users write, so the signals are listed for the
languages the sessions use: a reason or a choice (``_REASONS``), a diagnosis (``_DIAGNOSES``).
A conclusion the assistant draws from what it just read ("The `ImportError` confirms that …",
"The timeout suggests …", "It seems the wrapper …") is a diagnosis too. A short line is the
unit: the reason often sits in the sentence next to the conclusion ("The file uses tabs. My edit
strings were using spaces."), whole; of a long line, its sentences,
adjacent kept ones joined again while short, and a sentence too long to keep by its head and
last clause. Code is not the assistant's reasoning: of a code block only the comments are read.
A line that announces a plan or a fix ("Here's the plan:") makes the next few lines decisions
too, signal or not: they are the plan. So is what
an agent says in the message that edits a file, signal or not ("X is correct - it should still
check Y", "The rule is defined on line 651 as …"): it states the cause or the fix it is about to
write; only its announcements ("Now update the handler:") are not. A plan's or a review's
directive ("- Do not accept X", "Retain Y as …", "Replace X with Y", "Skip C for now"), an
option's heading too ("### 1. Swap X → Y"), is a choice, and a finding set
against what it is not ("X supports A, not B", "X starts, but Y") rules an alternative out, signal
word or not. A sentence that refers back ("That is no longer true", or has no subject: "Must be
handled in C") is kept with the one before it, and so is a verbless conclusion too short to stand
alone ("Quadratic over session length."); a verdict that short keeps the reason after it ("I was
incorrect in my assessment. Looking at X, I see a simpler approach"). Terse analysis states its
findings without signal words too: a negation set against a clause ("`x` only does A; it never
does B", "A doesn't do B — it does C"), a verdict on an option ("it's not fixable that way",
"works end-to-end"), a number measured before and after ("from 47s to 2s"), a line labelled as
the fix or the cause ("**Fix:** …", "Root cause: …"), and the lines under a heading that names
one ("## Root cause"). A question wonders, it has not concluded: it is none, whatever its words,
in bold or not ("**Shall I apply it now?**"). A step the assistant narrates is none either,
unless it states its approach: the change, what it changes and how or what for ("Let's fix this
by updating the `x` function to …": ``approaches``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contextwarden.summarizers.approaches import states_approach
from contextwarden.summarizers.caseless import Caseless
from contextwarden.summarizers.labels import HEADING as _HEADING
from contextwarden.summarizers.labels import LABELLED as _LABELLED
from contextwarden.summarizers.labels import NAMES_CONCLUSION as _NAMES_CONCLUSION
from contextwarden.summarizers.narration import FIRST_PERSON, LEAD, invites_step, narrates
from contextwarden.summarizers.prose import prose_lines
from contextwarden.summarizers.remembered import Remembered
from contextwarden.summarizers.sentences import (
    MAX_DECISION_CHARS,
    MIN_DECISION_CHARS,
    WHOLE_LINE_CHARS,
    clipped,
    line_units,
    sentences,
    weight,
)
from contextwarden.summarizers.verdicts import judges

PLAN_LINES = 4
"""Lines after a line announcing a plan (``_PLAN``, a colon at its end) kept as decisions."""
EDIT_UNITS = 3
"""Lines (or sentences) without a signal kept of the text of a message that edits a file: the
last ones, nearest the edit."""

_REASONS = (
    # English: a reason; a choice, or an alternative ruled out
    r"because|since|so that|to avoid|to prevent|otherwise|due to|which means|so (?:we|it|the|that)"
    r"|as it"
    r"|given that|that's why|hence|therefore"
    r"|instead|rather than|decid\w*|chose|choose|prefer\w*|better (?:to|than|approach|option)"
    r"|simplest|cleanest|safest|approach|the plan|go(?:ing)? (?:ahead )?with|switch(?:ed|ing)? to"
    r"|falls? back|fallback|quick fix|long-term|workaround|trade-?off|no need|not needed"
    r"|need to keep|constraint"
    # … a purpose, a choice ruled out, the option judged right or safer
    r"|in order to|regardless|safer|the right (?:way|approach|fix|call|place)"
    r"|should(?:n't| not)|we should"
    # … a step made unnecessary by the way chosen ("via SSH, bypassing the need for SCP")
    r"|(?:bypass|avoid|eliminat|remov|obviat|skipp)\w* the need"
    # Russian ("а не": "X, not Y", the alternative ruled out)  # noqa: RUF003
    r"|потому что|так как|поэтому|из-за|вместо|решил\w*|решени\w*|лучше|не нужно|следует"
    r"|а не"  # noqa: RUF001
    # Spanish, Portuguese
    r"|porque|ya que|debido a|en lugar de|en vez de|em vez de|ao invés de|decid\w*|mejor|melhor"
    r"|para evitar|más seguro|mais seguro"
    r"|por eso|por isso"
    # French, German
    r"|parce que|puisque|au lieu de|plutôt que|décid\w*|pour éviter|plus sûr|weil|deshalb|daher"
    r"|statt|anstatt"
    r"|stattdessen|entschieden|besser"
)
_DIAGNOSES = (
    # English
    r"(?:the|this|that|same|real|root) (?:\w+ )?"
    r"(?:issue|problem|bug|cause|culprit|reason|difference)"
    r"|root cause|turn(?:s|ed) out|accidentally|by mistake|wrong|broken|overrid\w*|mismatch\w*"
    r"|conflict\w*|unrelated|missing|looks like|seems to|appears to|caused by"
    r"|comes from|never (?:called|set|reached|runs?|fires?|gets?|returns?|awaited|used)"
    r"|(?:is|was|are|were)(?:n't| not) (?:being |actually )?(?:called|set|passed|used|loaded"
    r"|defined|reached|awaited|exported|registered|triggered|applied)"
    r"|already (?:in use|taken|exists|running|bound)|out of date|leftover"
    r"|(?:is|was|are|were) too (?:narrow|broad|strict|loose|early|late|small|large|short|long"
    r"|slow|old|new|many|few)|changed from\b"
    r"|(?:that|this|which) explains|explains? why|no longer|matches the symptoms?"
    r"|causes|causing|(?:made|make) a mistake|mistaken(?:ly)?|not (?:quite )?right|unfortunately"
    r"|too (?:broad|narrow|strict|loose)"
    # what the evidence shows: a conclusion drawn from what was just read
    r"|confirm(?:s|ed)? that|(?:this|which|that|it) confirms|suggest(?:s|ing)"
    r"|indicat(?:es|ing) that|it seems"
    # Russian, Spanish, Portuguese, French, German
    r"|причин\w*|проблем\w*|ошибк\w*|баг\w*|оказалось|похоже|видимо|значит"  # noqa: RUF001
    r"|la causa|a causa|el problema|o problema|la cause|le problème|ursache|das problem"
    r"|der fehler|parece que|resulta que|il semble|on dirait|scheint|sieht so aus|liegt an"
    # … and what the evidence shows: "confirms", "suggests", "indicates"
    r"|подтвержда\w*|указывает на|confirma que|sugiere|sugere|indica que|confirme que|suggère"
    r"|bestätigt|deutet darauf hin"
)
_WIDE_REASONS = (
    # Chinese, Japanese, Korean: no word boundaries to anchor on. A reason ("because",
    # "therefore", "in order to"), a choice ("decided", "adopt", "rather than", "better to",
    # "should", "not needed"); a purpose ("so that", "so as not to": 以便, 以免)
    r"因为|所以|由于|因此|为了|以便|以免|而不是|而是|改为|改用|决定|选择|采用|更好|应该|不需要"
    r"|避免"
    r"|ため|なので|ので、|なぜなら|そのため|したがって|代わりに|ではなく|よりも|決め|ことにし"
    r"|採用|方が良い|ほうが良い|方がいい|ほうがいい|べき|不要|必要があ"
    r"|때문|대신|결정|그래서|따라서|으로 인해|선택|채택|보다는|필요 없"
)
_WIDE_DIAGNOSES = (
    # a cause found, something missing, wrong or in conflict, what turned out to be so, what
    # the evidence shows ("shows", "confirms": 表明, 证实)
    r"原因|问题|導致|导致|問題|원인|문제|看起来|似乎|原来|发现|缺少|冲突|没有被|表明|证实"
    r"|误|ようです|みたい|判明|バグ|競合|間違|誤|不足|足りな|ことが分か|ことがわか|されていな"
    r"|것 같|누락|충돌|잘못"
)
_DIRECTIVE = re.compile(
    r"(?:#{1,6}\s+)?(?:[-*\u2022]\s+|\d+[.)]\s+)?(?:\*\*)?(?:(?:so|then),?\s+)?"
    r"(?:do not|don't|never|avoid|retain|keep|replace|swap|remove|drop|skip)\b",
    re.I,
)
"""A plan's or a review's directive ("- Do not accept X", "Retain Y as …", "Replace X with Y",
"Swap X for Y", "Remove …", "Skip C for now"): a choice made, an alternative ruled out, with no
signal word; an option's heading too ("### 1. Swap X → Y": a Markdown ATX heading opens with one
to six ``#`` and a space, CommonMark 0.31 section 4.2)."""
_CONTRAST = re.compile(r"\S,\s(?:not\s|but\s(?!I\b|I'|let\b|we'll\b|be careful))")
"""A finding set against what it is not ("X supports A, not B", "X supports A, but B"): the
alternative it rules out or the limit it found; not the agent's own caution ("…, but I'll
check first")."""
_NEGATION = re.compile(r"\b(?:not|never|cannot|no longer|only)\b|n't\b", re.I)
_CLAUSE_BREAK = re.compile(r"\s[\u2014\u2013]\s|;\s")
"""A dash or a semicolon between two clauses. With a negation or a limit (``_NEGATION``) they
say what a thing does not do beside what it does ("`x` only does A; it never does B", "A doesn't
make B async — it makes loading lazy", "N codes — cannot flow through C"); not when a clause
says what the assistant does next ("I haven't run it yet — let me do that")."""
_VERDICT = re.compile(
    r"\b(?:not|n't|never)\s(?:\w+\s)?(?:fixable|possible|feasible|viable|workable|load-bearing)\b"
    r"|(?:\b(?:not|never|cannot)|n't)\s(?:\w+\s)?work\b"
    r"|\bworks?\s(?:end-to-end|as (?:expected|intended))",
    re.I,
)
"""A verdict on an option or a result ("it's not fixable that way", "can't work", "works
end-to-end")."""
_MEASURED = re.compile(
    r"\bfrom\s(?:\S+\s){0,2}?~?\d[\d.,]*(?:%|[^\W\d_]+)[^.;]{0,40}?\bto\s(?:\S+\s){0,2}?~?\d"
    r"|(?<!\d)(?<!\d[.,])\d[\d.,]*(?:%|[^\W\d_]+)\s?(?:\u2192|->)\s?~?\d",
    re.I,
)
"""A quantity measured before and after a change, its unit on the number ("took it from a 47s
wedge to a 2s pass", "3.1s → 0.4s", "from 40% to 5%"); a bare range ("from 1 to 50") is not
one. The arrow's number starts where a number does (not after a digit, nor after a digit and
its separator), so a run of digits is read once, not once from each of its digits."""
_BACK_REFERENCE = re.compile(
    r"(?:That|This|It|Which)\b|(?:Must|Should|Cannot|Can't|Needs? to|Has to|Have to)\s"
    # the same pronouns in the sessions' other languages: Russian, Spanish, Portuguese, French,
    # German
    r"|(?:Это|Esto|Eso|Isso|Isto|Cela|Ceci|Ça|Dies(?:es)?)\b"
)
"""A sentence opening so ("That is no longer true", French "Cela devrait résoudre …") says
nothing without the one before it; nor does one with no subject ("Must be handled in the
writer, not the resolver"): it is the one before it that names what it is about."""
_QUESTION_MARKS = ("?", "\uff1f")
"""How a question ends (ASCII, and the full-width mark of Chinese and Japanese)."""
_EMPHASIS = "*_"
"""The characters that open and close emphasis in Markdown (CommonMark 0.31, section 6.2:
"emphasis and strong emphasis" are delimited by runs of ``*`` or ``_``): a question set in bold
("**Shall I apply it now?**") ends with them, after its question mark."""
_REASONED = Caseless(rf"\b(?:{_REASONS})\b|{_WIDE_REASONS}")
_SIGNALS = Caseless(rf"\b(?:{_REASONS}|{_DIAGNOSES})\b|{_WIDE_REASONS}|{_WIDE_DIAGNOSES}")
_IMPERATIVES = (
    r"(?:add|update|fix|change|create|write|remove|replace|edit|apply|make|move|rename"
    r"|insert|implement|run|check|read|look)\b"
)
_ANNOUNCEMENT = re.compile(rf"{LEAD}(?:{FIRST_PERSON}|{_IMPERATIVES})", re.I)
"""A sentence that only says what comes next ("Now update the handler:", "Let me add the
test"): of a message that edits a file, not a decision unless it gives a signal."""
_PLAN = Caseless(
    r"\b(?:plan|approach|fix|solution|steps|план\w*|подход\w*|исправлени\w*|solución|enfoque"
    r"|solução|abordagem|correção|correctif|lösung|ansatz)\b|方案|计划|修复|計画|方針|修正|계획|해결"
)


def labelled(decision: str) -> bool:
    """Whether ``decision`` is a line its author labels as the cause or the choice
    ("**Root cause:** …", "**Execution Strategy:** …")."""
    return _LABELLED.match(decision) is not None


def decisions(text: str, *, edits: bool = False) -> list[str]:
    """The lines (or, of a long line, the sentences) of an assistant's text that give a reason,
    name a choice or state a diagnosis, or follow a line announcing a plan; outside code blocks,
    verbatim, stripped. ``edits``: the text is that of a message that edits a file, whose last
    ``EDIT_UNITS`` lines or sentences that announce nothing are decisions too."""
    return list(_decided(text, edits))


def _decide(text: str, edits: bool) -> tuple[str, ...]:
    """``decisions``, worked out."""
    found: list[_Unit] = []
    plan_left = 0
    for number, line in enumerate(prose_lines(text)):
        announces = _announces(line)
        units = line_units(line)
        for at, (before, unit) in enumerate(zip(["", *units], units, strict=False)):
            kept = unit.strip()
            last = found[-1] if found else None
            follows = last is not None and last.ends(number, at - 1)
            if last is not None and follows:
                joined, first = f"{last.text} {kept}", last.first
            else:
                joined, first = f"{before.strip()} {kept}", at - 1
            if (
                last is not None
                and follows
                and _too_short_alone(kept)
                and len(joined) <= MAX_DECISION_CHARS
            ):
                found[-1] = _Unit(joined, last.signal, number, first, at)  # "… Quadratic."
            elif weight(kept) >= MIN_DECISION_CHARS:
                signal = (bool(plan_left) and not _HEADING.match(kept)) or _signalled(kept)
                if not signal and _approach(kept):
                    kept, signal = _without_steps(kept), True
                if (
                    signal
                    and before
                    and (_BACK_REFERENCE.match(kept) or _leads_in(before, kept, follows))
                    and len(joined) <= MAX_DECISION_CHARS
                ):
                    if follows:
                        found.pop()  # said again below, with the sentence that refers to it
                    kept = joined
                else:
                    first = at
                if signal or (edits and _ANNOUNCEMENT.match(kept) is None):
                    _add(found, _Unit(clipped(kept), signal, number, first, at))
        plan_left = PLAN_LINES if announces else max(0, plan_left - 1)
    unsignalled = [i for i, unit in enumerate(found) if not unit.signal]
    dropped = set(unsignalled[: max(0, len(unsignalled) - EDIT_UNITS)])
    return tuple(unit.text for i, unit in enumerate(found) if i not in dropped)


_decided = Remembered(_decide)
"""An assistant's text (and its reasoning) is read again at every compaction of its session:
the loss report reads every message from the first one changed, the summary every one it
replaces (``summarizers.remembered``)."""


@dataclass(frozen=True, slots=True)
class _Unit:
    """A decision found: its text, whether a signal marked it, and the sentences of its line it
    spans (``first`` to ``last``, by position in the line's ``sentences.line_units``)."""

    text: str
    signal: bool
    line: int
    first: int
    last: int

    def ends(self, line: int, at: int) -> bool:
        """Whether this unit ends with sentence ``at`` of line ``line``."""
        return self.line == line and self.last == at


def _add(found: list[_Unit], unit: _Unit) -> None:
    """Append ``unit``, or join it to the unit before it when that one ends with the sentence
    just before it on the same line and the two fit in ``WHOLE_LINE_CHARS``: a long line's
    sentences that are each decisions read as the short line they would be ("`x` is ignored —
    CI resolves fresh. The test changes are the fix.")."""
    last = found[-1] if found else None
    if (
        last is not None
        and last.ends(unit.line, unit.first - 1)
        and len(last.text) + 1 + len(unit.text) <= WHOLE_LINE_CHARS
    ):
        text = f"{last.text} {unit.text}"
        found[-1] = _Unit(text, last.signal or unit.signal, unit.line, last.first, unit.last)
    else:
        found.append(unit)


def _announces(line: str) -> bool:
    """Whether the lines after ``line`` are a plan's steps or its conclusions: it introduces a
    plan or a fix (a colon at its end), or it is a heading naming a plan, a cause or a choice."""
    if line.endswith(":") and _PLAN.search(line):
        return True
    named = _PLAN.search(line) or _NAMES_CONCLUSION.search(line)
    return named and _HEADING.match(line) is not None


def _too_short_alone(unit: str) -> bool:
    """Whether ``unit``, a sentence beside a kept one on the same line, is a conclusion too
    short to stand alone: after it ("Quadratic over session length.") or before it, the verdict
    the next sentence gives the reason for ("Didn't reorder the docstring. The audit's claim was
    refuted during verification"); it belongs to that one."""
    short = 0 < weight(unit) < MIN_DECISION_CHARS
    return short and unit.endswith((".", "!")) and not narrates(unit)


def _leads_in(before: str, decision: str, follows: bool) -> bool:
    """Whether ``before``, the sentence before ``decision`` on the same line, is the verdict
    that decision gives the reason for (``_too_short_alone``): not when a decision holds it
    already, nor before what the assistant does next (a verdict is not a step's reason)."""
    return not follows and _too_short_alone(before.strip()) and not narrates(decision)


def _approach(unit: str) -> bool:
    """Whether ``unit`` states the approach of a step (``approaches``); not a question."""
    return not asks(unit) and states_approach(unit)


def approach_only(decision: str) -> bool:
    """Whether ``decision`` is a decision only as the approach a step states (``approaches``):
    no signal of a reason, a choice or a diagnosis."""
    return _approach(decision) and not _signalled(decision)


def _without_steps(approach: str) -> str:
    """``approach`` without the sentences beside it that only narrate the next step ("I'll
    consolidate to use only `X` everywhere. Let me update the files:")."""
    return " ".join(s for s in sentences(approach) if _approach(s) or not narrates(s))


def _signalled(unit: str) -> bool:
    """Whether ``unit`` gives a signal of a decision; a question gives none, whatever its
    words ("Maybe `x` adds it regardless?"): it wonders, it has not concluded."""
    return not asks(unit) and (
        _SIGNALS.search(unit)
        or _DIRECTIVE.match(unit) is not None
        or labelled(unit)
        or _CONTRAST.search(unit) is not None
        or _VERDICT.search(unit) is not None
        or _MEASURED.search(unit) is not None
        or _negates_beside(unit)
    )


def asks(unit: str) -> bool:
    """Whether ``unit`` is a question: it ends with a question mark, in bold or italics or not
    (``_EMPHASIS``: "**Do you want to keep these lines, or would you prefer X?**")."""
    return unit.rstrip(_EMPHASIS).endswith(_QUESTION_MARKS)


def _negates_beside(unit: str) -> bool:
    """A negation or a limit, another clause beside it, none narrating (``_CLAUSE_BREAK``)."""
    clauses = _CLAUSE_BREAK.split(unit)
    return (
        len(clauses) > 1
        and _NEGATION.search(unit) is not None
        and not any(
            narrates(clause.strip()) or clause.strip().startswith("I ") for clause in clauses
        )
    )


def standing(decision: str) -> int:
    """How long a short budget keeps ``decision``: 2 when it gives a verdict on a hypothesis or
    a fix (``verdicts``), or gives a reason or names a choice or the author labels it as the fix
    or the cause (the densest kind), 1 when it states a diagnosis or a finding, or gives its
    reason only for the step it invites ("Let me commit this separately so …": the reason is
    the step's, and the step is done next), 0 when it has no signal at all (a plan's step, what
    a message that edits a file says): the lower goes first. A step's stated approach ranks
    apart (``approach_only``)."""
    if (
        judges(decision)
        or _DIRECTIVE.match(decision)
        or labelled(decision)
        or _REASONED.search(_uninvited(decision))
    ):
        return 2
    return 1 if _signalled(decision) else 0


def _uninvited(decision: str) -> str:
    """``decision`` without its sentences, or clauses after a dash or a semicolon, that invite
    the next step (``narration.invites_step``: "Builds clean. Let me commit …", "Good question —
    let me read …")."""
    return " ".join(
        clause
        for sentence in sentences(decision)
        for clause in _CLAUSE_BREAK.split(sentence)
        if not invites_step(clause.strip())
    )
