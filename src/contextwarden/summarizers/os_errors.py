"""The messages an operating system gives for a failed call, as programs print them after the
thing they could not do (``cp: cannot stat 'x': No such file or directory``), in the languages
the systems are installed in: what ``failure_marks`` reads as a line naming what failed.
"""

from __future__ import annotations

OS_ERRORS = (
    # POSIX strerror, as C, Go, Python and the shells print it, and its common translations
    r"No such file or directory|Permission denied|Operation not permitted|Is a directory"
    r"|Not a directory|Directory not empty|File exists|Connection refused|Address already in use"
    r"|command not found|Text file busy|Datei oder Verzeichnis nicht gefunden|Keine Berechtigung"
    r"|Aucun fichier ou dossier de ce type|Permission non accordée"
    r"|No existe el archivo o el directorio|Permiso denegado"
    r"|Нет такого файла или каталога|Отказано в доступе|没有那个文件或目录|权限不够"
    # Win32 FormatMessage texts (and their German and French forms)
    r"|The system cannot find the (?:file|path) specified|Access is denied"
    r"|The process cannot access the file\b|The directory name is invalid"
    r"|The filename, directory name, or volume label syntax is incorrect"
    r"|Das System kann die angegebene (?:Datei|Pfad) nicht finden|Zugriff verweigert"
    r"|Le fichier spécifié est introuvable|Accès refusé"
)
"""POSIX ``strerror`` texts (glibc's and the BSDs' wording, and their German, French, Spanish,
Russian and Chinese translations) and Win32 ``FormatMessage`` texts (and their German and French
forms), as alternatives of one regular expression."""
