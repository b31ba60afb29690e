"""Decision signals a summary missed: a purpose, a choice ruled out in hindsight or judged safer,
a cause named by its verb, what turned out to be so, a mistake owned, a line labelled as the
problem, a directive after "So", an option skipped or swapped (in a Markdown heading too), the
same in Russian, Portuguese, Spanish, French and Chinese; and a question, which wonders rather
than concludes, is none whatever its words."""

from __future__ import annotations

import pytest

from contextwarden.summarizers.decisions import decisions, standing


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        # a purpose, a choice ruled out or judged safer, the way judged right
        ("The cache key now includes the tenant id in order to keep two tenants apart.", 2),
        ("The hook writes to the global scope regardless of where it is called from.", 2),
        ("Spawning a subprocess per file is safer than sharing one interpreter here.", 2),
        ("Running the CLI from its source entry point is the right way to test the flags.", 2),
        ("We shouldn't edit the lock file by hand; the package manager rewrites it anyway.", 2),
        ("So don't move the parser into the server. Move the tokenizer out of the parser.", 2),
        # a line labelled as the problem or the issue
        ("**Problem:** the header is set after the file fails to open, on the error reply.", 2),
        ("Issue: the retry loop never resets its counter between two separate requests.", 2),
        # a cause named by its verb, a mistake owned, an option judged too broad
        ("The stale symlink causes the test runner to collect the vendored packages too.", 1),
        ("I made a mistake earlier: the migration ran against the production schema.", 1),
        ("Unfortunately the decoder ignores the offset and reads the whole stream at once.", 1),
        ("**Too broad:** the rule blocks every path containing the word schema.", 1),
        # what turned out to be so, in the past tense as in the present
        ("The slow start turned out to be a DNS lookup for every plugin host.", 1),
        # an option skipped or swapped, a directive; an option's Markdown heading says one too
        ("Skip the retry wrapper for now. It adds a second queue for no measured gain.", 2),
        ("- Swap the hand-written parser for `tomllib` on the read path.", 2),
        ("### 2. Swap `os.walk` → `os.scandir` in the indexer's inner loop", 2),
        ("## So don't cache the rendered page. Cache the parsed template.", 2),
        # the same in other languages the sessions use
        ("Строка читается один раз при загрузке, а не при каждом нажатии клавиши.", 2),  # noqa: RUF001
        ("`--dist=loadscope` distribui os testes por escopo de fixture (mais seguro).", 2),
        ("Reparto las pruebas por módulo, que es más seguro con los fixtures compartidos.", 2),
        ("On garde le verrou global, c'est plus sûr avec les écritures concurrentes.", 2),
        ("我把 `notes.md` 误删了\uff0c只好从备份里再恢复一遍。", 1),
    ],
)
def test_a_signal_the_summary_missed_is_a_decision(line: str, rank: int) -> None:
    assert decisions(f"Reading the file now.\n{line}") == [line]
    assert standing(line) == rank


@pytest.mark.parametrize(
    "line",
    [
        "Maybe the collector adds the path to the duplicates because of the flag?",
        "So the second call is the one causing the duplicated test ids in the report?",
        "是不是因为缓存没有清理\uff0c所以第二次请求还是旧的数据\uff1f",
        # set in bold or italics (Markdown emphasis closes after the question mark)
        "**Do you want to keep these cleanup lines, or would you prefer to keep the file?**",
        "_Shall I switch to the streaming reader instead of loading the whole file?_",
    ],
)
def test_a_question_is_no_decision(line: str) -> None:
    assert decisions(f"Reading the file now.\n{line}") == []
