"""The messages an operating system gives for a failed call, as programs print them after the
thing they could not do (``cp: cannot stat 'x': No such file or directory``), in the languages
the systems are installed in: what ``failure_marks`` reads as a line naming what failed.
"""

from __future__ import annotations

from contextwarden.summarizers.translated_marks import COMMAND_NOT_FOUND, OS_MESSAGES

OS_ERRORS = (
    # POSIX strerror, as C, Go, Python and the shells print it
    r"No such file or directory|Permission denied|Operation not permitted|Is a directory"
    r"|Not a directory|Directory not empty|File exists|Connection refused|Address already in use"
    r"|command not found|Text file busy"
    # Win32 FormatMessage texts
    r"|The system cannot find the (?:file|path) specified|Access is denied"
    r"|The process cannot access the file\b|The directory name is invalid"
    r"|The filename, directory name, or volume label syntax is incorrect"
    # … and where the system speaks the user's language (translated_marks: glibc's and bash's
    # catalogs, German and French Windows)
    rf"|{OS_MESSAGES}|{COMMAND_NOT_FOUND}"
)
"""POSIX ``strerror`` texts (glibc's and the BSDs' wording), bash's "command not found" and Win32
``FormatMessage`` texts, in English and translated (``translated_marks``), as alternatives of one
regular expression."""
