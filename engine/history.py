"""Parses history files (JSON Lines, one turn per line; DESIGN §11) into turns.

A malformed line is reported with its line number; the caller decides (``--strict``)
whether that is fatal. Nothing is silently dropped: every skipped line is in ``problems``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timezone

from pydantic import BaseModel, ConfigDict

from engine.errors import MalformedHistory
from engine.models import TurnIn


class Problem(BaseModel):
    model_config = ConfigDict(frozen=True)
    line: int
    message: str


def parse_ts(value: str) -> int:
    """ISO 8601 (``Z`` or an offset; naive means UTC) to epoch milliseconds."""
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise MalformedHistory(f"bad timestamp {value!r}: expected ISO 8601") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


def parse_line(text: str, lineno: int, default_project: str | None) -> TurnIn:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedHistory(f"line {lineno}: not JSON ({exc.msg})") from exc
    if not isinstance(obj, dict):
        raise MalformedHistory(f"line {lineno}: expected a JSON object")
    project = obj.get("project") or default_project
    if not isinstance(project, str) or not project:
        raise MalformedHistory(f"line {lineno}: no project (give one in the line or with --project)")
    user = obj.get("user")
    if not isinstance(user, str) or not user.strip():
        raise MalformedHistory(f"line {lineno}: 'user' must be a non-empty string")
    assistant = obj.get("assistant", "")
    if not isinstance(assistant, str):
        raise MalformedHistory(f"line {lineno}: 'assistant' must be a string")
    session = obj.get("session", "default")
    if not isinstance(session, str):
        raise MalformedHistory(f"line {lineno}: 'session' must be a string")
    ts = obj.get("ts")
    ts_ms = None
    if ts is not None:
        if not isinstance(ts, str):
            raise MalformedHistory(f"line {lineno}: 'ts' must be an ISO 8601 string")
        try:
            ts_ms = parse_ts(ts)
        except MalformedHistory as exc:
            raise MalformedHistory(f"line {lineno}: {exc.message}") from exc
    rid = obj.get("request_id")
    if rid is not None and not isinstance(rid, str):
        raise MalformedHistory(f"line {lineno}: 'request_id' must be a string")
    return TurnIn(project=project, session=session or "default", user=user, assistant=assistant, ts_ms=ts_ms,
                  request_id=rid)


def parse_history(lines: Iterable[str], default_project: str | None = None, strict: bool = False) -> tuple[list[TurnIn], list[Problem]]:
    """Parse every non-blank line; with ``strict`` the first problem raises."""
    turns: list[TurnIn] = []
    problems: list[Problem] = []
    for lineno, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            turns.append(parse_line(text, lineno, default_project))
        except MalformedHistory as exc:
            if strict:
                raise
            problems.append(Problem(line=lineno, message=exc.message))
    return turns, problems
