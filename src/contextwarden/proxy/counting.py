"""``POST /v1/messages/count_tokens`` for the managed conversation: the count a client asks
for is of what the proxy would send (the session's managed view plus the request's new
messages), as the real API counts after applying its own context edits. A request the proxy
cannot place in a session is counted as the client sent it."""

from __future__ import annotations

import json
from collections.abc import Mapping

from contextwarden.errors import ContextWardenError
from contextwarden.proxy.apis import ANTHROPIC, SESSION_HEADER
from contextwarden.proxy.matching import credential_scope, scoped
from contextwarden.proxy.sessions import Sessions
from contextwarden.proxy.wording import parse_body


def counted_body(sessions: Sessions, headers: Mapping[str, str], raw: bytes) -> bytes:
    """The count_tokens body to forward: ``raw`` with the managed conversation in place of the
    client's when the request continues a known session, else ``raw`` unchanged."""
    try:
        body = parse_body(raw)
        if not ANTHROPIC.managed(body):
            return raw
        incoming = ANTHROPIC.conversation(body, headers.get(SESSION_HEADER))
        key = scoped(incoming.key, credential_scope(headers))
        managed = sessions.preview(incoming, key)
    except ContextWardenError:
        return raw  # the upstream says what is wrong with it, in its own words
    if managed is None:
        return raw
    return json.dumps(ANTHROPIC.render(body, managed)).encode()
