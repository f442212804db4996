"""Parses history files (JSON Lines, one turn per line; DESIGN §11) into turns.

A malformed line is reported with its line number; the caller decides (``--strict``)
whether that is fatal. Nothing is silently dropped: every skipped line is in ``problems``.
A line is malformed for any reason that would make the log refuse its turn (JSON, encoding,
project name, size, a date in the future), so that a file is checked whole before any of
it is logged: a bad line 301 never leaves lines 1-300 logged with their jobs pending.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timezone

from pydantic import BaseModel, ConfigDict

from engine.errors import DynmemError, MalformedHistory
from engine.limits import MAX_LINE_BYTES, check_turn_size, check_turn_time
from engine.models import TurnIn
from engine.scopes import project_scope


class Problem(BaseModel):
    model_config = ConfigDict(frozen=True)
    line: int
    message: str
    code: str = MalformedHistory.code


def parse_ts(value: str) -> int:
    """ISO 8601 (``Z`` or an offset; naive means UTC) to epoch milliseconds."""
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise MalformedHistory(f"bad timestamp {value!r}: expected ISO 8601") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


def parse_line(raw: str | bytes, lineno: int, default_project: str | None, now_ms: int | None = None) -> TurnIn:
    """One history line to a turn; ``now_ms`` (if given) bounds its timestamp.

    Raises:
        MalformedHistory: naming the line, with the code of the underlying reason
            (``malformed_history``, ``payload_too_large``, ``future_timestamp``...) in ``reason``.
    """
    if len(raw) > MAX_LINE_BYTES:
        raise _bad(lineno, f"longer than {MAX_LINE_BYTES} bytes", "payload_too_large")
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _bad(lineno, f"not UTF-8 (byte {exc.start + 1})", "invalid_encoding") from None
    else:
        text = raw
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(lineno, f"not JSON ({exc.msg})") from exc
    if not isinstance(obj, dict):
        raise _bad(lineno, "expected a JSON object")
    project = obj.get("project") or default_project
    if not isinstance(project, str) or not project:
        raise _bad(lineno, "no project (give one in the line or with --project)")
    user = obj.get("user")
    if not isinstance(user, str) or not user.strip():
        raise _bad(lineno, "'user' must be a non-empty string")
    assistant = obj.get("assistant", "")
    if not isinstance(assistant, str):
        raise _bad(lineno, "'assistant' must be a string")
    session = obj.get("session", "default")
    if not isinstance(session, str):
        raise _bad(lineno, "'session' must be a string")
    ts = obj.get("ts")
    ts_ms = None
    if ts is not None:
        if not isinstance(ts, str):
            raise _bad(lineno, "'ts' must be an ISO 8601 string")
        try:
            ts_ms = parse_ts(ts)
        except (MalformedHistory, OverflowError, OSError) as exc:
            raise _bad(lineno, exc.message if isinstance(exc, MalformedHistory) else f"bad timestamp {ts!r}") from exc
    rid = obj.get("request_id")
    if rid is not None and not isinstance(rid, str):
        raise _bad(lineno, "'request_id' must be a string")
    try:  # the checks the log would make, so that the whole file is checked before any of it is logged
        project_scope(project)
        check_turn_size(user, assistant, session, rid, project)
        if now_ms is not None:
            check_turn_time(ts_ms, now_ms)
    except DynmemError as exc:  # InvalidInput, PayloadTooLarge, FutureTimestamp
        raise _bad(lineno, exc.message, exc.code) from exc
    return TurnIn(project=project, session=session or "default", user=user, assistant=assistant, ts_ms=ts_ms,
                  request_id=rid)


class LineProblem(MalformedHistory):
    """A malformed history line; ``reason`` is the stable code of why (the class code stays ``malformed_history``)."""

    def __init__(self, message: str, reason: str = MalformedHistory.code) -> None:
        super().__init__(message)
        self.reason = reason


def _bad(lineno: int, message: str, reason: str = MalformedHistory.code) -> LineProblem:
    return LineProblem(f"line {lineno}: {message}", reason)


def parse_history(lines: Iterable[str | bytes], default_project: str | None = None, strict: bool = False,
                  now_ms: int | None = None) -> tuple[list[TurnIn], list[Problem]]:
    """Parse every non-blank line; with ``strict`` the first problem raises.

    ``lines`` may be bytes (each line decoded on its own: one bad byte rejects its line only);
    ``now_ms`` rejects turns dated beyond the allowed clock skew.
    """
    turns: list[TurnIn] = []
    problems: list[Problem] = []
    for lineno, raw in enumerate(lines, start=1):
        if len(raw) <= MAX_LINE_BYTES and not raw.strip():
            continue
        try:
            turns.append(parse_line(raw, lineno, default_project, now_ms))
        except LineProblem as exc:
            if strict:
                raise
            problems.append(Problem(line=lineno, message=exc.message, code=exc.reason))
    return turns, problems
