"""``contextwarden proxy --upstream URL``: serve the model APIs with context management."""

from __future__ import annotations

import argparse
import errno
import socket
from dataclasses import asdict
from typing import Any

from contextwarden.cli.common import add_json_options, positive_float, positive_int, print_json
from contextwarden.errors import UsageError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "proxy",
        help="serve the Anthropic/OpenAI APIs, managing each conversation's context",
        description=(
            "Point an agent's ANTHROPIC_BASE_URL or OPENAI_BASE_URL here: every request is "
            "matched to its session, compacted to fit --window, and forwarded to --upstream. "
            "Every option can also be set as CONTEXTWARDEN_<OPTION> (e.g. CONTEXTWARDEN_WINDOW)."
        ),
    )
    parser.add_argument("--upstream", help="root URL of the model API (CONTEXTWARDEN_UPSTREAM)")
    parser.add_argument("--listen", help="HOST:PORT to serve on (default 127.0.0.1:8787)")
    parser.add_argument("--window", type=positive_int, help="model context window in tokens")
    parser.add_argument("--store", help="postgresql://… DSN, JSONL directory or SQLite file")
    parser.add_argument("--schema", help="PostgreSQL schema of the store")
    parser.add_argument("--summarizer", choices=("structured", "upstream"))
    parser.add_argument("--summary-model", help="model --summarizer upstream asks")
    parser.add_argument(
        "--summary-api",
        choices=("anthropic", "openai"),
        help="the API --summarizer upstream speaks (default: anthropic; openai: "
        "/v1/chat/completions)",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        help="seconds each upstream phase may take: connect, send, each streamed chunk, a whole "
        "non-streaming reply (default 600)",
    )
    parser.add_argument(
        "--admin-token",
        help="bearer token that opens /sessions, /sessions/{id} and /metrics; without one they "
        "are off (CONTEXTWARDEN_ADMIN_TOKEN; prefer the variable: flags show in ps)",
    )
    parser.add_argument(
        "--max-body",
        type=positive_int,
        help="largest request body in bytes, refused with 413 (default 33554432, 32 MiB)",
    )
    parser.add_argument(
        "--max-sessions",
        type=positive_int,
        help="session histories kept in memory; the least recently used beyond it is reloaded "
        "from the store on its next request (default 1000)",
    )
    parser.add_argument(
        "--client-timeout",
        type=positive_float,
        help="seconds a client may take to send a request's headers, its body, or take each "
        "reply chunk (default 60)",
    )
    parser.add_argument(
        "--max-connections",
        type=positive_int,
        help="connections and requests served at once; more are answered 503 (default 256)",
    )
    parser.add_argument(
        "--cache",
        choices=("auto", "off"),
        help="auto (default): plan compaction for the prompt cache and add cache breakpoints "
        "to Anthropic requests that carry none; off: neither",
    )
    parser.add_argument(
        "--recall",
        action="store_const",
        const=True,
        help="once a session was compacted, offer the model a recall tool and answer it from "
        "the session's log, unseen by the agent (CONTEXTWARDEN_RECALL; default off)",
    )
    add_json_options(parser, "print the resolved options as JSON, then serve")
    parser.add_argument(
        "--check", action="store_true", help="resolve and print the options, do not serve"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from contextwarden.proxy import ProxyConfig, serve
    from contextwarden.proxy.serve import warn_if_exposed

    config = ProxyConfig.from_env(
        upstream=args.upstream,
        listen=args.listen,
        window=args.window,
        store=args.store,
        schema=args.schema,
        summarizer=args.summarizer,
        summary_model=args.summary_model,
        summary_api=args.summary_api,
        timeout=args.timeout,
        cache=args.cache,
        admin_token=args.admin_token,
        max_body=args.max_body,
        max_sessions=args.max_sessions,
        client_timeout=args.client_timeout,
        max_connections=args.max_connections,
        recall=args.recall,
    )
    options = {
        **asdict(config),
        "store": config.store_location,
        "admin_token": "set" if config.admin_token else "",
    }
    if args.json or args.check:
        print_json(options, args)
    if args.check:
        warn_if_exposed(config)  # serve() says it when it starts
    if not args.check:
        ensure_free(config.listen)
        serve(config)
    return 0


def ensure_free(listen: str) -> None:
    """UsageError, in one line, when another process holds the port (uvicorn would log a
    traceback-like error and exit 3)."""
    from contextwarden.proxy.config import host_port

    host, port = host_port(listen)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            raise UsageError(
                f"{listen} is in use by another process; stop it, or listen elsewhere with "
                "--listen HOST:PORT (or CONTEXTWARDEN_LISTEN)"
            ) from None
