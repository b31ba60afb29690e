"""The API payload converters: provider requests, responses, SDK objects and streams to our
``Message`` values and back (Anthropic Messages, OpenAI Chat Completions and Responses, the
Gemini API).

Pure functions below the history; provider-specific code lives only here and in ``summarizers/``.
Session files that agents write are read by ``formats/``, above the history.
"""
