"""How the assistant gives its verdict on a hypothesis or a fix, in the languages the sessions are
written in: "Diagnosis confirmed.", "So my diagnosis was incomplete", "Confirmed — X was the
missing piece", "The proposed fix wouldn't help at all", "it wasn't the bug causing this".

A debugging session revises what it believes several times; each verdict says which belief
stands, and the newest is the one a summary must keep. The phrasing classes: a diagnosis,
hypothesis or theory said to be confirmed, right, wrong or incomplete; a confirmation opening the
sentence; the piece found missing, or a lead found false (a "red herring"); a fix that would not
help, or a cause that was not the one. Each language's own words for them: Russian, Spanish,
Portuguese, French, German (words with spaces between them), Chinese, Japanese, Korean (none).
A verdict under a condition ("If it succeeds → diagnosis confirmed") is not given yet.

A verdict ranks a decision (``decisions.standing``); it makes no line a decision of its own:
read so, the verdicts took room in every summary of a study set and pushed a finding at the
findings' room's edge out (docs/benchmarks.md, "Verdicts over narration").
"""

from __future__ import annotations

import re

from contextwarden.summarizers.sentences import sentences

_WORDED = (
    # English: a hypothesis judged ("my diagnosis was **incomplete**", "Diagnosis confirmed")
    r"(?:diagnos[ie]s|hypothes[ie]s|theory|suspicion|assumption|framing)\s"
    r"(?:(?:is|was|were|are|has been|had been|proved|turned out|seems)\s)?(?:\w+ly\s)?\**"
    r"(?:confirmed|validated|verified|right|correct|wrong|incorrect|incomplete|mistaken|refuted"
    r"|disprov\w+)"
    # … the piece found missing, a false lead, a fix that would not help, a cause that was not it
    r"|missing (?:piece|link)|red herring"
    r"|(?:would|will|does|did|could)(?:n't| not)(?: (?:have|really|actually|even))*"
    r" (?:help|fix|solve)"
    r"|(?:is|was)(?:n't| not) (?:the|what) (?:\w+ )?(?:cause|culprit|problem|issue|bug)"
    # Russian
    r"|(?:диагноз|гипотез\w*|предположени\w*) (?:был\w* |оказал\w* )?(?:подтвердил\w*"
    r"|подтвержд\w*|неверн\w*|ошибочн\w*|неполн\w*|верн\w*)"
    r"|не (?:помож\w+|помог\w*)|ложный след|недостающ\w+ (?:звено|част\w*)"
    # Spanish, Portuguese
    r"|(?:diagn[oó]stico|hip[oó]tesis|hip[oó]tese)"
    r" (?:es |era |fue |est[aá] |estaba |estava |é |foi )?"
    r"(?:confirmad\w*|validad\w*|correct\w*|corret\w*|incorrect\w*|incorret\w*|equivocad\w*"
    r"|errad\w*|incomplet\w*)"
    r"|no (?:ayudar[ií]a|ayuda|ayudar[aá]|ayud[oó])|n[aã]o (?:ajudaria|ajuda|ajudar[aá]|ajudou)"
    r"|pista falsa|pista errada|pieza que faltaba|pe[cç]a que faltava"
    # French, German
    r"|(?:diagnostic|hypoth[eè]se) (?:est |était |a été )?(?:confirm[eé]\w*|valid[eé]\w*"
    r"|correct\w*|incorrect\w*|erron[eé]\w*|incomplet\w*|faux|fausse)"
    r"|n'aiderait|n'aide pas|n'aidera|fausse piste|pi[eè]ce manquante"
    r"|(?:Diagnose|Hypothese|Vermutung) (?:ist |war |wurde )?(?:bestätigt|falsch|unvollständig"
    r"|richtig|korrekt)|(?:hilft|hülfe|helfen|half) (?:\w+ )?nicht|nicht (?:ge)?helfen"
    r"|falsche Fährte|fehlende (?:Puzzle)?(?:stück|Teil)"
)
_WIDE = (
    # Chinese, Japanese, Korean: a diagnosis or hypothesis confirmed, right, wrong or
    # incomplete; a fix that would not help; the missing piece
    r"诊断(?:得到|被)?(?:确认|证实|正确|错误|不完整)|假设(?:得到|被)?(?:确认|证实|成立|不成立|错误)"
    r"|无济于事|不会有帮助|没有帮助|缺失的一环"
    r"|診断(?:が|は)?(?:確認|正し|間違|誤|不完全)|仮説(?:が|は)?(?:確認|正し|間違|誤)|役に立たな"
    r"|진단(?:이|은)? ?(?:확인|맞|틀렸|불완전)|가설(?:이|은)? ?(?:확인|맞|틀렸)|도움이 되지 않"
)
_OPENING = r"confirmed|verified|validated|подтверждено|confirmado|confirmé|bestätigt|确认|確認|확인"
_CONDITIONAL = re.compile(
    r"\b(?:if|unless|whether|если|si|wenn|falls|ob)\b|如果|假如|もし|만약",
    re.I,
)
"""A condition before a verdict ("If it succeeds → hypothesis confirmed", "what you should see
if my hypothesis is right"): the verdict is the one a test would give, not given yet."""
_VERDICT = re.compile(
    rf"\b(?:{_WORDED})\b|{_WIDE}|^\W*(?:{_OPENING})(?:\s*[\u2014\u2013:.!,]|\s+-\s)",
    re.I,
)
"""A verdict on a hypothesis or a fix (see the module docstring)."""


def judges(unit: str) -> bool:
    """Whether ``unit`` gives a verdict on a hypothesis or a fix."""
    return any(
        (found := _VERDICT.search(sentence)) is not None
        and _CONDITIONAL.search(sentence, 0, found.start()) is None
        for sentence in sentences(unit)
    )
