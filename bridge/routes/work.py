"""Background work of a project: its jobs (listed, retried) and its repair investigations."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import Field

from actors.wire import RepairRecord
from bridge import wire
from bridge.routes.context import Ctx, ProjectQuery
from engine.models import Job

router = APIRouter(tags=["work"])


class JobsReply(wire.Body):
    counts: dict[str, dict[str, int]] = Field(description="log jobs by kind and state")
    jobs: list[Job] = Field(description="the jobs asked for, newest first")


class RepairsReply(wire.Body):
    repairs: list[RepairRecord] = Field(description="repair investigations: signal, reads, proposals, verdicts")


@router.get("/v1/jobs/list", response_model=JobsReply)
def jobs(project: ProjectQuery, ctx: Ctx,
         state: Annotated[str | None, Query(pattern="^(pending|running|done|dead)$",
                                            description="only this state")] = None,
         limit: Annotated[int, Query(ge=1, le=1000, description="at most this many")] = 200) -> JobsReply:
    counts, rows = ctx.pipe.job_list(project, state, limit)
    return JobsReply(counts=counts, jobs=rows)


@router.post("/v1/jobs/{job_id}/retry", response_model=JobsReply)
def retry(job_id: Annotated[int, Path(ge=0, le=2**63 - 1, description="the job's id (jobs list)")],
          project: ProjectQuery, ctx: Ctx) -> JobsReply:
    # le: SQLite integers are 64-bit (a larger id overflowed into a 500; found by tests/bridge/test_fuzz.py)
    ctx.pipe.retry_job(project, job_id)
    counts, rows = ctx.pipe.job_list(project, None, 200)
    return JobsReply(counts=counts, jobs=rows)


# exclude_unset: each investigation comes back as it was recorded (``slot`` on accepted proposals only)
@router.get("/v1/repairs", response_model=RepairsReply, response_model_exclude_unset=True)
def repairs(project: ProjectQuery, ctx: Ctx,
            limit: Annotated[int, Query(ge=1, le=1000, description="at most this many, newest first")] = 50,
            ) -> RepairsReply:
    return RepairsReply(repairs=ctx.pipe.repairs(project, limit))
