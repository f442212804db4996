"""Bearer tokens: one for the API, a separate one for human review decisions (mode 0600)."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from engine.errors import AuthError, Forbidden

TOKEN_FILE = "token"
REVIEW_TOKEN_FILE = "review_token"


def ensure_token(path: Path) -> str:
    """Read the token at ``path``, creating it (mode 0600) on first start."""
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
    os.chmod(path, 0o600)
    return path.read_text(encoding="utf-8").strip()


class Tokens:
    def __init__(self, data_dir: Path) -> None:
        self.api = ensure_token(Path(data_dir) / TOKEN_FILE)
        self.review = ensure_token(Path(data_dir) / REVIEW_TOKEN_FILE)

    @staticmethod
    def _bearer(header: str | None) -> str:
        if not header or not header.lower().startswith("bearer "):
            raise AuthError("missing bearer token (Authorization: Bearer <token from the token file>)")
        return header[7:].strip()

    def check_api(self, header: str | None) -> None:
        given = self._bearer(header)
        if not (hmac.compare_digest(given, self.api) or hmac.compare_digest(given, self.review)):
            raise AuthError("wrong bearer token")

    def is_review(self, header: str | None) -> bool:
        try:
            return hmac.compare_digest(self._bearer(header), self.review)
        except AuthError:
            return False

    def check_review(self, header: str | None) -> None:
        given = self._bearer(header)
        if hmac.compare_digest(given, self.review):
            return
        if hmac.compare_digest(given, self.api):
            raise Forbidden("review decisions need the review token, not the API token")
        raise AuthError("wrong bearer token")
