"""What every LLM summarizer shares, written once: chunking, prompts, verification, the drivers.

The summary is planned by a generator (``plan``) that yields each ``SummaryRequest`` and receives
the model's reply text; ``LLMSummarizer.summarize`` drives it with a blocking call and
``asummarize`` with an awaited one. Provider modules only send a request and read a reply.

Recursion guard: a summarizer never calls ``ContextManager.prepare``. Every request carries
``query_source="compact"`` (``SummaryRequest.query_source``, and the HTTP header
``QUERY_SOURCE_HEADER``); when given a ``before_request`` callback (e.g. a manager's ``prepare``),
it calls it with the request as a ConversationHistory and ``query_source="compact"``, which the
manager's guard answers by never compacting.
"""

from __future__ import annotations

import asyncio
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, TypedDict

from contextwarden.errors import SummarizerError, require
from contextwarden.model import Message
from contextwarden.summarizers.base import Summary
from contextwarden.summarizers.deadline import (
    DEADLINE,
    AsyncDeadlineTransport,
    Deadline,
    DeadlineExceeded,
    DeadlineTransport,
    PromptTooLongError,
    budget,
    http_module,
    retry_wait,
    too_long,
)
from contextwarden.summarizers.facts import extract_facts
from contextwarden.summarizers.prompt import SYSTEM_PROMPT, build_prompt, render_transcript
from contextwarden.summarizers.verify import VerifyPolicy, verified_summary
from contextwarden.tokens.base import TokenCounter

QUERY_SOURCE = "compact"
QUERY_SOURCE_HEADER = "x-contextwarden-query-source"


@dataclass(frozen=True, slots=True)
class LLMPolicy:
    """Sizes of an LLM summary request, each a documented default."""

    context_window: int = 200_000
    """Window of the *summarizer* model, used to decide when to summarize in chunks."""
    max_tokens: int = 8_192
    """Most tokens the model may write for one summary."""
    window_margin: float = 0.10
    """Share of the window left unused: our token counts are estimates."""
    tool_result_chars: int = 16_000
    """A tool result (or thinking) longer than this is quoted as head and tail in the transcript."""
    min_chunk_tokens: int = 1_000
    """Least room for transcript per request; below it summarizing is refused (window too small)."""
    verify: VerifyPolicy = field(default_factory=VerifyPolicy)
    """How verification quotes what the model left out."""
    deadline: float = DEADLINE
    """Seconds one summary may take, every request, retry and slow byte included; past it the
    attempt is a DeadlineExceeded (a SummarizerError, counted by the circuit breaker)."""
    too_long_shrink: float = 0.5
    """When the server answers "prompt is too long", the summary is planned once more with
    pieces of transcript this share of the refused request's size (never under
    ``min_chunk_tokens``) before it counts as failed."""
    chunk_tokens: int | None = None
    """Most transcript tokens per request (None: as many as the window holds); set for the
    second plan after "prompt is too long"."""


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """One request to the summarizer model: no tools, one user message."""

    system: str
    prompt: str
    max_tokens: int
    part: int = 1
    parts: int = 1
    query_source: str = QUERY_SOURCE


Plan = Generator[SummaryRequest, str, Summary]
BeforeRequest = Callable[..., object]


def plan(
    messages: Sequence[Message],
    instructions: str | None,
    policy: LLMPolicy,
    counter: TokenCounter,
) -> Plan:
    """Yield each request, receive each reply text, return the verified Summary."""
    facts = extract_facts(messages)
    chunks = chunk_transcript(messages, instructions, policy, counter)
    previous: str | None = None
    for part, chunk in enumerate(chunks, start=1):
        prompt = build_prompt(
            chunk, instructions=instructions, previous=previous, part=part, parts=len(chunks)
        )
        previous = yield SummaryRequest(SYSTEM_PROMPT, prompt, policy.max_tokens, part, len(chunks))
    assert previous is not None  # chunk_transcript returns at least one chunk
    return verified_summary(previous, facts, counter, requests=len(chunks), policy=policy.verify)


def chunk_transcript(
    messages: Sequence[Message],
    instructions: str | None,
    policy: LLMPolicy,
    counter: TokenCounter,
) -> list[str]:
    """The transcript in as few pieces as fit the summarizer's window, in order.

    One piece when it all fits beside the prompt and the answer; otherwise each piece leaves room
    for the previous part's summary too. A single message larger than a piece is split into
    consecutive pieces.
    """
    entries = render_transcript(messages, result_chars=policy.tool_result_chars)
    usable = int(policy.context_window * (1 - policy.window_margin)) - policy.max_tokens
    fixed = counter.count_text(SYSTEM_PROMPT) + counter.count_text(
        build_prompt("", instructions=instructions, previous="", part=2, parts=2)
    )
    costs = [counter.count_text(e) + 1 for e in entries]
    cap = policy.chunk_tokens if policy.chunk_tokens is not None else usable
    if sum(costs) <= min(usable - fixed, cap):
        return ["\n\n".join(entries)]
    room = min(usable - fixed - policy.max_tokens, cap)
    if room < policy.min_chunk_tokens:
        raise SummarizerError(
            f"the summarizer's window ({policy.context_window} tokens) leaves {room} tokens for "
            f"the transcript after the prompt and {policy.max_tokens} answer tokens; use a model "
            "with a larger context_window or lower max_tokens"
        )
    return _pack(entries, costs, room)


def _pack(entries: list[str], costs: list[int], room: int) -> list[str]:
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for entry, cost in zip(entries, costs, strict=True):
        if cost > room:
            pieces = _split(entry, math.ceil(cost / room))
        else:
            pieces = [entry]
        for piece in pieces:
            piece_cost = math.ceil(cost / len(pieces))
            if current and used + piece_cost > room:
                chunks.append("\n\n".join(current))
                current, used = [], 0
            current.append(piece)
            used += piece_cost
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def _split(entry: str, count: int) -> list[str]:
    """``entry`` in ``count`` consecutive pieces, each labelled so the model can join them."""
    size = math.ceil(len(entry) / count)
    return [
        f"[piece {i + 1} of {count} of the next message]\n{entry[i * size : (i + 1) * size]}"
        for i in range(count)
    ]


def drive(steps: Plan, send: Callable[[SummaryRequest], str]) -> Summary:
    """Run a plan with a blocking ``send``."""
    try:
        request = next(steps)
        while True:
            request = steps.send(send(request))
    except StopIteration as done:
        result: Summary = done.value
        return result


async def adrive(steps: Plan, send: Callable[[SummaryRequest], Awaitable[str]]) -> Summary:
    """Run a plan with an awaited ``send``."""
    try:
        request = next(steps)
        while True:
            request = steps.send(await send(request))
    except StopIteration as done:
        result: Summary = done.value
        return result


def request_history(request: SummaryRequest) -> object:
    """The request as a ConversationHistory, for a ``before_request`` callback."""
    from contextwarden.history import ConversationHistory

    history = ConversationHistory(system=request.system)
    history.add_user_message(request.prompt)
    return history


class LLMOptions(TypedDict, total=False):
    """The keyword options every LLM summarizer takes (``LLMSummarizer``'s, for subclasses that
    add their own and pass these on)."""

    base_url: str | None
    api_key: str | None
    timeout: float
    max_retries: int
    max_tokens: int
    context_window: int | None
    counter: TokenCounter | None
    policy: LLMPolicy | None
    before_request: BeforeRequest | None
    deadline: float | None


class LLMSummarizer(ABC):
    """Base of the provider summarizers: ``summarize`` and ``asummarize`` over one plan.

    Subclasses name their SDK (``sdk``, also the extra that installs it), its client classes and
    base error, and say how a request is sent (``_arguments``, ``_endpoint``) and a reply read
    (``_reply_text``). ``base_url``, ``api_key`` and ``timeout`` go to the SDK client;
    ``max_retries`` retries are ours, and the whole summary keeps to ``deadline`` seconds
    (``LLMPolicy.deadline``; see ``summarizers.deadline``). What still fails is a
    SummarizerError whose ``__cause__`` is the SDK's error.
    ``context_window`` (``None``: the provider's ``default_context_window``) and ``max_tokens``
    size the requests unless a ``policy`` is given.
    """

    query_source = QUERY_SOURCE
    sdk: ClassVar[str]
    """The SDK module to import on construction, and the extra that installs it."""
    default_context_window: ClassVar[int] = 200_000
    """Window of the provider's usual models, the default for chunking."""
    clients: ClassVar[tuple[str, str]]
    """Names of the SDK's blocking and async client classes."""
    sdk_error: ClassVar[str]
    """Name of the SDK's base error class."""
    label: ClassVar[str]
    """How errors name the API: "the {label} API answered HTTP 500"."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        max_tokens: int = 8_192,
        context_window: int | None = None,
        counter: TokenCounter | None = None,
        policy: LLMPolicy | None = None,
        before_request: BeforeRequest | None = None,
        deadline: float | None = None,
    ) -> None:
        if not model:
            raise ValueError("model is required, e.g. model='claude-sonnet-4-5'")
        window = context_window if context_window is not None else self.default_context_window
        self.model = model
        self.policy = policy or LLMPolicy(context_window=window, max_tokens=max_tokens)
        if deadline is not None:
            self.policy = replace(self.policy, deadline=budget(deadline))
        self.counter: TokenCounter = counter or _heuristic()
        self.before_request = before_request
        self.base_url, self.api_key = base_url, api_key
        self.timeout, self.max_retries = timeout, max_retries
        self._sdk: Any = require(self.sdk, self.sdk)

    def _client(self, deadline: Deadline, *, blocking: bool) -> Any:
        """A new SDK client whose HTTP transport keeps to ``deadline``; retries are ours
        (``deadline.retry_wait``), never the SDK's, which waits whatever a server asks."""
        http = http_module(self._sdk)
        if blocking:
            http_client = self._sdk.DefaultHttpxClient(transport=DeadlineTransport(http, deadline))
        else:
            transport = AsyncDeadlineTransport(http, deadline)
            http_client = self._sdk.DefaultAsyncHttpxClient(transport=transport)
        return getattr(self._sdk, self.clients[0 if blocking else 1])(
            base_url=self.base_url,
            api_key=self.api_key,
            timeout=self.timeout,
            max_retries=0,
            http_client=http_client,
        )

    def summarize(self, messages: Sequence[Message], *, instructions: str | None = None) -> Summary:
        """A verified nine-section summary within ``policy.deadline``; SummarizerError on any
        failure. A "prompt is too long" answer is retried once in smaller chunks."""
        deadline = Deadline(self.policy.deadline)

        def send(request: SummaryRequest) -> str:
            return self._checked_send(request, deadline)

        try:
            return drive(plan(messages, instructions, self.policy, self.counter), send)
        except PromptTooLongError as exc:
            smaller = self._smaller(exc)
            return drive(plan(messages, instructions, smaller, self.counter), send)

    async def asummarize(
        self, messages: Sequence[Message], *, instructions: str | None = None
    ) -> Summary:
        """``summarize`` with the provider's async client."""
        deadline = Deadline(self.policy.deadline)

        async def send(request: SummaryRequest) -> str:
            return await self._checked_asend(request, deadline)

        try:
            return await adrive(plan(messages, instructions, self.policy, self.counter), send)
        except PromptTooLongError as exc:
            smaller = self._smaller(exc)
            return await adrive(plan(messages, instructions, smaller, self.counter), send)

    def _smaller(self, exc: PromptTooLongError) -> LLMPolicy:
        """The policy for the second try: pieces a share of the refused request's size."""
        policy = self.policy
        pieces = max(policy.min_chunk_tokens, int(exc.tokens * policy.too_long_shrink))
        return replace(policy, chunk_tokens=pieces)

    def _checked_send(self, request: SummaryRequest, deadline: Deadline) -> str:
        self._announce(request)
        return self._send(request, deadline)

    async def _checked_asend(self, request: SummaryRequest, deadline: Deadline) -> str:
        self._announce(request)
        return await self._asend(request, deadline)

    def _announce(self, request: SummaryRequest) -> None:
        if self.before_request is not None:
            self.before_request(request_history(request), query_source=request.query_source)

    # A client per request: requests are rare and slow, and an async client must not outlive
    # the event loop it was made in.
    def _send(self, request: SummaryRequest, deadline: Deadline) -> str:
        """Send one request with the blocking client, retrying within the deadline."""
        for attempt in range(self.max_retries + 1):
            try:
                with self._client(deadline, blocking=True) as client:
                    response = self._endpoint(client)(**self._arguments(request))
            except getattr(self._sdk, self.sdk_error) as exc:
                time.sleep(self._retry_or_raise(exc, attempt, request, deadline))
                continue
            return self._reply_text(response)
        raise AssertionError("unreachable: the last attempt raises")  # pragma: no cover

    async def _asend(self, request: SummaryRequest, deadline: Deadline) -> str:
        """Send one request with the async client, retrying within the deadline."""
        for attempt in range(self.max_retries + 1):
            try:
                async with self._client(deadline, blocking=False) as client:
                    response = await self._endpoint(client)(**self._arguments(request))
            except getattr(self._sdk, self.sdk_error) as exc:
                await asyncio.sleep(self._retry_or_raise(exc, attempt, request, deadline))
                continue
            return self._reply_text(response)
        raise AssertionError("unreachable: the last attempt raises")  # pragma: no cover

    def _retry_or_raise(
        self, exc: Exception, attempt: int, request: SummaryRequest, deadline: Deadline
    ) -> float:
        """Seconds to wait before the next attempt; raises the failure when there is none."""
        try:
            wait = retry_wait(exc, self._sdk, attempt, self.max_retries, deadline)
        except DeadlineExceeded as missed:
            raise missed from exc
        if wait is None:
            raise self._failure(exc, request, deadline) from exc
        return wait

    def _failure(
        self, exc: Exception, request: SummaryRequest, deadline: Deadline
    ) -> SummarizerError:
        if deadline.remaining() <= 0:
            return deadline.missed(f"last error: {type(exc).__name__}")
        if too_long(exc, self._sdk):
            tokens = self.counter.count_text(request.prompt)
            return PromptTooLongError(
                f"the {self.label} API refused the summary request as too long ({exc}); "
                f"its prompt held about {tokens} tokens",
                tokens,
            )
        if isinstance(exc, self._sdk.APITimeoutError):
            return SummarizerError(
                f"the {self.label} summary request timed out after {self.timeout} s"
            )
        if isinstance(exc, self._sdk.APIStatusError):
            return SummarizerError(
                f"the {self.label} API answered HTTP {exc.status_code}: {exc.message}"
            )
        return SummarizerError(f"the {self.label} summary request failed: {exc}")

    @abstractmethod
    def _arguments(self, request: SummaryRequest) -> dict[str, Any]:
        """Keyword arguments of the SDK call for ``request``."""

    @abstractmethod
    def _endpoint(self, client: Any) -> Callable[..., Any]:
        """The SDK method that sends a request on ``client``."""

    @abstractmethod
    def _reply_text(self, response: Any) -> str:
        """The summary text of ``response``, or SummarizerError when it is not usable."""


def _heuristic() -> TokenCounter:
    from contextwarden.tokens.heuristic import HeuristicCounter

    return HeuristicCounter()
