"""``contextwarden inspect``: the JSON shape our users script against, and the human view."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contextwarden.breakdown import CATEGORIES
from contextwarden.cli import main
from contextwarden.content_ids import content_id
from tests.cliruns import run_cli
from tests.conftest import FIXTURES_DIR, fixture_path

SMALL = fixture_path("claude-code/d-kimuson__claude-code-viewer__5c0375b4.jsonl")
OPENHANDS = fixture_path("openhands/All-Hands-AI__OpenHands__resolver-mock-output.jsonl")
COMPACTED = fixture_path("claude-code/entireio__cli__7662d755ef9f-s2-1compact-sonnet.jsonl")


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    with pytest.raises(SystemExit) as info:
        main(["inspect", *args, "--json"])
    assert info.value.code == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_json_shape_and_consistent_totals(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, str(SMALL))
    assert out["format"] == "claude-code"
    assert out["messages"] == 20
    tokens = out["tokens"]
    assert isinstance(tokens, dict)
    by_category = tokens["by_category"]
    assert set(by_category) == set(CATEGORIES)
    # Per-block counts plus per-message overheads add up to the total, never exceed it.
    assert 0 < sum(by_category.values()) <= tokens["total"]
    assert out["tool_results_by_tool"]["Read"] > 0
    assert out["violations"] == []


def test_exact_counter_and_format_override(capsys: pytest.CaptureFixture[str]) -> None:
    heuristic = run_json(capsys, str(SMALL))
    exact = run_json(capsys, str(SMALL), "--counter", "o200k", "--format", "claude-code")
    assert exact["tokens"]["total"] != heuristic["tokens"]["total"]  # type: ignore[index]
    ratio = heuristic["tokens"]["total"] / exact["tokens"]["total"]  # type: ignore[index,operator]
    assert 0.97 <= ratio <= 1.25  # the heuristic errs high, never far low


def test_multi_run_file_says_how_many_and_index_picks(capsys: pytest.CaptureFixture[str]) -> None:
    first = run_json(capsys, str(OPENHANDS))
    runs = len(OPENHANDS.read_text(encoding="utf-8").splitlines())  # one run per line
    assert runs > 1 and first["metadata"]["conversations"] == runs  # type: ignore[index]
    second = run_json(capsys, str(OPENHANDS), "--index", "1")
    assert second["messages"] != first["messages"]


def test_violations_are_listed_with_rule_and_index(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "request.json"
    body = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "x", "content": "?"}],
            },
        ]
    }
    path.write_text(json.dumps(body))
    out = run_json(capsys, str(path))
    # Merge mode keeps the orphan result's text (as marked text), and says what it repaired.
    assert out["violations"] == []
    assert any("unmatched" in r["action"] for r in out["repairs"])  # type: ignore[union-attr,index]


def test_errors_are_clear_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main(["inspect", str(tmp_path / "missing.jsonl")])
    assert info.value.code == 2
    assert "no such file" in capsys.readouterr().err
    garbage = tmp_path / "x.json"
    garbage.write_text("{not json")
    with pytest.raises(SystemExit):
        main(["inspect", str(garbage), "--format", "anthropic"])
    assert "malformed JSON" in capsys.readouterr().err


def test_human_output_and_module_entry_point() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "contextwarden", "inspect", str(SMALL)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "Tokens by category" in done.stdout
    assert "Tool results by tool" in done.stdout
    assert "passes every API rule" in done.stdout


def test_a_compacted_session_shows_what_was_sent_and_the_full_log(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from contextwarden.formats import load

    out = run_json(capsys, str(COMPACTED))
    sent = out["sent_context"]
    assert isinstance(sent, dict) and sent["compactions"] == 1
    (compaction,) = load(COMPACTED).source.metadata["compactions"]  # type: ignore[union-attr]
    assert sent["after_compaction_at_line"] == compaction["line"]
    # the summary message, then every message after the boundary
    assert sent["messages"] == out["messages"] - compaction["messages_before"] + 1
    assert 0 < sent["tokens"]["total"] < out["tokens"]["total"]  # type: ignore[index]
    assert run_json(capsys, str(SMALL))["sent_context"] is None  # never compacted
    with pytest.raises(SystemExit):
        main(["inspect", str(COMPACTED)])
    flat = " ".join(capsys.readouterr().out.split())
    assert f"Context as sent after the last of 1 compaction(s) (line {compaction['line']})" in flat
    assert f"{sent['tokens']['total']:,} tokens" in flat  # type: ignore[index]


def test_inspect_says_what_the_agents_own_compaction_removed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Claude Code's own compaction, read from its file: every message before the boundary left
    the context, and each thing typed there that its summary does not quote is named."""
    from contextwarden.formats import load
    from contextwarden.summarizers.facts import extract_facts

    (compaction,) = load(COMPACTED).source.metadata["compactions"]  # type: ignore[union-attr]
    before = load(COMPACTED).messages[: compaction["messages_before"]]
    summary = compaction["summary"]["text"]
    (own,) = run_json(capsys, str(COMPACTED))["compactions_lost"]  # type: ignore[misc]
    assert own["strategy"] == "claude-code compaction" and own["trigger"] == compaction["trigger"]
    items = own["lost"]["items"]
    removed = [i for i in items if i["kind"] in ("message", "text")]
    assert sorted(i["index"] for i in removed) == list(range(len(before)))
    typed = {m.text for m in extract_facts(before).user_messages if m.text not in summary}
    named = [i for i in items if i["kind"] == "user_text"]
    assert typed and len(named) == len(typed)
    said = " ".join(" ".join(text.split()) for text in typed)  # excerpts are on one line
    assert all(i["refs"] and i["what"].rstrip("…") in said for i in named)
    with pytest.raises(SystemExit):
        main(["inspect", str(COMPACTED)])
    flat = " ".join(capsys.readouterr().out.split())
    assert "1 compaction(s) recorded; what each removed:" in flat
    assert f"1. claude-code compaction (auto): {own['lost']['tokens']:,} tokens" in flat


def test_long_metadata_is_cut_with_how_much_was_left_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    diff = "diff --git a/x b/x\n" + "+ added line\n" * 20_000
    document = {
        "info": {"exit_status": "submitted", "submission": diff, "model_stats": {}},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "fix it"},
            {"role": "assistant", "content": "done"},
        ],
        "trajectory_format": "mini-swe-agent-1",
    }
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    shown = run_json(capsys, str(path))["metadata"]["submission"]  # type: ignore[index]
    assert shown.startswith("diff --git a/x b/x") and len(shown) < 300
    assert f"[{len(diff) - 200:,} more characters in the file]" in shown
    with pytest.raises(SystemExit):
        main(["inspect", str(path)])
    text = capsys.readouterr().out
    assert len(text) < 5_000 and "more characters in the file" in " ".join(text.split())


def test_json_is_one_line_and_pretty_is_indented(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["inspect", str(SMALL), "--json"])
    line = capsys.readouterr().out
    assert line.count("\n") == 1 and json.loads(line)["messages"] == 20
    with pytest.raises(SystemExit):
        main(["inspect", str(SMALL), "--json", "--pretty"])
    pretty = capsys.readouterr().out
    assert pretty.startswith('{\n  "file"') and json.loads(pretty) == json.loads(line)


def test_the_human_view_into_a_closed_pipe_exits_0() -> None:
    """``contextwarden inspect f | head -1``: the reader left; nothing failed."""
    argv = [sys.executable, "-m", "contextwarden", "inspect", str(COMPACTED)]
    env = {"PYTHONPATH": ":".join(sys.path), "PATH": "/usr/bin:/bin", "COLUMNS": "100"}
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # before the first line: the write fails for sure
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=120)
    assert (code, err) == (0, "")


def test_a_model_without_a_price_is_named_never_billed_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = COMPACTED.read_text(encoding="utf-8")
    unknown = tmp_path / "unknown-model.jsonl"
    unknown.write_text(text.replace('"model":"claude-sonnet-4-5', '"model":"claude-opus-9'))
    with pytest.raises(SystemExit):
        main(["inspect", str(unknown)])
    shown = " ".join(capsys.readouterr().out.split())
    assert "recorded cost: no price for claude-opus-9" in shown
    assert "$0.00" not in shown


def test_an_empty_file_and_a_wrong_format_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    codex = fixture_path("codex/EntityProcess__agentv__a392ff332928-s0-gpt-5.4.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    for argv, says in (
        ([str(empty)], "empty.jsonl: the file is empty: there is no session in it"),
        ([str(codex), "--format", "openhands"],
         "not in the openhands format: it looks like codex; use --format codex"),
    ):  # fmt: skip
        with pytest.raises(SystemExit) as info:
            main(["inspect", *argv])
        assert info.value.code == 2
        assert says in capsys.readouterr().err


CODEX_REMOTE = fixture_path(
    "codex/EntityProcess__agentv__0034f597b72d-s1-codex-spark-2compactions.jsonl"
)
CODEX_LOCAL = Path(__file__).parent / "data" / "codex" / "handwritten-local-compaction.jsonl"


def _rollout_before(path: Path) -> list[dict[str, object]]:
    """The payloads of a rollout's records before its first ``compacted`` record."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    line = next(n for n, r in enumerate(records) if r["type"] == "compacted")
    return [r["payload"] for r in records[:line]]


def _codex_lost(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    (lost,) = run_json(capsys, str(path))["compactions_lost"]  # type: ignore[misc]
    return lost  # type: ignore[no-any-return]


def _texts(payloads: list[dict[str, Any]], role: str) -> list[str]:
    return [
        part["text"]
        for p in payloads
        if p.get("type") == "message" and p["role"] == role
        for part in p["content"]
    ]


def test_codex_remote_compaction_lists_what_left_and_says_its_summary_is_encrypted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Codex's own remote compaction, read from the rollout: every tool result and assistant text
    before it left (the replacement holds none), the typed messages it carried did not, and the
    report says its summary is encrypted, so what it lists was not kept word for word."""
    before = _rollout_before(CODEX_REMOTE)
    lost = _codex_lost(capsys, CODEX_REMOTE)
    assert (lost["strategy"], lost["summary"]) == ("codex remote compaction", "encrypted")
    items = lost["lost"]["items"]
    refs = {ref for item in items for ref in item["refs"]}
    outputs = {p["call_id"] for p in before if p.get("type") == "function_call_output"}
    said = {content_id(text) for text in _texts(before, "assistant")}
    assert outputs and said and outputs | said <= refs
    typed = {content_id(p["message"]) for p in before if p.get("type") == "user_message"}
    assert len(typed) > 1 and not typed & refs
    assert not [i for i in items if i["kind"] == "user_text"]
    with pytest.raises(SystemExit):
        main(["inspect", str(CODEX_REMOTE)])
    flat = " ".join(capsys.readouterr().out.split())
    tokens = lost["lost"]["tokens"]
    assert f"1. codex remote compaction (recorded): {tokens:,} tokens" in flat
    assert "not kept word for word: the agent's summary is encrypted" in flat


def test_codex_compaction_without_summary_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same rollout with the compaction item taken out of its record, as Codex sometimes
    writes it (a real session of the corpus has two such): the summary is absent."""
    lines = CODEX_REMOTE.read_text(encoding="utf-8").splitlines()
    at = next(n for n, line in enumerate(lines) if '"type":"compacted"' in line)
    record = json.loads(lines[at])
    items = record["payload"]["replacement_history"]
    record["payload"]["replacement_history"] = [i for i in items if i["type"] != "compaction"]
    lines[at] = json.dumps(record)
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    lost = _codex_lost(capsys, path)
    assert (lost["strategy"], lost["summary"]) == ("codex compaction without summary", "absent")
    with pytest.raises(SystemExit):
        main(["inspect", str(path)])
    assert "the agent kept no summary of what it removed" in capsys.readouterr().out


def test_codex_local_compaction_is_compared_with_its_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A local compaction as Codex writes one (``compact.rs``: the summary as ``message`` and as
    the replacement's last user message): the tool results left, what the summary quotes did not,
    and the typed message merged into the same view message after the record is not counted."""
    before = _rollout_before(CODEX_LOCAL)
    lost = _codex_lost(capsys, CODEX_LOCAL)
    assert (lost["strategy"], lost["summary"]) == ("codex local compaction", "read")
    items = lost["lost"]["items"]
    outputs = [p["call_id"] for p in before if p.get("type") == "function_call_output"]
    assert [i["refs"] for i in items if i["what"].startswith("user:")] == [[c] for c in outputs]
    errors = [i["what"] for i in items if i["kind"] == "error"]
    assert errors == ["E ValueError: day is out of range for month"]
    text = " ".join(i["what"] for i in items)
    assert "leap-year" not in text and "old message text" not in text
    assert not [i for i in items if i["kind"] == "file" and i["what"] == "src/dates.py"]
    with pytest.raises(SystemExit):
        main(["inspect", str(CODEX_LOCAL)])
    out = capsys.readouterr().out
    assert "1. codex local compaction (recorded)" in out and "word for word" not in out


def test_codex_record_without_replacement_is_left_out_and_the_next_compared_from_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An older Codex wrote a local compaction as its summary alone (``replacement_history``
    absent): what it kept cannot be told, so it is not listed, and the compaction after it is
    compared from it on, not charged with what the older one removed."""
    lines = CODEX_LOCAL.read_text(encoding="utf-8").splitlines()
    at = next(n for n, line in enumerate(lines) if '"type":"compacted"' in line)
    older = json.loads(lines[at])
    del older["payload"]["replacement_history"]
    first_output = next(n for n, line in enumerate(lines) if "function_call_output" in line)
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        "\n".join([*lines[: first_output + 1], json.dumps(older), *lines[first_output + 1 :]]),
        encoding="utf-8",
    )
    lost = _codex_lost(capsys, path)
    refs = {ref for item in lost["lost"]["items"] for ref in item["refs"]}
    first_call = json.loads(lines[first_output])["payload"]["call_id"]
    assert lost["summary"] == "read" and first_call not in refs
    assert {"call_run_tests", "call_rerun_tests"} <= refs


def test_codex_context_as_sent_is_the_replacement_then_what_followed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """After a Codex compaction the agent sends its replacement history, then what followed it,
    not the whole log: the sent context counts those, and says its summary is encrypted (not
    counted) where the replacement holds one only OpenAI's server reads."""
    from contextwarden.formats import load
    from contextwarden.formats.codex import replacement_messages

    out = run_json(capsys, str(CODEX_REMOTE))
    sent = out["sent_context"]
    (compaction,) = load(CODEX_REMOTE).source.metadata["compactions"]  # type: ignore[union-attr]
    replaced = replacement_messages(compaction["replacement_history"])
    assert sent["summary"] == "encrypted" and sent["replacement_messages"] == len(replaced) > 0
    assert sent["messages"] == len(replaced) + out["messages"] - compaction["messages_before"]
    assert 0 < sent["tokens"]["total"] < out["tokens"]["total"]  # type: ignore[index]
    with pytest.raises(SystemExit):
        main(["inspect", str(CODEX_REMOTE)])
    flat = " ".join(capsys.readouterr().out.split())
    assert "its replacement (1 message and an encrypted summary, not counted)" in flat


ANSI_LOG = FIXTURES_DIR / "claude-code" / "dougnukem__orpheus__77-342db9d568-ansi-log.jsonl"
"""A real CI log read by Bash: ANSI colours (ESC) around bracketed step names."""
_BOX = str.maketrans("", "", "│┃ \n")


def _unboxed(text: str) -> str:
    """The table's text with its borders and spaces gone, so a preview folded over lines reads
    as one string."""
    return text.translate(_BOX)


def test_text_view_shows_a_logs_colours_and_brackets_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "inspect", str(ANSI_LOG))
    assert code == 0, err
    assert "\x1b" not in out  # a terminal would obey it: the table's colours would change
    # The escapes written out, and the preview's "[result]", a look-alike of rich markup, kept.
    assert "[result]rust/lintUNKNOWNSTEP" in _unboxed(out)
    assert "\\x1b[0m\\x1b[35m[web:in" in _unboxed(out)


def test_text_views_print_markup_in_a_message_as_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Hand-built: a person quoting rich's closing tag made the table raise MarkupError.
    session = tmp_path / "chat.json"
    typed = "fix the regex [/] and [bold]x[/bold] in the parser"
    session.write_text(
        json.dumps([{"role": "user", "content": typed}, {"role": "assistant", "content": "ok"}])
    )
    code, out, err = run_cli(capsys, "inspect", str(session))
    assert code == 0, err
    assert "theregex[/]and[bold]x[/bold]inthe" in _unboxed(out)
