"""The few words a failure line is made of where the tool speaks the user's language: one table
per tool, read from that tool's own translation catalog, which ``failure_marks``, ``os_errors``
and ``commands`` match wherever they match the English word.

Each row names the catalog (the tool's ``po/<lang>.po``, gettext's format: the ``msgstr`` of an
``msgid``), and only the words a failure line is recognised by are taken. What a tool leaves
English is not here: MSBuild and Roslyn print ``error CS0117:`` in every locale (MSBuild's
``EventArgsFormatting.FormatEventMessage``: "error should not be localized"; Roslyn's
``MessageProvider.GetMessagePrefix`` formats the literal ``"error"``), only the message after
the code is translated; npm's and Python's messages are never translated.
"""

# ruff: noqa: RUF001, RUF003 (the catalogs' own letters and fullwidth colons, on purpose)

from __future__ import annotations

COLON = r"[ \u00a0]?[:\uff1a]"
"""A label's colon as the catalogs write it: after a no-break space in French (git's
``fatal\u00a0: ``, bash's ``%s : commande introuvable``), the fullwidth ``：`` in Chinese (git's
``错误：``, GCC's ``致命错误：``), the ASCII colon elsewhere."""
SEPARATOR = r"(?:[ \u00a0]?: |\uff1a ?)"
"""The colon after a program's name and after the word it names (``bash: jq: command not
found``), as ``COLON`` writes it, then the space that only the fullwidth colon may go without
(bash's zh_TW ``%s：指令找不到``, zh_CN ``第 %d 行：``)."""

_GIT_PREFIXES = {
    # git's po/<lang>.po: usage.c prints a die() as _("fatal: ") and an error() as _("error: ")
    "de": ("Schwerwiegend", "Fehler"),
    "fr": ("fatal", "erreur"),  # "fatal\u00a0: ", "erreur\u00a0: "
    "tr": ("onulmaz", "hata"),
    "uk": ("збій", "помилка"),
    "zh_CN": ("致命错误", "错误"),
    "zh_TW": ("致命錯誤", "錯誤"),
    # es.po keeps "fatal: " and "error: "; ru.po leaves both untranslated (English printed);
    # it.po, ko.po, pl.po, pt_PT.po have no entry for them (English printed); no ja, pt_BR, cs
}
_GCC_SEVERITIES = {
    # GCC's gcc/po/<lang>.po: the diagnostic kinds "error: " and "fatal error: " after the
    # location (hellocl.c:14:19: schwerwiegender Fehler: CL/cl.h: Datei oder Verzeichnis …)
    "de": ("Fehler", "schwerwiegender Fehler", "Schwerwiegender Fehler"),
    "fr": ("erreur", "erreur fatale"),
    "ja": ("エラー", "致命的エラー"),
    "ru": ("ошибка", "фатальная ошибка"),
    "zh_CN": ("错误", "致命错误"),
}
_PROGRAM_PREFIXES = ("Erro", "Ошибка", "Erreur", "오류")
"""The same prefix as programs of their own print it (Portuguese, Russian, French, Korean), which
were read before the catalogs were: kept, as unknown content is."""

ERROR_LABEL = "|".join(
    sorted(
        {w for row in (*_GIT_PREFIXES.values(), *_GCC_SEVERITIES.values()) for w in row}
        | set(_PROGRAM_PREFIXES),
        key=lambda w: (-len(w), w),
    )
)
"""git's ``fatal``/``error`` prefix and GCC's ``error``/``fatal error`` kind, translated, as
alternatives of one regular expression, the longest first (``致命错误`` before ``错误``); each is
followed by ``COLON`` where it is matched."""

_BASH_NOT_FOUND = {
    # bash's po/<lang>.po: "%s: command not found" (bash 5.2) and "command not found" (5.3,
    # execute_cmd.c's notfound_str); where 5.3's entry is fuzzy, the 5.2 text is printed
    "de": "Kommando nicht gefunden",  # 5.2 "%s: Kommando nicht gefunden."
    "fr": "commande introuvable",  # "%s : commande introuvable"
    "es": "orden no encontrada",
    "pt_BR": "comando não encontrado",
    "it": "comando non trovato",
    "ru": "команда не найдена",
    "uk": "команд[иу] не знайдено",  # 5.3 "команди …", 5.2 "команду …"
    "tr": "komut yok",
    "ja": "コマンドが見つかりません",
    "zh_CN": "未找到命令",
    "zh_TW": "指令找不到",  # "%s：指令找不到"
    "ko": "명령(?:어를|을) 찾을 수 없음",  # 5.2 "명령어를 …", 5.3 "명령을 …"
    "pl": "nie znaleziono polecenia",
    "cs": "příkaz nenalezen",
}
COMMAND_NOT_FOUND = "|".join(_BASH_NOT_FOUND.values())
"""bash's "command not found", translated: the shell's own line that a word is no command."""

_BASH_LINE = {
    # bash's po/<lang>.po: builtins/common.c prints _("line %d: ") after the shell's name
    "de": r"Zeile \d+",
    "fr": r"ligne \d+",
    "es": r"línea \d+",
    "pt_BR": r"linha \d+",
    "it": r"riga \d+",
    "ru": r"строка \d+",
    "uk": r"рядок \d+",
    "tr": r"\d+\. satır",
    "ja": r"\d+ 行",
    "zh_CN": r"第 \d+ 行",
    "zh_TW": r"第 \d+ 列",
    "ko": r"행 \d+번",
    "pl": r"linia \d+",
    "cs": r"řádek \d+",
}
SCRIPT_LINE = "|".join(_BASH_LINE.values())
"""bash's ``line N`` before a message of a script or ``bash -c``, translated."""

_GLIBC_STRERROR = {
    # glibc's po/<lang>.po: strerror(ENOENT) "No such file or directory" and strerror(EACCES)
    # "Permission denied", as cp, cat, ls, gcc and the shells print them after what failed
    "de": ("Datei oder Verzeichnis nicht gefunden", "Keine Berechtigung"),
    "fr": ("Aucun fichier ou dossier de ce (?:nom|type)", "Permission non accordée"),
    "es": ("No existe el (?:fichero|archivo) o el directorio", "Permiso denegado"),
    "pt_BR": ("Arquivo ou diretório inexistente", "Permissão negada"),
    "it": ("File o directory non esistente", "Permesso negato"),
    "ru": ("Нет такого файла или каталога", "Отказано в доступе"),
    "uk": ("Немає такого файла або каталогу", "Відмовлено у доступі"),
    "tr": ("Böyle bir dosya ya da dizin yok", "Erişim engellendi"),
    "ja": ("そのようなファイルやディレクトリはありません", "許可がありません"),
    "zh_CN": ("没有那个文件或目录", "权限不够"),
    "zh_TW": ("沒有此一檔案或目錄", "拒絕不符權限的操作"),
    "ko": ("그런 파일이나 디렉터리가 없습니다", "허가 거부"),
    "pl": ("Nie ma takiego pliku ani katalogu", "Brak dostępu"),
    "cs": ("Adresář nebo soubor neexistuje", "Operace zamítnuta"),
    # older catalogs' wording, as distributions still ship it: fr "… de ce type", es "archivo"
}
_WIN32_MESSAGES = (
    # Win32 FormatMessage, German and French Windows: ERROR_FILE_NOT_FOUND, ERROR_PATH_NOT_FOUND,
    # ERROR_ACCESS_DENIED
    "Das System kann die angegebene (?:Datei|Pfad) nicht finden",
    "Zugriff verweigert",
    "Le fichier spécifié est introuvable",
    "Accès refusé",
)
OS_MESSAGES = "|".join((*(w for row in _GLIBC_STRERROR.values() for w in row), *_WIN32_MESSAGES))
"""The operating system's messages for a missing file and a refused access, translated (glibc's
catalogs, German and French Windows), as alternatives of one regular expression."""

_GIT_CONFLICT = {
    # git's po/<lang>.po: merge-ort.c's _("CONFLICT (%s): Merge conflict in %s")
    "de": "KONFLIKT",
    "fr": "CONFLIT",  # "CONFLIT (%s) : Conflit de fusion dans %s"
    "es": "CONFLICTO",
    "it": "CONFLITTO",
    "pt_PT": "CONFLITO",
    "ru": "КОНФЛИКТ",
    "uk": "КОНФЛІКТ",
    "tr": "ÇAKIŞMA",
    "ko": "충돌",
    "pl": "KONFLIKT",
    "zh_CN": "冲突",  # "冲突（%s）：合并冲突于 %s"
    "zh_TW": "衝突",
}
CONFLICT = "|".join(sorted(set(_GIT_CONFLICT.values())))
"""git's ``CONFLICT`` before the kind of conflict in parentheses, translated."""

FAILURE_WORDS = (
    "fehler|fehlgeschlagen|erreur|échec|échoué|ошибка|ошибки|не удалось"
    "|hata|başarısız|помилка|не вдалося|erro|falhou|errore|non riuscit[oa]"
)
"""Words that say something went wrong, as the catalogs above and the programs' own messages
print them (git's tr "başarısız" in "Otomatik birleştirme başarısız", it "non riuscito" in
"push … non riuscito", uk "не вдалося надіслати"), matched as whole words in lower case."""
FAILURE_CHARACTERS = "错误|錯誤|失败|失敗|エラー|오류|실패"
"""The same in Chinese, Japanese and Korean, matched anywhere: no word boundary separates
characters there."""
