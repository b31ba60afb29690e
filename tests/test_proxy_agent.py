"""A real third-party agent through the proxy, unchanged: the OpenAI Agents SDK (Responses API)
runs a 14-step tool task whose history overflows an 8,000-token window, its model a scripted
upstream on 127.0.0.1. Every request the upstream receives is valid and fits."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from contextwarden.policy import ContextPolicy
from tests.proxy_harness import check_request, prompt_tokens, proxy_server, upstream
from tests.test_proxy import config, file_text, reader_script

agents = pytest.importorskip("agents")

WINDOW = 8_000
STEPS = 14


def test_openai_agents_sdk_runs_through_the_proxy(tmp_path: Path) -> None:
    from openai import AsyncOpenAI

    read_count: list[str] = []

    @agents.function_tool(name_override="Read")
    def read(file_path: str) -> str:
        """Read a file of the project."""
        read_count.append(file_path)
        return file_text(len(read_count))

    agents.set_tracing_disabled(True)
    path = "/v1/responses"
    with upstream(reader_script(STEPS)) as api, proxy_server(config(api.url, tmp_path)) as url:

        async def run() -> Any:
            async with AsyncOpenAI(
                base_url=f"{url}/v1", api_key="sk-agents-test", max_retries=0
            ) as client:
                model = agents.OpenAIResponsesModel(model="scripted-1", openai_client=client)
                agent = agents.Agent(
                    name="reader", instructions="Read every module.", tools=[read], model=model
                )
                return await agents.Runner.run(agent, "Summarize the project.", max_turns=STEPS + 5)

        result = asyncio.run(run())
    assert result.final_output == f"Read {STEPS} files."
    assert len(read_count) == STEPS
    bodies = api.messages_requests(path)
    assert len(bodies) == STEPS + 1
    limit = ContextPolicy(context_window=WINDOW).effective_window
    for body in bodies:
        check_request(body, limit, path)
    sent = result.to_input_list()[:-1]  # what the agent itself would have sent last
    assert prompt_tokens(bodies[-1], path) < prompt_tokens({"input": sent}, path) / 2
