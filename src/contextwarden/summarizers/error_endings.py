"""An output that ends at its error: a program that printed why it gave up and stopped there,
whatever exit code it left (``failures`` reads a shown exit code 0 as not the program's then).
"""

from __future__ import annotations

from contextwarden.summarizers.failure_marks import ERROR_LINE, EXCEPTION_LINE
from contextwarden.summarizers.failure_quotes import last_traceback
from contextwarden.summarizers.outputs import EXIT_RES, is_status_line

ENDING_LINES = 1
"""An output whose exit code 0 is shown still failed when one of its last this-many lines is an
error line (``Error: name 'x' is not defined``): where a program that gives up says why. Three
lines also took in exploratory scripts' caught errors, and the unresolved errors they added
pushed decisions out of the summary on the fit sessions."""


def stopped_at_error(text: str) -> bool:
    """A program's output ends at its error: an error line among its last lines
    (``_ends_in_error``) or a whole Python traceback last (``_ends_in_traceback``)."""
    return _ends_in_error(text) or _ends_in_traceback(text)


def _ends_in_error(text: str) -> bool:
    """The last ``ENDING_LINES`` lines of a program's output hold an error line: a script that
    caught its error, printed it and exited 0, or a failed step a later one hid."""
    return any(ERROR_LINE.match(line) for line in _last_lines(text))


def _last_lines(text: str) -> list[str]:
    """The last ``ENDING_LINES`` lines of ``text`` that say something (no blank, status or exit
    code line), stripped; read from the end, as a long output's others cannot count."""
    found: list[str] = []
    for line in reversed(text.splitlines()):
        if len(found) == ENDING_LINES:
            break
        said = line.strip()
        if said and not is_status_line(said) and not any(p.search(line) for p in EXIT_RES):
            found.append(said)
    return found[::-1]


def _ends_in_traceback(text: str) -> bool:
    """A program's output ends with a whole Python traceback: after its last ``Traceback``
    header come only indented frames and the exception line (``TypeError: …``) last. A script
    that caught the error and printed it with ``traceback.print_exc()`` before exiting 0 stopped
    where the error was, as an uncaught one would have; a traceback followed by further output
    is one the program went on from."""
    start = last_traceback(text)
    if start is None:
        return False
    lines = [
        line
        for line in text[start:].splitlines()[1:]
        if line.strip() and not is_status_line(line.strip())
    ]
    return (
        len(lines) > 1
        and all(line[0].isspace() for line in lines[:-1])
        and EXCEPTION_LINE.match(lines[-1]) is not None
    )
