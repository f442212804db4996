"""The one redaction gate for text that reaches storage but is not a turn's body: sessions,
request ids, repair signals, miss queries, receipts (issue 17, failure 3).

The rules that find secrets are ``engine.redact``'s; this module only decides how each kind
of stored text goes through them. Free text is redacted in place. An identifier that holds
a secret is replaced by a hash of itself, so that it stays unique and idempotency keys keep
working (two request ids that differ only in their secret must not collapse into one).
"""

from __future__ import annotations

import hashlib
import re

from engine.redact import contains_secret, redact

_SEPARATOR = re.compile(r"[-:./=@,;|+#~ ]+")


def stored_text(text: str) -> str:
    """Free text on its way to a store (a miss query, a signal, a session name)."""
    return redact(text)


def _id_holds_secret(value: str) -> bool:
    """Whether an identifier holds a secret, also glued to a prefix (``req-ghp_...``,
    ``sess:AKIA...``): the redactor's rules want a word boundary before a token, and ids
    join their parts with ``-``, ``:``, ``.`` or ``/``. Each part after a separator is checked."""
    if contains_secret(value):
        return True
    starts = {m.end() for m in _SEPARATOR.finditer(value)}
    return any(contains_secret(value[i:]) for i in sorted(starts) if i < len(value))


def stored_id(value: str) -> str:
    """An identifier on its way to a store: unchanged unless it holds a secret, then a stable hash."""
    if not value or not _id_holds_secret(value):
        return value
    return "redacted-" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:32]
