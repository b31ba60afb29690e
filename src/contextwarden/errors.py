"""The one error tree of contextwarden: every error the library raises is a ContextWardenError.

Errors carry structured fields (index, role, tool_use_id, …) so callers need not parse text.
"""

from __future__ import annotations


class ContextWardenError(Exception):
    """Root of every error contextwarden raises.

    ::

        ContextWardenError
        ├── HistoryError                 an addition would break an API rule
        │   ├── RoleAlternationError     wrong role at this point (e.g. two user messages)
        │   └── ToolPairingError         tool_use / tool_result do not match
        ├── FormatError                  a payload or file could not be read
        ├── TokenizerError               a tokenizer could not be loaded, or failed on a text
        ├── CompactionError              a compaction could not produce a valid, smaller view
        ├── ContextOverflowError         even the last resort left the request over the window
        ├── SummarizerError              a summarizer failed (counted by the circuit breaker)
        ├── StoreError                   a session store could not read or write
        │   └── StoreConflictError       the session changed since it was read (stores/)
        ├── PricingError                 a price table or cache model input is wrong (cost/)
        ├── ToolError                    an agent tool refused a call (bad argument, special file)
        ├── UpstreamError                the proxy's upstream failed or took too long (proxy/)
        ├── RequestRefused               the proxy refused a request before any work (proxy/)
        ├── MissingDependencyError       an optional extra is not installed
        └── UsageError                   a command line that cannot be carried out (CLI exit 2)
            └── ProxyConfigError         an option of ``contextwarden proxy`` is unusable
    """


class HistoryError(ContextWardenError):
    """An addition to a ConversationHistory would break an API rule; nothing was added."""

    def __init__(
        self,
        message: str,
        *,
        index: int | None = None,
        role: str | None = None,
        tool_use_id: str | None = None,
        rule: str | None = None,
    ) -> None:
        super().__init__(message)
        self.index = index
        self.role = role
        self.tool_use_id = tool_use_id
        self.rule = rule


class RoleAlternationError(HistoryError):
    """The message has the wrong role for its position (roles must alternate, user first)."""


class ToolPairingError(HistoryError):
    """A tool_use is unanswered, a tool_result answers nothing, or blocks are in the wrong place."""


class FormatError(ContextWardenError):
    """A payload or file could not be read; ``path``/``line``/``index`` say where."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        index: int | None = None,
    ) -> None:
        where = ", ".join(
            part
            for part in (
                path,
                f"line {line}" if line is not None else None,
                f"message {index}" if index is not None else None,
            )
            if part
        )
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.line = line
        self.index = index


class TokenizerError(ContextWardenError):
    """A tokenizer could not be loaded (unknown encoding, bad file, hash mismatch), or failed on
    a text (a Rust tokenizer's panic)."""


class CompactionError(ContextWardenError):
    """A compaction could not produce a valid view with fewer tokens; the history is unchanged."""


class ContextOverflowError(ContextWardenError):
    """Every rung ran, the last-resort cap included, and the request still does not fit.

    What is left cannot shrink without editing what the API forbids us to edit: the latest
    assistant turn's thinking, tool_use inputs, images or documents, or the system prompt and tool
    definitions. Each rung that applied stays applied (each one is valid on its own); nothing said
    is lost (the log keeps every original). ``tokens``: what the request needs; ``window``: the
    effective window (context window minus the output reserve); ``unshrinkable``: what could not
    shrink, largest first, in words.
    """

    def __init__(self, tokens: int, window: int, unshrinkable: tuple[str, ...] = ()) -> None:
        parts = "; ".join(unshrinkable) if unshrinkable else "nothing left to cut"
        super().__init__(
            f"the request needs {tokens:,} tokens but the effective window is {window:,} "
            f"(context window minus the output reserve), and what is left cannot shrink: {parts}. "
            "Use a model with a larger window, lower ContextPolicy.max_output_reserve, or remove "
            "the oversized content from the conversation."
        )
        self.tokens = tokens
        self.window = window
        self.unshrinkable = unshrinkable


class SummarizerError(ContextWardenError):
    """A summarizer failed (timeout, HTTP error, empty or invalid reply)."""


class StoreError(ContextWardenError):
    """A session store could not read or write (bad session id, corrupt data, conflict)."""


class PricingError(ContextWardenError):
    """A price table, a price override or a request given to the cost model is wrong."""


class ToolError(ContextWardenError):
    """An agent tool refused a call: an argument of the wrong type or range, a path that is not a
    regular file. The agent hands the message back to the model as the tool's error result, so it
    says what to send instead. ``tool``/``argument`` name the call and the input at fault."""

    def __init__(self, message: str, *, tool: str, argument: str | None = None) -> None:
        super().__init__(message)
        self.tool = tool
        self.argument = argument


class UpstreamError(ContextWardenError):
    """The proxy's upstream API could not be reached, broke the connection, or took longer than
    ``--timeout`` in one phase (``phase``: connect and headers, whole body, stream)."""

    def __init__(self, message: str, *, phase: str, upstream: str, timed_out: bool) -> None:
        super().__init__(message)
        self.phase = phase
        self.upstream = upstream
        self.timed_out = timed_out


class RequestRefused(ContextWardenError):
    """The proxy refused a client's request before doing anything with it: ``status`` 413 (body
    over ``--max-body``), 408 (body slower than ``--client-timeout``) or 400 (a path outside
    the API); ``reason`` is what ``/metrics`` counts it under."""

    def __init__(self, message: str, *, status: int, reason: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class UsageError(ContextWardenError):
    """The command line asks for something that cannot be done (write over the input, an LLM
    summarizer without a model or key); the CLI exits with 2, other errors with 1."""


class ProxyConfigError(UsageError):
    """An option of the proxy (flag or CONTEXTWARDEN_* environment variable) is unusable."""


class MissingDependencyError(ContextWardenError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, module: str, extra: str) -> None:
        super().__init__(
            f"{module!r} is not installed; install it with: pip install 'contextwarden[{extra}]'"
        )
        self.module = module
        self.extra = extra


def require(module: str, extra: str) -> object:
    """Import an optional dependency lazily, or raise MissingDependencyError naming its extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(module, extra) from exc
