"""How an author labels a line or a section as the cause found or the choice made, in the languages
the sessions are written in: "**Root cause:** …", "**Решение:** …", "**Causa raiz:** …", "原因"
and a full-width colon.

A label is Markdown's structure, not the sentence's words: a bold lead or a line's first words
ending in a colon, or a heading ("## Root cause", "## Причина", "## 结论"). Languages put the
qualifier on either side of the noun: English and Russian before it ("Root cause", "Корневая
причина"), Portuguese, Spanish and French after it ("Causa raiz", "Solução proposta"), Chinese
and Japanese before it with no space ("根本原因", "対応方針"). A colon may be the full-width one
of Chinese and Japanese (U+FF1A), and French sets a space before it ("Cause : …").
"""

from __future__ import annotations

import re

from contextwarden.summarizers.caseless import Caseless

_ENGLISH = (
    r"cause|fix|decision|verdict|conclusion|diagnosis|solution|approach|strategy|choice|problem"
    r"|issue"
)
"""The labels of English, as the sessions write them ("**Fix:**", "Root cause:")."""
_WORDED = (
    # Russian: cause, solution, fix, conclusion, diagnosis, approach, problem, strategy
    r"причин[аы]|решени[ея]|исправлени[ея]|вывод|диагноз|подход|проблем[аы]|стратеги[яи]"
    # Portuguese, Spanish
    r"|causa|solu[cç][aã]o|soluci[oó]n|corre[cç][aã]o|correcci[oó]n|decis[aã]o|decisi[oó]n"
    r"|conclus[aã]o|conclusi[oó]n|diagn[oó]stico|abordagem|enfoque|problema|estrat[eé]gia"
    # French (cause, solution, conclusion are the English words), German
    r"|correctif|d[eé]cision|diagnostic|approche|probl[eè]me|strat[eé]gie"
    r"|Ursache|L[oö]sung|Korrektur|Entscheidung|Fazit|Diagnose|Ansatz|Strategie"
)
"""The same labels in the other languages written with spaces between words."""
_WIDE = (
    # Chinese, Japanese: cause, solution, fix, decision, conclusion, diagnosis, plan, policy,
    # problem, strategy
    r"原因|根因|解决方案|解决办法|解決策|解決方法|对策|対策|修复|修正|决定|決定|结论|結論|诊断"
    r"|診断|方案|方针|方針|问题|問題|策略|戦略"
    # Korean
    r"|원인|해결책|해결 방법|수정|결론|결정|문제|전략|방침"
)
"""The same labels in Chinese, Japanese and Korean."""
_WIDE_QUALIFIER = r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{0,6}"
"""What qualifies a wide label before it, with no space ("根本原因", "対応方針", "最关键的原因")."""
_BOLD = r"(?:\*\*|__)"
LABELLED = re.compile(
    rf"(?:[-*\u2022]\s+)?{_BOLD}?"
    rf"(?:(?:[^\W\d_]+[ -])?(?:{_ENGLISH})"
    rf"|(?:[^\W\d_]+[ -])?(?:{_WORDED})(?:[ -][^\W\d_]+)?"
    rf"|{_WIDE_QUALIFIER}(?:{_WIDE}))"
    rf"{_BOLD}?\s?[:\uff1a]{_BOLD}?\s*\S",
    re.I,
)
"""A line the author labels as the cause or the choice ("**Fix:** new option that …", "Root
cause: …", "**Решение:** …", "**Causa raiz:** …", "**问题**" and a full-width colon), the label
perhaps qualified by a word ("**Execution Strategy:** sequential, one agent"): a decision by its
author's own word."""
HEADING = re.compile(r"#{1,6}\s|(?:\*\*|__)[^*_]+(?:\*\*|__)[:\uff1a]?$")
"""A Markdown heading, or a line that is bold only ("**Root cause**"): it names what the lines
under it are about, and says nothing itself unless a signal does (not a plan's step)."""
NAMES_CONCLUSION = Caseless(
    r"\b(?:(?:root\s)?causes?|diagnos\w+|decisions?|decided|conclusions?|verdict|findings?|why"
    # Russian, Portuguese, Spanish, French, German: cause, conclusion, decision, diagnosis, why
    r"|причин\w*|вывод\w*|решени\w*|почему|causas?|conclus\w+|decis\w+|d[eé]cision\w*|diagn\w+"
    r"|por ?qu[eé]|pourquoi|ursache\w*|fazit|entscheidung\w*|warum)\b"
    # Chinese, Japanese, Korean
    r"|原因|根因|结论|結論|决定|決定|诊断|診断|为什么|なぜ|원인|결론|결정"
)
"""What a heading names when the lines under it state a cause or a choice ("## Root cause",
"### Decided approach", "**Why it fails**", "## Причина", "## 结论"), beside a plan's words."""
