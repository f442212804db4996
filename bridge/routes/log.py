"""The project's turn log, read-only: search, timeline, window (the agent's log tools)."""

from __future__ import annotations

from fastapi import APIRouter

from bridge import wire
from bridge.routes.context import Ctx, unit_out

router = APIRouter(tags=["log"])


@router.post("/v1/log/search", response_model=wire.UnitList)
def log_search(body: wire.LogSearchBody, ctx: Ctx) -> wire.UnitList:
    return wire.UnitList(units=[unit_out(h.unit, h.snippet) for h in ctx.pipe.log_search(body.project, body.query, body.limit)])


@router.post("/v1/log/timeline", response_model=wire.UnitList)
def log_timeline(body: wire.LogTimelineBody, ctx: Ctx) -> wire.UnitList:
    return wire.UnitList(units=[unit_out(u) for u in ctx.pipe.log_timeline(body.project, body.around_turn, body.limit)])


@router.post("/v1/log/window", response_model=wire.UnitList)
def log_window(body: wire.LogWindowBody, ctx: Ctx) -> wire.UnitList:
    return wire.UnitList(units=[unit_out(u) for u in ctx.pipe.log_window(body.project, body.unit_id, body.radius)])
