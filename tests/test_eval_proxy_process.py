"""A proxy in a process of its own (``eval.proxy_process``): it answers once yielded, is gone
after the block, and one that cannot start says so instead of waiting out its start time."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from contextwarden.errors import ProxyConfigError
from contextwarden.eval.proxy_process import proxy_process
from tests.proxy_harness import text, upstream


def test_the_process_answers_and_is_stopped_after_the_block(tmp_path: Path) -> None:
    with upstream(lambda path, body: text("hello")) as api:
        options = ["--upstream", api.url, "--store", f"{tmp_path}/p.sqlite3"]
        with proxy_process(options) as (url, process):
            body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
            reply = httpx.post(f"{url}/v1/messages", json=body, headers={"x-api-key": "k"})
            assert reply.json()["content"] == [{"type": "text", "text": "hello"}]
        assert process.returncode is not None
    assert len(api.messages_requests()) == 1


def test_a_process_that_cannot_start_is_an_error_naming_its_exit() -> None:
    with pytest.raises(ProxyConfigError, match="exit code 2"):  # argparse's usage error
        with proxy_process(["--no-such-option"]):
            pass
