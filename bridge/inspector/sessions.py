"""Log-in sessions and cross-site request protection of the web inspector.

A person logs in by pasting a token into a form (never a URL): the agent (API) token gives
read access, the review token also settles reviews. The session id lives in an HttpOnly,
``SameSite=Strict`` cookie scoped to ``/ui``. Every mutating form carries the session's
CSRF token, compared in constant time, and a request whose ``Origin`` names another site is
refused; the log-in form itself uses a double-submit token (cookie and field must agree).
Sessions live in the sidecar's memory: a restart logs everyone out.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from bridge.auth import Tokens

SESSION_COOKIE = "dynmem_ui"
LOGIN_COOKIE = "dynmem_login"
SESSION_TTL_S = 12 * 3600  # a working day; then log in again
MAX_SESSIONS = 256

Role = Literal["agent", "review"]


@dataclass
class UiSession:
    role: Role
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    started_s: float = field(default_factory=time.monotonic)

    @property
    def can_review(self) -> bool:
        return self.role == "review"


class Sessions:
    """Session ids to sessions, bounded and expiring."""

    def __init__(self, tokens: Tokens, ttl_s: float = SESSION_TTL_S) -> None:
        self.tokens = tokens
        self.ttl_s = ttl_s
        self._by_id: dict[str, UiSession] = {}

    def role_of(self, token: str) -> Role | None:
        """Which role a pasted token grants (None: neither token)."""
        token = token.strip()
        if not token:
            return None
        if hmac.compare_digest(token, self.tokens.review):
            return "review"
        if hmac.compare_digest(token, self.tokens.api):
            return "agent"
        return None

    def start(self, role: Role) -> tuple[str, UiSession]:
        self._expire()
        while len(self._by_id) >= MAX_SESSIONS:
            self._by_id.pop(next(iter(self._by_id)))  # the oldest
        sid = secrets.token_urlsafe(32)
        sess = self._by_id[sid] = UiSession(role=role)
        return sid, sess

    def get(self, sid: str | None) -> UiSession | None:
        if not sid:
            return None
        sess = self._by_id.get(sid)
        if sess is None or time.monotonic() - sess.started_s > self.ttl_s:
            self._by_id.pop(sid, None)
            return None
        return sess

    def end(self, sid: str | None) -> None:
        if sid:
            self._by_id.pop(sid, None)

    def _expire(self) -> None:
        now = time.monotonic()
        for sid in [s for s, v in self._by_id.items() if now - v.started_s > self.ttl_s]:
            del self._by_id[sid]


def same_origin(origin: str | None, host: str | None) -> bool:
    """A missing Origin is allowed (the CSRF token still decides); a present one must name this host."""
    if not origin:
        return True
    if origin == "null" or not host:
        return False
    return urlsplit(origin).netloc.lower() == host.lower()


def tokens_match(given: str | None, expected: str | None) -> bool:
    return bool(given) and bool(expected) and hmac.compare_digest(str(given), str(expected))
