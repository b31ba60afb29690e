"""Failure lines of tools that speak the user's language: GCC, git, bash and the C library print
their failure words from their translation catalogs (``translated_marks``), and each line here is
as the tool prints it under that locale (the catalogs' ``msgstr``, and compiler output quoted in
public build logs), piped through ``tail`` so its exit code is lost, or under Codex's ``Process
exited with code 0`` when a later step of the line succeeded."""

# ruff: noqa: RUF001, RUF003 (fullwidth colons and parentheses, Cyrillic: the catalogs' own)

from __future__ import annotations

import pytest

from contextwarden.compaction import MicroCompact
from contextwarden.compaction.microcompact import FAILED_LINES_NOTE
from contextwarden.model import Message, ToolResultBlock, ToolUseBlock
from contextwarden.policy import CLEARED_MARKER
from contextwarden.summarizers.failure_ranks import TELLING_RANK, WORD_RANK, line_rank
from contextwarden.summarizers.failures import result_failure
from tests.strategies import tool_turns


def _excerpt(command: str, output: str) -> str | None:
    call = ToolUseBlock(id="c1", name="Bash", input={"command": command})
    return result_failure(call, ToolResultBlock(tool_use_id="c1", content=output))


GCC = {
    # gcc/po/ja.po: "fatal error: " is "致命的エラー: ", "compilation terminated." is
    # "コンパイルを停止しました。"
    "ja": (
        "次のファイルから読み込み:  balle.cpp:3:\n"
        "NumMeth.h:4:10: 致命的エラー: iostream.h: そのようなファイルやディレクトリはありません\n"
        "    4 | #include <iostream.h>\n"
        "      |          ^~~~~~~~~~~~\n"
        "コンパイルを停止しました。",
        "NumMeth.h:4:10: 致命的エラー: iostream.h: そのようなファイルやディレクトリはありません",
    ),
    # gcc/po/zh_CN.po: "致命错误：", glibc's zh_CN.po ENOENT after a fullwidth colon
    "zh_CN": (
        "In file included from rarcrack.c:21:0:\n"
        "rarcrack.h:25:48: 致命错误： libxml/xmlmemory.h：没有那个文件或目录\n"
        "编译中断。",
        "rarcrack.h:25:48: 致命错误： libxml/xmlmemory.h：没有那个文件或目录",
    ),
    # gcc/po/ru.po: "error: " is "ошибка: ", the message itself left English
    "ru": (
        "pi.c: В функции «main»:\n"
        "pi.c:1:8: ошибка: expected «=», «,», «;», «asm» or «__attribute__» before «<» token\n"
        "компиляция прервана.",
        "pi.c:1:8: ошибка: expected «=», «,», «;», «asm» or «__attribute__» before «<» token",
    ),
    # git's tr.po and GCC share "hata: " for "error: "
    "tr": (
        "a.c: ‘main’ işlevinde:\na.c:3:5: hata: ‘x’ bildirilmemiş\n    3 |     x = 1;",
        "a.c:3:5: hata: ‘x’ bildirilmemiş",
    ),
}


@pytest.mark.parametrize(("output", "excerpt"), GCC.values(), ids=GCC.keys())
def test_gcc_s_translated_error_is_the_located_line(output: str, excerpt: str) -> None:
    assert _excerpt("make 2>&1 | tail -20", output) == excerpt
    assert line_rank(excerpt) == TELLING_RANK


GIT_DIED = {
    # git's po/<lang>.po: usage.c's _("fatal: ")
    "de": "Schwerwiegend: Konnte nicht vom Remote-Repository lesen.",
    "fr": "fatal\u00a0: Impossible de lire le dépôt distant.",  # a no-break space before ':'
    "tr": "onulmaz: bir git deposu değil (veya üst dizinlerden herhangi biri): .git",
    "zh_CN": "致命错误：不是 git 仓库（或者任何父目录）：.git",
    "zh_TW": "致命錯誤: 不是 git 版本庫（或者任何父目錄）: .git",
}


@pytest.mark.parametrize("line", GIT_DIED.values(), ids=GIT_DIED.keys())
def test_git_s_translated_fatal_line_is_a_failure(line: str) -> None:
    output = f"Please make sure you have the correct access rights\n{line}"
    assert _excerpt("git push origin main 2>&1 | tail -5", output) == line


GIT_CONFLICT = {
    # git's po/<lang>.po: merge-ort.c's _("CONFLICT (%s): Merge conflict in %s")
    "de": "KONFLIKT (Inhalt): Merge-Konflikt in app.py",
    "fr": "CONFLIT (contenu)\u00a0: Conflit de fusion dans app.py",
    "tr": "ÇAKIŞMA (içerik): app.py içinde birleştirme çakışması",
    "zh_CN": "冲突（内容）：合并冲突于 app.py",
}


@pytest.mark.parametrize("line", GIT_CONFLICT.values(), ids=GIT_CONFLICT.keys())
def test_git_s_translated_conflict_is_the_telling_line(line: str) -> None:
    assert line_rank(line) == TELLING_RANK
    assert _excerpt("git merge feature 2>&1 | tail -3", f"Auto-merging app.py\n{line}") == line


NOT_FOUND = {
    # bash's po/<lang>.po: "%s: command not found" (5.2), "line %d: " (builtins/common.c)
    "de": "bash: Zeile 1: jq: Kommando nicht gefunden.",
    "fr": "bash: jq : commande introuvable",
    "pt_BR": "bash: jq: comando não encontrado",
    "tr": "bash: jq: komut yok",
    "ja": "bash: jq: コマンドが見つかりません",
    "zh_TW": "bash: jq：指令找不到",
}


@pytest.mark.parametrize("line", NOT_FOUND.values(), ids=NOT_FOUND.keys())
def test_a_word_the_shell_could_not_run_fails_the_step_in_its_language(line: str) -> None:
    """The command's last step exits 0: the shell's own line still says one did not run."""
    output = f"{line}\ndone\nProcess exited with code 0"
    assert _excerpt("jq .name package.json; echo done", output) == line
    assert _excerpt("cat setup.log", output) is None  # a log shown, no word of the command


STRERROR = {
    # glibc's po/<lang>.po: strerror(ENOENT) and strerror(EACCES)
    "tr": "cat: config.yml: Böyle bir dosya ya da dizin yok",
    "ja": "cp: 'dist/app.js' の状態を取得できません: そのようなファイルやディレクトリはありません",
    "pt_BR": "ls: não foi possível acessar 'build': Arquivo ou diretório inexistente",
    "it": "rm: impossibile rimuovere 'out': Permesso negato",
    "ko": "cat: config.yml: 그런 파일이나 디렉터리가 없습니다",
}


@pytest.mark.parametrize("line", STRERROR.values(), ids=STRERROR.keys())
def test_the_system_s_translated_error_names_what_failed(line: str) -> None:
    assert line_rank(line) == TELLING_RANK
    assert _excerpt("cat config.yml 2>&1 | head", f"{line}\n") == line


def test_microcompact_keeps_the_translated_error_line() -> None:
    """A cleared Japanese build keeps GCC's line, as the summary quotes it."""
    build = ToolUseBlock("toolu_build", "Bash", {"command": "make 2>&1 | tail -40"})
    log = "".join(f"g++ -c unit{n}.cpp\n" for n in range(200))
    output, line = GCC["ja"]
    turns = tool_turns(4, size=2_000)
    messages = [
        Message.user("ビルドを直して"),
        Message("assistant", (build,)),
        Message("user", (ToolResultBlock(build.id, log + output),)),
        *turns[1:],
    ]
    cleared = MicroCompact(min_saving=0)(messages).messages[2].tool_results[0].text
    assert cleared.split("\n")[:3] == [CLEARED_MARKER, FAILED_LINES_NOTE, line]


TRANSLATED_WORDS = {
    # git's po/<lang>.po: "Automatic merge failed; …", "failed to push some refs to '%s'"
    "tr": "Otomatik birleştirme başarısız; çakışmaları çözün ve sonucu işleyin.",
    "it": "push di alcuni riferimenti su 'git@github.com:a/b.git' non riuscito",
    "uk": 'не вдалося надіслати деякі посилання до "git@github.com:a/b.git"',
}


@pytest.mark.parametrize("line", TRANSLATED_WORDS.values(), ids=TRANSLATED_WORDS.keys())
def test_a_translated_failure_word_ranks_the_line(line: str) -> None:
    assert line_rank(line) == WORD_RANK
