"""What every route needs: the bridge context (pipeline, tokens, ...) and the shared parameter types.

``create_app`` stores one :class:`Bridge` in ``app.state.bridge``; a route asks for it with a
``ctx: Ctx`` parameter (a FastAPI dependency), so routes are plain module-level functions
grouped by resource, not closures inside ``create_app``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from pydantic import AfterValidator

from actors.pipeline import Pipeline
from bridge import wire
from bridge.admission import GroupCommit
from bridge.auth import Tokens
from bridge.inspector import RecentRecalls
from engine import errors as E
from engine.history import parse_ts
from engine.models import Memory, TurnIn, Unit


@dataclass(frozen=True)
class Bridge:
    """The state the routes share, built once by ``create_app``."""

    pipe: Pipeline
    data_dir: Path
    tokens: Tokens
    recent: RecentRecalls  # what /v1/recall served lately, for the inspector's memory pages
    on_observe: Callable[[str], None]  # wakes the background worker for a project
    observer: GroupCommit[TurnIn, Any]  # observes written together on the loop (bridge/admission.py)


async def bridge(request: Request) -> Bridge:
    """The app's :class:`Bridge` (a FastAPI dependency).

    ``async`` so that FastAPI calls it on the event loop: a plain ``def`` dependency is run in
    the thread pool, one more thread hop for every request."""
    ctx = request.app.state.bridge
    assert isinstance(ctx, Bridge)
    return ctx


Ctx = Annotated[Bridge, Depends(bridge)]

# The project of GET and DELETE routes, validated like the ``project`` of every body.
ProjectQuery = Annotated[str, Query(min_length=1, max_length=512, pattern=wire.PROJECT_PATTERN,
                                    description=wire.PROJECT_DESCRIPTION), AfterValidator(wire.valid_project)]


def mem_out(m: Memory) -> wire.MemoryOut:
    return wire.MemoryOut.model_validate(m.model_dump(mode="json"))


def unit_out(u: Unit, snippet: str | None = None) -> wire.UnitOut:
    return wire.UnitOut(id=u.id, turn=u.turn, session=u.session, ts_ms=u.ts_ms, user=u.user, assistant=u.assistant,
                        snippet=snippet)


def ts(field: str, text: str | None) -> int | None:
    """An ISO 8601 body field to epoch ms; a bad value is the caller's input error, named by field."""
    if not text:
        return None
    try:
        return parse_ts(text)
    except (E.InvalidInput, OverflowError) as exc:  # parse_ts speaks of history lines (MalformedHistory)
        raise E.InvalidInput(f"{field}: {text!r} is not an ISO 8601 time") from exc
