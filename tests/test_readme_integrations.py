"""The README's framework snippets run as written, with the reader's ``model`` and ``tools``
stood in for by scripted ones (each framework's own test model, or a real client against a
scripted server), and leave their conversation in the default store."""

from __future__ import annotations

import gc
import re
from pathlib import Path
from typing import Any

import pytest

from contextwarden.stores import DATA_DIR_ENV, SqliteStore

pytestmark = pytest.mark.usefixtures("close_event_loop")
README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def snippet(after: str) -> str:
    """The first python block after the paragraph starting with ``after``."""
    section = README[README.index("## Use it with your framework") :]
    block = re.search(r"```python\n(.*?)```", section[section.index(after) :], re.DOTALL)
    assert block is not None, after
    return block.group(1)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    return tmp_path


def sessions(home: Path) -> list[str]:
    store = SqliteStore(home / "sessions.db")
    try:
        return store.list_sessions()
    finally:
        store.close()


def test_langchain_snippet(home: Path) -> None:
    pytest.importorskip("langchain.agents")
    from tests.test_integration_langchain import ScriptedChatModel, read_file, script

    namespace: dict[str, Any] = {
        "model": ScriptedChatModel(responses=script(3)),
        "tools": [read_file],
    }
    exec(snippet("**LangChain / LangGraph**"), namespace)
    assert sessions(home) == ["langgraph-t1"]


def test_pydantic_ai_snippet(home: Path) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.models.function import FunctionModel

    from tests.test_integration_pydantic_ai import ScriptedModel

    namespace: dict[str, Any] = {"model": FunctionModel(ScriptedModel(0))}
    exec(snippet("**pydantic-ai**"), namespace)
    assert namespace["result"].output == "all read"
    assert len(sessions(home)) == 1


# A user's script ends without closing its AsyncOpenAI client; so does the snippet.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_openai_agents_snippet(home: Path) -> None:
    pytest.importorskip("agents")
    from agents import OpenAIResponsesModel
    from openai import AsyncOpenAI

    from tests.servers import serving
    from tests.test_integration_openai_agents import ScriptedResponses

    with serving("/v1/responses", ScriptedResponses(reads=0)) as api:
        client = AsyncOpenAI(base_url=f"{api.url}/v1", api_key="sk-test", max_retries=0)
        namespace: dict[str, Any] = {
            "model": OpenAIResponsesModel(model="gpt-4.1", openai_client=client)
        }
        exec(snippet("**OpenAI Agents SDK**"), namespace)
    assert namespace["result"].final_output == "all read"
    assert sessions(home) == ["user-42"]
    namespace.clear()
    del client
    gc.collect()  # the unclosed client's warnings are raised here, under this test's filters
