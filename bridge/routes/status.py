"""Health and the numbers of a project: job counts and memory stats."""

from __future__ import annotations

from fastapi import APIRouter

from bridge import wire
from bridge.routes.context import Ctx, ProjectQuery
from bridge.version import __version__

router = APIRouter(tags=["status"])


@router.get("/v1/health", response_model=wire.Health)
def health() -> wire.Health:
    return wire.Health(ok=True, version=__version__)


@router.get("/v1/jobs", response_model=wire.JobCounts)
def jobs(project: ProjectQuery, ctx: Ctx) -> wire.JobCounts:
    return wire.JobCounts(jobs=ctx.pipe.jobs(project))


@router.get("/v1/stats", response_model=wire.StatsReply)
def stats(project: ProjectQuery, ctx: Ctx) -> wire.StatsReply:
    return wire.StatsReply.model_validate(ctx.pipe.stats(project).model_dump())
