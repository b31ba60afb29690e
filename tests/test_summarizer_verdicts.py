"""A verdict on a hypothesis or a fix outlasts narration of the next step that carries a reason.

A debugging session revises its diagnosis ("Diagnosis confirmed", "So my diagnosis was
incomplete", "X was the missing piece", "the proposed fix wouldn't help"); the shapes below are
those of a Claude Code session of other people (benchmarks/fresh_probes32, entireio/git-sync,
MIT), the words ours, in each language the decision signals cover.
"""

from __future__ import annotations

import pytest

from contextwarden.model import Message
from contextwarden.summarizers.decisions import decisions, standing
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.tokens.heuristic import HeuristicCounter

COUNTER = HeuristicCounter()


@pytest.mark.parametrize(
    "line",
    [
        "Diagnosis confirmed exactly. The trace shows the pooled socket was idle for 13 seconds.",
        "So my diagnosis was **incomplete**: the idle pool was a real bug, but not this failure.",
        "Confirmed — the length header was the missing piece for the upload to go through.",
        "The proposed fix — buffering the body to a file — wouldn't help at all here.",
        "The retry loop turned out to be a red herring; the proxy drops the request itself.",
        "The stale pool was a real bug, but it wasn't the bug causing this particular failure.",
        "Гипотеза подтвердилась: соединение закрывается после тринадцати секунд простоя.",
        "Confirmado: la cabecera de longitud era la pieza que faltaba para la subida.",
        "O diagnóstico estava incompleto: o pool antigo era um bug real, mas não este.",
        "Le diagnostic est confirmé : la connexion inactive est fermée par le proxy.",
        "Die Vermutung war falsch: der Proxy schließt die Verbindung schon vorher.",
        "诊断得到证实\uff1a代理在空闲十三秒后关闭了连接。",
    ],
)
def test_a_verdict_on_a_hypothesis_or_a_fix_ranks_with_the_reasons(line: str) -> None:
    assert standing(line) == 2


@pytest.mark.parametrize(
    "line",
    [
        "If the second run succeeds with the change → diagnosis confirmed, and we move on.",
        "What you should see in the trace if my hypothesis is right about the pool:",
    ],
)
def test_a_verdict_under_a_condition_is_not_given_yet(line: str) -> None:
    assert standing(line) < 2


@pytest.mark.parametrize(
    "line",
    [
        "Good question — let me actually read the planner code instead of speculating.",
        "Builds and tests clean. Let me commit this separately so the diagnostic is isolated:",
        "Давайте проверим трассировку ещё раз, чтобы не гадать, потому что пул мог измениться.",
        "Vamos a revisar el código del planificador en lugar de especular sobre el pool.",
        "让我先看看规划器的代码\uff0c因为不想凭空猜测。",
    ],
)
def test_a_reason_for_a_narrated_next_step_ranks_with_the_diagnoses(line: str) -> None:
    assert standing(line) == 1


def test_an_intention_with_its_reason_is_a_choice() -> None:
    assert standing("I'll keep the pool off by default, since the CLI runs once per sync.") == 2


def test_a_verdict_is_ranked_not_read_as_a_decision_of_its_own() -> None:
    """Its signal is what makes it a decision: a verdict adds none (a new line in every summary
    displaced other findings at the room's edge, docs/benchmarks.md)."""
    assert decisions("Diagnosis confirmed exactly. The key lines are below.") == []


def test_the_verdict_outlasts_the_narrated_step() -> None:
    """Said later, the narrated step would have outlasted the verdict before: now it goes
    first."""
    verdict = "So my diagnosis was incomplete: the idle pool was a real bug, but not this one."
    step = "Builds clean. Let me commit this separately so the trace addition is isolated."
    messages = [Message.user("Why does the push fail?"), Message.assistant(verdict)]
    messages += [Message.user("Go on."), Message.assistant(step)]
    messages += [Message.user("And then?"), Message.assistant("Done.")]
    full = StructuredSummarizer().summarize(messages).text
    assert verdict in full and step in full
    for budget in range(COUNTER.count_text(full), 0, -5):
        text = StructuredSummarizer(budget_tokens=budget).summarize(messages).text
        if step not in text:
            assert verdict in text
            return
    raise AssertionError("the step was never dropped")
