"""Adapters for agent frameworks: each converts the framework's messages to ours and back, and
plugs a ContextManager into the one place the framework offers for it, with state in a store.

One module per framework, each behind its own extra and imported only when used:
``integrations.langchain`` (``pip install 'contextwarden[langchain]'``),
``integrations.pydantic_ai`` (``[pydantic-ai]``) and ``integrations.openai_agents``
(``[openai-agents]``).
"""
