"""The proxy attacked as a hostile client and a faulty upstream would: one test per attack, each
against a real uvicorn proxy on 127.0.0.1 and an upstream on 127.0.0.1 (scripted or hostile)."""

from __future__ import annotations

import http.client
import json
import select
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from contextwarden.cli import main
from contextwarden.errors import ProxyConfigError
from contextwarden.policy import ContextPolicy
from contextwarden.proxy import ProxyConfig, connections
from contextwarden.proxy.connections_httptools import HttpToolsDeadline
from contextwarden.proxy.matching import credential_scope, scoped
from contextwarden.proxy.serve import header_deadline
from contextwarden.summarizers.llm import QUERY_SOURCE_HEADER
from tests.hostile_upstream import HEADER_END, Seen, hostile, message, reply_json
from tests.proxy_harness import (
    ADMIN_TOKEN,
    admin_get,
    check_request,
    opened,
    proxy_server,
    text,
    upstream,
)

WINDOW = 8_000
LIMIT = ContextPolicy(context_window=WINDOW).effective_window
KEY = "sk-ant-safety-test-key"
ADMIN_PATHS = ("/sessions", "/sessions/s1", "/metrics")


def config(url: str, tmp_path: Path, **options: Any) -> ProxyConfig:
    store = str(tmp_path / "proxy.sqlite3")
    return ProxyConfig(upstream=url, window=WINDOW, store=store, **options)


def body(content: Any = "hi") -> dict[str, Any]:
    return {"model": "m", "max_tokens": 20, "messages": [{"role": "user", "content": content}]}


def say(path: str, body: dict[str, Any]) -> Any:
    return text("ok")


@pytest.fixture(params=["httptools", "h11"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The header deadline on each of uvicorn's parsers: httptools where installed, h11 else."""
    monkeypatch.setattr(connections, "FAST_PARSER", request.param == "httptools")
    return str(request.param)


# ----------------------------------------------------------------------------- admin surface
def test_admin_views_are_off_without_a_token(tmp_path: Path) -> None:
    with upstream(say) as api, proxy_server(config(api.url, tmp_path)) as url:
        sent = httpx.post(f"{url}/v1/messages", json=body(), headers={"x-api-key": KEY})
        shown = [httpx.get(f"{url}{p}", headers={"host": "evil.example"}) for p in ADMIN_PATHS]
        guessed = [admin_get(url, p) for p in ADMIN_PATHS]
    assert sent.status_code == 200
    assert [r.status_code for r in shown + guessed] == [404] * 6


def test_admin_views_answer_only_to_the_token(tmp_path: Path) -> None:
    options = {"admin_token": ADMIN_TOKEN}
    with upstream(say) as api, proxy_server(config(api.url, tmp_path, **options)) as url:
        headers = {"x-api-key": KEY, "x-contextwarden-session": "s1"}
        assert httpx.post(f"{url}/v1/messages", json=body(), headers=headers).status_code == 200
        anonymous = [httpx.get(f"{url}{p}") for p in ADMIN_PATHS]
        wrong = [
            httpx.get(f"{url}{p}", headers={"authorization": f"Bearer {ADMIN_TOKEN[:-1]}x"})
            for p in ADMIN_PATHS
        ]
        keyed = [httpx.get(f"{url}{p}", headers={"x-api-key": ADMIN_TOKEN}) for p in ADMIN_PATHS]
        [stored] = admin_get(url, "/sessions").json()["sessions"]
        right = [admin_get(url, p) for p in ("/sessions", f"/sessions/{stored}", "/metrics")]
    assert [r.status_code for r in anonymous + wrong + keyed] == [401] * 9
    assert all(r.headers["www-authenticate"] == "Bearer" for r in anonymous)
    assert all("admin token" in r.json()["error"] for r in anonymous)
    assert [r.status_code for r in right] == [200] * 3
    assert stored == scoped("s1", credential_scope({"x-api-key": KEY}))
    assert right[1].json()["turns"] == 1
    assert "contextwarden_proxy_requests_total" in right[2].text


@pytest.mark.parametrize(
    ("listen", "token", "warned"),
    [
        ("0.0.0.0:8787", "", True),
        ("192.0.2.7:8787", "", True),
        ("0.0.0.0:8787", ADMIN_TOKEN, False),
        ("127.0.0.1:8787", "", False),
        ("[::1]:8787", "", False),
    ],
)
def test_serving_beyond_loopback_without_a_token_warns(
    listen: str, token: str, warned: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = ["--admin-token", token] if token else []
    args = ["proxy", "--upstream", "http://127.0.0.1:9", "--listen", listen, "--check", *flags]
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 0
    captured = capsys.readouterr()
    assert ("beyond loopback, with no admin token" in captured.err) is warned
    assert ADMIN_TOKEN not in captured.out + captured.err  # the token is never printed


# ----------------------------------------------------------------------------- internal headers
def test_a_client_cannot_skip_management_with_an_internal_header(tmp_path: Path) -> None:
    turns: list[Any] = [{"role": "user", "content": "Read everything."}]
    for n in range(40):  # ~40K tokens of tool results into an 8K window
        use = {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"n": n}}
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "x = 1\n" * 700}
        turns += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    request = {"model": "m", "max_tokens": 20, "messages": turns}
    headers = {"x-api-key": KEY, QUERY_SOURCE_HEADER: "compact", "x-contextwarden-other": "1"}
    with upstream(say) as api, proxy_server(config(api.url, tmp_path)) as url:
        reply = httpx.post(f"{url}/v1/messages", json=request, headers=headers, timeout=60)
    assert reply.status_code == 200, reply.text
    [(_, sent_headers, sent)] = api.requests
    check_request(sent, LIMIT)  # managed into the window, whatever the header said
    assert not any(k.startswith("x-contextwarden-") for k in sent_headers)
    assert sent_headers["x-api-key"] == KEY


# ----------------------------------------------------------------------------- paths
@pytest.mark.parametrize(
    "path",
    [
        "/v1/models/..%2F..%2Fmetrics",
        "/v1/models/%2e%2e/%2e%2e/metrics",
        "/v1/models/../../metrics",
        "/v1/models/a%5C..%5C..%5Cmetrics",
        "/v1/models/a%2F%2Fb",
        "/v1/models/%00",
    ],
)
def test_pass_through_paths_stay_under_the_api_prefix(tmp_path: Path, path: str) -> None:
    """Refused in the caller's error shape: Anthropic's for a client that sends
    ``anthropic-version``, OpenAI's for one that does not."""
    with upstream(say) as api, proxy_server(config(api.url, tmp_path)) as url:
        host, port = url.removeprefix("http://").split(":")
        replies = []
        for headers in ({"anthropic-version": "2023-06-01"}, {"authorization": "Bearer k"}):
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            conn.request("GET", path, headers=headers)  # as written: httpx would normalise it
            reply = conn.getresponse()
            replies.append((reply.status, json.loads(reply.read())))
            conn.close()
        plain = httpx.get(f"{url}/v1/models/scripted-1", headers={"x-api-key": KEY})
    [(status, error), (openai_status, openai_error)] = replies
    assert status == openai_status == 400
    assert error["type"] == "error" and "not a plain path under /v1/" in str(error)
    assert openai_error["error"]["type"] == "invalid_request_error"
    assert "not a plain path under /v1/" in openai_error["error"]["message"]
    assert [p for p, _, _ in api.requests] == ["/v1/models/scripted-1"]
    assert plain.status_code == 200


# ----------------------------------------------------------------------------- body size and pace
def test_a_body_over_the_limit_is_refused_with_413(tmp_path: Path) -> None:
    options = {"max_body": 1_000_000}
    big = body("a" * 1_200_000)

    def chunked() -> Any:
        data = json.dumps(big).encode()
        for i in range(0, len(data), 65536):
            yield data[i : i + 65536]

    with upstream(say) as api, proxy_server(config(api.url, tmp_path, **options)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        with pytest.raises(anthropic.APIStatusError) as raised:
            client.messages.create(**big)
        streamed = httpx.post(f"{url}/v1/messages", content=chunked(), headers={"x-api-key": KEY})
        counted = httpx.post(f"{url}/v1/messages/count_tokens", json=big)
        small = httpx.post(f"{url}/v1/messages", json=body("a" * 900_000))
    assert raised.value.status_code == 413
    assert raised.value.body["error"]["type"] == "request_too_large"  # type: ignore[index]
    assert "1,000,000 bytes (--max-body)" in raised.value.message
    assert streamed.status_code == 413 and counted.status_code == 413
    assert small.status_code == 200
    assert len(api.requests) == 1  # only the small one went upstream


def test_a_client_sending_its_body_slowly_is_cut_off(tmp_path: Path, parser: str) -> None:
    options = {"client_timeout": 1.0}
    with upstream(say) as api, proxy_server(config(api.url, tmp_path, **options)) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            head = "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n"
            sock.sendall(head.encode() + b'{"model": "m", ')
            started = time.monotonic()
            answer = sock.recv(65536)
            waited = time.monotonic() - started
            while b"\r\n\r\n" in answer and not answer.endswith(b"}"):  # headers first, body after
                more = sock.recv(65536)
                if not more:
                    break
                answer += more
    assert answer.startswith(b"HTTP/1.1 408")
    assert b"--client-timeout" in answer
    assert waited < 5
    assert api.requests == []


def slowloris(host: str, port: int, pause: float, limit: float) -> tuple[bytes, float]:
    """Send a request's headers a byte every ``pause`` seconds until the proxy answers or ends
    the connection: what it answered (b"" when it reset the connection while a byte was on its
    way), and after how many seconds (``limit`` at most)."""
    headers = f"POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: {KEY}\r\n"
    headers += "x-pad: " + "a" * 1000
    started = time.monotonic()
    with socket.create_connection((host, port), timeout=limit) as sock:
        try:
            for byte in headers.encode():
                sock.sendall(bytes([byte]))
                readable, _, _ = select.select([sock], [], [], pause)
                if readable or time.monotonic() - started > limit:
                    break
            return sock.recv(65536), time.monotonic() - started
        except OSError:
            return b"", time.monotonic() - started


def test_a_client_sending_its_headers_slowly_is_cut_off_and_others_are_served(
    tmp_path: Path, parser: str
) -> None:
    options = {"client_timeout": 1.0}
    with upstream(say) as api, proxy_server(config(api.url, tmp_path, **options)) as url:
        host, port = url.removeprefix("http://").split(":")
        with ThreadPoolExecutor(2) as pool:
            slow = pool.submit(slowloris, host, int(port), 0.05, 10.0)
            idle = pool.submit(slowloris, host, int(port), 10.0, 10.0)  # one byte, then nothing
            with httpx.Client(base_url=url, headers={"x-api-key": KEY}) as client:
                kept_alive = []  # one connection, each request's headers after a pause
                for _ in range(3):
                    kept_alive.append(client.post("/v1/messages", json=body()).status_code)
                    time.sleep(0.6)
            (answer, waited), (told, idle_waited) = slow.result(), idle.result()
    assert told.startswith(b"HTTP/1.1 408") and b"--client-timeout" in told
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408")
    # cut off at the 1 s deadline, not at once (asyncio may run a timer a little early)
    assert 0.9 <= waited < 5 and 0.9 <= idle_waited < 5
    assert kept_alive == [200, 200, 200]  # 1.8 s on one connection: the deadline is per request
    assert len(api.requests) == 3


def test_requests_beyond_max_connections_are_answered_503(tmp_path: Path, parser: str) -> None:
    options = {"client_timeout": 1.0, "max_connections": 2}
    with upstream(say) as api, proxy_server(config(api.url, tmp_path, **options)) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))):  # held open, sending nothing
            time.sleep(0.2)
            crowded = httpx.post(f"{url}/v1/messages", json=body(), headers={"x-api-key": KEY})
            time.sleep(1.5)  # its header deadline closes the idle one
            freed = httpx.post(f"{url}/v1/messages", json=body(), headers={"x-api-key": KEY})
    assert crowded.status_code == 503
    assert freed.status_code == 200
    assert len(api.requests) == 1


def test_the_proxy_serves_on_httptools_where_it_is_installed(tmp_path: Path) -> None:
    assert issubclass(header_deadline(1.0), HttpToolsDeadline)
    pipelined = b"".join(  # two requests in one send: both answered, in order, on httptools
        f"GET /v1/models?n={n} HTTP/1.1\r\nhost: x\r\nx-api-key: {KEY}\r\n\r\n".encode()
        for n in (1, 2)
    )
    with upstream(say) as api, proxy_server(config(api.url, tmp_path, client_timeout=1.0)) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(pipelined)
            answer = b""  # until the deadline, armed after the second response, closes it
            while more := sock.recv(65536):
                answer += more
    assert answer.count(b"HTTP/1.1 200") == 2
    assert answer.index(b"HTTP/1.1 408") > answer.rindex(b"HTTP/1.1 200")


def test_the_upstream_gets_the_callers_headers_and_the_proxy_keeps_no_cookie_or_redirect(
    tmp_path: Path,
) -> None:
    def answer(seen: Seen, sock: socket.socket) -> None:
        if seen.path == "/v1/models":
            head = "HTTP/1.1 307 Temporary Redirect\r\nlocation: /v1/elsewhere\r\ncontent-length: 0"
            sock.sendall(head.encode() + HEADER_END)
            return
        data = json.dumps(message()).encode()
        head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nset-cookie: caller=one\r\n"
        sock.sendall(f"{head}content-length: {len(data)}".encode() + HEADER_END + data)

    with hostile(answer) as api, proxy_server(config(api.url, tmp_path)) as url:
        sent = {"x-api-key": KEY, "expect": "100-continue"}  # the proxy has the body already
        first = httpx.post(f"{url}/v1/messages", json=body(), headers=sent)
        other = httpx.post(f"{url}/v1/messages", json=body("x"), headers={"x-api-key": "sk-2"})
        moved = httpx.get(f"{url}/v1/models", headers={"x-api-key": KEY})
    assert first.headers["set-cookie"] == "caller=one" and other.status_code == 200
    assert "cookie" not in api.seen[1].headers  # one caller's cookie never goes with another's
    assert api.seen[0].headers["user-agent"] == first.request.headers["user-agent"]
    assert "expect" not in api.seen[0].headers
    assert moved.status_code == 307 and moved.headers["location"] == "/v1/elsewhere"
    assert [s.path for s in api.seen] == ["/v1/messages", "/v1/messages", "/v1/models"]


def test_max_connections_is_an_option_and_must_be_positive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(ProxyConfigError, match="max_connections must be a positive number"):
        ProxyConfig(upstream="http://127.0.0.1:9", max_connections=0)
    with pytest.raises(SystemExit) as exited:
        main(["proxy", "--upstream", "http://127.0.0.1:9", "--max-connections", "3", "--check"])
    assert exited.value.code == 0
    assert json.loads(capsys.readouterr().out)["max_connections"] == 3


def test_a_reader_that_stops_reading_is_cut_off_and_the_upstream_stream_ends(
    tmp_path: Path,
) -> None:
    chunk = b"event: ping\ndata: {}\n\n" * 3000

    def flood(seen: Seen, sock: socket.socket) -> None:
        head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
        sock.sendall(head.encode())
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            sock.sendall(chunk)
        raise AssertionError("the stream to a reader that stopped was never cut")

    with hostile(flood) as api, proxy_server(config(api.url, tmp_path, client_timeout=1.0)) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect((host, int(port)))
            request = json.dumps({**body(), "stream": True}).encode()
            head = f"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: {len(request)}"
            sock.sendall(head.encode() + b"\r\n\r\n" + request)
            deadline = time.monotonic() + 20
            while not api.broken_writes and time.monotonic() < deadline:
                time.sleep(0.1)
    assert api.broken_writes == ["/v1/messages"]


# ----------------------------------------------------------------------------- faulty upstreams
def test_a_dripping_reply_ends_at_the_timeout(tmp_path: Path) -> None:
    def drip(seen: Seen, sock: socket.socket) -> None:
        data = json.dumps(message()).encode()
        head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(data)}"
        sock.sendall(head.encode() + b"\r\n\r\n")
        for byte in data:  # one byte every 0.2 s: each read is quick, the whole never is
            sock.sendall(bytes([byte]))
            time.sleep(0.2)

    with hostile(drip) as api, proxy_server(config(api.url, tmp_path, timeout=1.5)) as url:
        started = time.monotonic()
        reply = httpx.post(f"{url}/v1/messages", json=body(), timeout=30)
        waited = time.monotonic() - started
    assert reply.status_code == 504
    assert reply.json()["error"]["type"] == "timeout_error"
    message_ = reply.json()["error"]["message"]
    assert "took longer than --timeout 1.5 s while sending its whole reply" in message_
    assert waited < 5


def test_an_upstream_reset_says_what_happened(tmp_path: Path) -> None:
    def reset(seen: Seen, sock: socket.socket) -> None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()  # RST, no reply

    with hostile(reset) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        with pytest.raises(anthropic.APIStatusError) as raised:
            client.messages.create(**body())
    assert raised.value.status_code == 502
    said = raised.value.message
    assert f"the upstream {api.url} broke the connection before its reply's headers" in said
    assert not said.rstrip().endswith(":")


def test_a_stream_cut_mid_way_ends_with_an_error_event(tmp_path: Path) -> None:
    start = {"type": "message_start", "message": {**message(), "content": []}}

    def cut(seen: Seen, sock: socket.socket) -> None:
        event = f"event: message_start\ndata: {json.dumps(start)}\n\n".encode()
        head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked"
        sock.sendall(head.encode() + b"\r\n\r\n" + f"{len(event):x}\r\n".encode() + event)
        sock.sendall(b"\r\n40\r\nevent: ping\n")  # a chunk promised, never finished
        sock.shutdown(socket.SHUT_RDWR)

    with hostile(cut) as api, proxy_server(config(api.url, tmp_path)) as url:
        client = opened(anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0))
        with pytest.raises(anthropic.APIStatusError) as raised:
            with client.messages.stream(**body()) as events:
                for _ in events:
                    pass
    assert "broke the connection while streaming its reply" in str(raised.value)


def test_a_huge_event_without_separators_stalls_no_one(tmp_path: Path) -> None:
    flood = b"data: " + b"a" * (20 * 1024 * 1024)

    def behave(seen: Seen, sock: socket.socket) -> None:
        if "flood" not in json.dumps(seen.body):
            reply_json(sock, message())
            return
        head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
        sock.sendall(head.encode())
        for i in range(0, len(flood), 16384):
            sock.sendall(flood[i : i + 16384])
        sock.close()

    def others(url: str, until: float) -> list[float]:
        waits: list[float] = []
        with httpx.Client(timeout=30) as client:
            while time.monotonic() < until or not waits:
                started = time.monotonic()
                assert client.post(f"{url}/v1/messages", json=body("hello")).status_code == 200
                waits.append(time.monotonic() - started)
        return waits

    with hostile(behave) as api, proxy_server(config(api.url, tmp_path)) as url:
        with ThreadPoolExecutor(2) as pool:
            flooded = pool.submit(
                httpx.post, f"{url}/v1/messages", json=body("flood") | {"stream": True}, timeout=60
            )
            waits = pool.submit(others, url, time.monotonic() + 3).result()
            received = flooded.result()
    assert received.status_code == 200 and received.content == flood  # passed on unchanged
    assert max(waits) < 1.0, f"other clients waited up to {max(waits):.2f} s"
