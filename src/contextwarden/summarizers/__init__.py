"""Summarizers: turn the part of a conversation that compaction removes into a 9-section summary.

``StructuredSummarizer`` builds it from the transcript itself (offline, deterministic);
``AnthropicSummarizer`` and ``OpenAISummarizer`` ask a model and verify its answer against the
facts ``extract_facts`` finds. The SDKs are imported only when an LLM summarizer is created.
"""

from contextwarden.summarizers.anthropic import AnthropicSummarizer
from contextwarden.summarizers.base import SECTION_TITLES, AsyncSummarizer, Summarizer, Summary
from contextwarden.summarizers.deadline import DeadlineExceeded, PromptTooLongError
from contextwarden.summarizers.facts import Facts, extract_facts
from contextwarden.summarizers.llm import LLMPolicy, LLMSummarizer, SummaryRequest
from contextwarden.summarizers.openai import OpenAISummarizer
from contextwarden.summarizers.structured import StructuredSummarizer
from contextwarden.summarizers.structured_policy import StructuredPolicy
from contextwarden.summarizers.typed import user_messages

__all__ = [
    "SECTION_TITLES",
    "AnthropicSummarizer",
    "AsyncSummarizer",
    "DeadlineExceeded",
    "Facts",
    "LLMPolicy",
    "LLMSummarizer",
    "OpenAISummarizer",
    "PromptTooLongError",
    "StructuredPolicy",
    "StructuredSummarizer",
    "Summarizer",
    "Summary",
    "SummaryRequest",
    "extract_facts",
    "user_messages",
]
