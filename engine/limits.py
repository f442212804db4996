"""Size and time limits of a turn, the same at every entry (HTTP observe, CLI observe, replay).

Pure constants and checks: callers pass the clock reading in.
"""

from __future__ import annotations

from engine.errors import FutureTimestamp, PayloadTooLarge

MAX_PROJECT_CHARS = 512
MAX_SESSION_CHARS = 256
MAX_REQUEST_ID_CHARS = 256
MAX_USER_CHARS = 200_000
MAX_ASSISTANT_CHARS = 400_000
# A history line holding the largest turn: every character escaped as a JSON surrogate pair
# (12 bytes for 2 characters) fits in 6 bytes a character; 8 MiB covers both texts and the rest.
MAX_LINE_BYTES = 8 * 1024 * 1024
# A turn may be dated a little ahead of this machine's clock (another machine's clock, a
# plugin on a laptop that drifted); beyond this it would stay "latest" for ever and make
# every later value of the same fact stored already superseded (issue 17, failure 4).
MAX_FUTURE_SKEW_MS = 5 * 60 * 1000


def check_turn_size(user: str, assistant: str, session: str, request_id: str | None, project: str) -> None:
    """Raise ``PayloadTooLarge`` naming the first field over its limit."""
    for name, value, limit in (("project", project, MAX_PROJECT_CHARS), ("session", session, MAX_SESSION_CHARS),
                               ("request_id", request_id or "", MAX_REQUEST_ID_CHARS), ("user", user, MAX_USER_CHARS),
                               ("assistant", assistant, MAX_ASSISTANT_CHARS)):
        if len(value) > limit:
            raise PayloadTooLarge(f"'{name}' has {len(value)} characters; at most {limit} are accepted")


def check_turn_time(ts_ms: int | None, now_ms: int, skew_ms: int = MAX_FUTURE_SKEW_MS) -> None:
    """Raise ``FutureTimestamp`` when a turn is dated beyond ``now_ms + skew_ms``."""
    if ts_ms is not None and ts_ms > now_ms + skew_ms:
        ahead_s = (ts_ms - now_ms) // 1000
        raise FutureTimestamp(f"the turn is dated {ahead_s} s in the future (at most {skew_ms // 1000} s of clock "
                              f"skew is accepted); fix its timestamp or leave it out")
