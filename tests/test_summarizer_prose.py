"""The assistant's own lines: a code block's comments, a diff's added lines only, nothing a
SpecStory ``<details>`` element folds into a turn (a search's hits) unless asked for."""

from __future__ import annotations

from conftest import summary_message

from contextwarden.model import Message
from contextwarden.summarizers import StructuredSummarizer, extract_facts
from contextwarden.summarizers.carry import HIT_PREFIX, carried_findings, carried_hits
from contextwarden.summarizers.decisions import decisions
from contextwarden.summarizers.findings import (
    FOLDED,
    LEAD_FINDINGS,
    chosen,
    findings,
    folded_findings,
)
from contextwarden.summarizers.prose import prose_lines
from contextwarden.tokens.heuristic import HeuristicCounter

# A Cursor agent turn as SpecStory's early-2025 layout exports it: an edit as a bare diff fence,
# then a search folded into a <details> element over a table of hits.
CURSOR_TURN = """Now we need to update the handler to accept these dependencies:

---

```diff
    try {
      // Resolve the root because the caller may pass a nested path
-     const root = await find(path);
+     // Injected so the tests can replace it, since mocking the module fails under Bun
+     const root = await findFn(path);
```

---

<details>
            <summary>Grep search for "findFn" • **2** files</summary>

| File | Line | Match |
|------|------|-------|
| `file:///repo/src/handler.ts` | L12 | `// Injected because the old mock broke, so we pass it in` |
| `file:///repo/src/handler.test.ts` | L40 | `const findFn = mock(() => "/repo");` |

</details>

---

The handler now takes `findFn`, so the tests no longer depend on module mocking.
"""


def test_a_diff_gives_its_added_comments_not_the_context_of_the_file_as_it_was() -> None:
    lines = prose_lines(CURSOR_TURN)
    assert "// Injected so the tests can replace it, since mocking the module fails under Bun" in (
        lines
    )
    assert not any("Resolve the root" in line for line in lines)
    assert not any("await find" in line for line in lines)


def test_a_folded_search_is_not_the_assistants_prose() -> None:
    lines = prose_lines(CURSOR_TURN)
    assert not any("Grep search" in line or "file:///" in line for line in lines)
    assert lines[-1].startswith("The handler now takes `findFn`")
    found = decisions(CURSOR_TURN)
    assert not any("old mock broke" in d for d in found)
    assert any(d.startswith("The handler now takes `findFn`") for d in found)


def test_a_folded_search_is_read_apart_for_the_files_its_hits_name() -> None:
    # In a text layout the hits are the only place the files a search found are named: they are
    # findings listed after every other one, even one with less substance than theirs.
    own = findings(CURSOR_TURN, decisions(CURSOR_TURN))
    assert not any("file:///" in f for f in own)
    folded = folded_findings(CURSOR_TURN, decisions(CURSOR_TURN), own)
    assert any("file:///repo/src/handler.test.ts" in f for f in folded)
    assert not set(folded) & set(own)
    candidates = [(0, LEAD_FINDINGS, own[0]), *((0, FOLDED, f) for f in folded)]
    picked = chosen(candidates, "", 10_000, HeuristicCounter())
    ranks = {text: rank for _, rank, text in picked}
    assert all(ranks[own[0]] > ranks[f] for f in folded)


def test_a_code_block_still_gives_its_comments_and_quoted_failures() -> None:
    text = (
        "Rebuilt the index:\n\n```bash\n# since the old one was built from the stale branch\n"
        "make index\nfatal: ambiguous argument 'main'\n```\n"
    )
    assert prose_lines(text) == [
        "Rebuilt the index:",
        "# since the old one was built from the stale branch",
        "fatal: ambiguous argument 'main'",
    ]


def test_a_details_element_opened_and_closed_on_one_line_is_left_out_whole() -> None:
    text = "<details><summary>Listed directory src</summary>a.ts b.ts</details>\nKept because X."
    assert prose_lines(text) == ["Kept because X."]


def test_a_hit_a_summary_lists_is_read_back_as_a_hit_not_as_a_lead() -> None:
    messages = [
        Message.user("Make the handler testable without module mocks."),
        Message.assistant(CURSOR_TURN),
        Message.user("Good. Now run the tests."),
        Message.assistant("Running the whole suite next."),
        Message.user("Go on."),
    ]
    first = StructuredSummarizer().summarize(messages).text
    hits = carried_hits(first)
    assert any("file:///repo/src/" in hit for hit in hits)
    assert not any("file:///" in finding for finding in carried_findings(first))
    later = [summary_message(first), Message.assistant("Continuing."), Message.user("Go on.")]
    places = {unit: place for _, place, unit in extract_facts(later).findings}
    assert {places[hit] for hit in hits} == {FOLDED}
    assert HIT_PREFIX + hits[0] in StructuredSummarizer().summarize(later).text


def test_a_texts_later_findings_are_no_hits() -> None:
    review = "\n".join(
        f"- `module_{n}.py` keeps {n} handlers on the request path, all of them synchronous."
        for n in range(6)
    )
    messages = [
        Message.user("Review the handlers."),
        Message.assistant(review),
        Message.user("Thanks."),
        Message.assistant("Starting on the first module."),
        Message.user("Go on."),
    ]
    places = {place for _, place, _ in extract_facts(messages).findings}
    assert FOLDED not in places and max(places) >= LEAD_FINDINGS + 1
    summary = StructuredSummarizer().summarize(messages).text
    assert "`module_5.py`" in summary and HIT_PREFIX not in summary
