"""Decisions a summary left out or cut in two: a sentence an abbreviation's full stop split, a
sentence that refers back in French or Russian, a step made unnecessary by the way chosen, and
the difference found between two ways."""

from __future__ import annotations

import pytest

from contextwarden.summarizers.decisions import decisions, standing
from contextwarden.summarizers.sentences import sentences

FILLER = "This sentence only describes what was read in the file, nothing more. " * 2


@pytest.mark.parametrize("abbreviation", ["etc.", "e.g.", "i.e.", "vs.", "cf.", "incl.", "approx."])
def test_an_abbreviation_before_a_word_in_lower_case_ends_no_sentence(abbreviation: str) -> None:
    said = f"It accepts A, B {abbreviation} but the parser rejects them."
    assert sentences(f"{said} Then it stops.") == [said, "Then it stops."]
    assert sentences(f"It accepts A, B {abbreviation} Then it stops.") == [
        f"It accepts A, B {abbreviation}",
        "Then it stops.",
    ]


def test_a_verdict_before_a_sentence_with_an_abbreviation_is_kept_with_it() -> None:
    verdict = "So 'OB' has the same issue!"
    finding = (
        "The PR says it works with 'OB', 'OF' etc. but that's not true - they all have "
        "the same issue."
    )
    assert decisions(f"{verdict} {finding} {FILLER}") == [f"{verdict} {finding}"]


@pytest.mark.parametrize(
    ("said", "refers"),
    [
        (
            "Ce validateur convertit une chaîne vide en une liste vide pour ces champs.",
            "Cela devrait résoudre le problème de validation que vous rencontrez.",
        ),
        (
            "Валидатор превращает пустую строку в пустой список для этих полей.",
            "Это решает проблему валидации, которую вы видели.",
        ),
    ],
)
def test_a_sentence_that_refers_back_in_another_language_keeps_the_one_before(
    said: str, refers: str
) -> None:
    assert decisions(f"{FILLER}{said} {refers}") == [f"{said} {refers}"]


def test_a_step_the_way_chosen_makes_unnecessary_is_a_choice() -> None:
    line = "I'll run the script on the router via SSH, bypassing the need for SCP."
    assert decisions(f"Reading the file now.\n{line}") == [line]
    assert standing(line) == 2


def test_the_difference_found_between_two_ways_is_a_finding() -> None:
    line = (
        "The key difference is that the `startSession.ts` file is designed with dependency "
        "injection, making it easy to mock its dependencies:"
    )
    assert decisions(f"Reading the file now.\n{line}") == [line]
    assert standing(line) == 1
