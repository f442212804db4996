"""Truth maintenance: open conflicts, reviews a person settles, and the audit trail."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from bridge import wire
from bridge.routes.context import Ctx, ProjectQuery, mem_out
from engine.models import Origin

router = APIRouter(tags=["truth"])


@router.get("/v1/conflicts", response_model=wire.ConflictList)
def conflicts(project: ProjectQuery, ctx: Ctx) -> wire.ConflictList:
    return wire.ConflictList(conflicts=[
        wire.ConflictOut(tension_id=c.tension.id, reason=c.tension.reason, verdict=c.tension.verdict,
                         a=mem_out(c.a), b=mem_out(c.b)) for c in ctx.pipe.conflicts(project)])


@router.get("/v1/reviews", response_model=wire.ReviewList)
def reviews(project: ProjectQuery, ctx: Ctx, status: str | None = "open") -> wire.ReviewList:
    return wire.ReviewList(reviews=[
        wire.ReviewOut(**r.review.model_dump(), memories=[mem_out(m) for m in r.memories])
        for r in ctx.pipe.reviews(project, status if status != "all" else None)])


@router.post("/v1/reviews/{review_id}", response_model=wire.ReviewDecisionReply)
def decide(review_id: str, body: wire.ReviewDecisionBody, request: Request, ctx: Ctx) -> wire.ReviewDecisionReply:
    # The guard let this through with the review token, or with the API token when the
    # agent may decide (then it is audited as the agent's decision).
    by = Origin.HUMAN if ctx.tokens.is_review(request.headers.get("authorization")) else Origin.AGENT
    mems = ctx.pipe.decide_review(body.project, review_id, body.decision, by, body.note, body.request_id or "")
    return wire.ReviewDecisionReply(review_id=review_id, decision=body.decision, decided_by=by.value,
                                    memories=[mem_out(m) for m in mems])


@router.get("/v1/audit", response_model=wire.AuditList)
def audit(project: ProjectQuery, ctx: Ctx,
          limit: Annotated[int, Query(ge=1, le=1000, description="at most this many events")] = 100,
          # le: SQLite integers are 64-bit (a larger id overflowed into a 500)
          since_id: Annotated[int | None, Query(ge=0, le=2**63 - 1, description="only events after this id")] = None,
          ) -> wire.AuditList:
    rows = ctx.pipe.audit(project, max(1, min(limit, 1000)), since_id)
    return wire.AuditList(events=[wire.AuditRow(id=r.id, **r.event.model_dump(mode="json")) for r in rows])
