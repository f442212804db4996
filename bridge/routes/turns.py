"""Turns in, memories out: observe, recall, feedback and misses."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from actors.wire import RecallRequest
from bridge import wire
from bridge.routes.context import Ctx, ts
from engine.models import TurnIn

router = APIRouter(tags=["turns"])


# observe and recall are ``async``: they run on the event loop and await the log actor's
# acknowledgement (the group commit of bridge/admission.py) or the engine actor's answer, where a plain ``def`` route would hold a thread of the
# pool waiting for it (two thread hops more per request, issue 15). Their blocking parts
# (opening a project, an in-process runtime) go to the thread pool.
@router.post("/v1/observe", response_model=wire.ObserveReply)
async def observe(body: wire.ObserveBody, ctx: Ctx) -> wire.ObserveReply:
    ts_ms = ts("ts", body.ts)
    turn = TurnIn(project=body.project, session=body.session, user=body.user, assistant=body.assistant,
                  ts_ms=ts_ms, request_id=body.request_id)
    ctx.pipe.check_turn(turn)  # a bad turn is refused here, never in a batch with others
    ack = await ctx.observer.submit(turn)  # durable once this returns (written with the observes waiting now)
    ctx.on_observe(body.project)
    return wire.ObserveReply(unit_id=ack.unit_id, turn=ack.turn, created=ack.created)


@router.post("/v1/recall", response_model=wire.RecallReply)
async def recall(body: wire.RecallBody, ctx: Ctx) -> wire.RecallReply:
    req = RecallRequest(project=body.project, query=body.query, k=body.k, budget_tokens=body.budget_tokens,
                        passive=body.passive, as_of_ms=ts("as_of", body.as_of))
    res = await ctx.pipe.recall_async(req, run_in_threadpool)
    if res.abstained and not body.passive:
        ctx.on_observe(body.project)  # an abstained live recall may have queued a repair job
    ctx.recent.add(body.project, body.query, ctx.pipe.rt.clock.now_ms(), res)
    return wire.RecallReply(
        retrieval_id=res.retrieval_id, abstained=res.abstained, context=res.context,
        memories=[wire.RecalledMemory(id=m.id, text=m.text, score=m.score, state=m.state, scope=m.scope, kind=m.kind,
                                      tier=m.tier, provisional=m.provisional, always_on=m.always_on)
                  for m in res.memories],
        conflicts=[wire.ConflictLine(**c.model_dump()) for c in res.conflicts])


@router.post("/v1/feedback", response_model=wire.FeedbackReply)
def feedback(body: wire.FeedbackBody, ctx: Ctx) -> wire.FeedbackReply:
    return wire.FeedbackReply(used=ctx.pipe.feedback(body.project, body.retrieval_id, body.answer, body.request_id or ""))


@router.post("/v1/miss", response_model=wire.MissReply)
def miss(body: wire.MissBody, ctx: Ctx) -> wire.MissReply:
    job = ctx.pipe.miss(body.project, body.query, body.tool, body.session)
    ctx.on_observe(body.project)  # wake the worker: a repair job is waiting
    return wire.MissReply(job_id=job)
