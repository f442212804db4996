"""Memories of a project, and of the global scope (the user's memories, read by every project)."""

from __future__ import annotations

from fastapi import APIRouter

from actors.wire import ForgetRequest, RememberRequest
from bridge import wire
from bridge.routes.context import Ctx, ProjectQuery, mem_out
from engine.models import Sensitivity, Tier

router = APIRouter(tags=["memories"])


@router.get("/v1/memories", response_model=wire.MemoryList)
def list_memories(project: ProjectQuery, ctx: Ctx, state: str | None = None) -> wire.MemoryList:
    return wire.MemoryList(memories=[mem_out(m) for m in ctx.pipe.memories(project, state)])


@router.post("/v1/memories", response_model=wire.RememberReply)
def remember(body: wire.RememberBody, ctx: Ctx) -> wire.RememberReply:
    rep = ctx.pipe.remember(RememberRequest(project=body.project, text=body.text, scope=body.scope, tier=Tier(body.tier),
                                            ttl_hours=body.ttl_hours, sensitivity=Sensitivity(body.sensitivity),
                                            request_id=body.request_id or ""))
    return wire.RememberReply(memory_ids=list(rep.memory_ids), outcomes=rep.outcomes)


@router.get("/v1/memories/{memory_id}", response_model=wire.MemoryOut)
def show(memory_id: str, project: ProjectQuery, ctx: Ctx) -> wire.MemoryOut:
    return mem_out(ctx.pipe.detail(project, memory_id).memory)


@router.get("/v1/memories/{memory_id}/why", response_model=wire.WhyReply)
def why(memory_id: str, project: ProjectQuery, ctx: Ctx, query: str | None = None) -> wire.WhyReply:
    d = ctx.pipe.detail(project, memory_id)
    terms = ctx.pipe.why(project, memory_id, query)
    return wire.WhyReply(memory=mem_out(d.memory),
                         why=wire.ScoreTermsOut.model_validate(terms.model_dump()) if terms else None,
                         history=[wire.AuditEventOut.model_validate(e.model_dump(mode="json")) for e in d.history],
                         versions=[mem_out(v) for v in d.versions])


@router.delete("/v1/memories/{memory_id}", response_model=wire.ForgetReply)
def forget(memory_id: str, project: ProjectQuery, ctx: Ctx, purge: bool = False) -> wire.ForgetReply:
    res = ctx.pipe.forget(ForgetRequest(project=project, memory_id=memory_id, purge=purge))
    return wire.ForgetReply(retired=list(res.retired), purged=res.purged)


@router.patch("/v1/memories/{memory_id}", response_model=wire.MemoryOut)
def patch(memory_id: str, project: ProjectQuery, body: wire.PatchBody, ctx: Ctx) -> wire.MemoryOut:
    return mem_out(ctx.pipe.patch(project, memory_id, body.tier, body.sensitivity))


# The global scope has its own routes: its memories are not any project's, so
# /v1/memories/{id}?project=... answers 404 for them.
@router.get("/v1/global/memories", response_model=wire.MemoryList)
def list_global(ctx: Ctx, state: str | None = None) -> wire.MemoryList:
    return wire.MemoryList(memories=[mem_out(m) for m in ctx.pipe.global_memories(state)])


@router.get("/v1/global/memories/{memory_id}", response_model=wire.MemoryDetailReply)
def show_global(memory_id: str, ctx: Ctx) -> wire.MemoryDetailReply:
    d = ctx.pipe.global_detail(memory_id)
    return wire.MemoryDetailReply(
        memory=mem_out(d.memory),
        history=[wire.AuditEventOut.model_validate(e.model_dump(mode="json")) for e in d.history],
        versions=[mem_out(v) for v in d.versions])


@router.patch("/v1/global/memories/{memory_id}", response_model=wire.MemoryOut)
def patch_global(memory_id: str, body: wire.PatchBody, ctx: Ctx) -> wire.MemoryOut:
    return mem_out(ctx.pipe.global_patch(memory_id, body.tier, body.sensitivity))


@router.delete("/v1/global/memories/{memory_id}", response_model=wire.ForgetReply)
def forget_global(memory_id: str, ctx: Ctx, purge: bool = False) -> wire.ForgetReply:
    res = ctx.pipe.global_forget(memory_id=memory_id, purge=purge)
    return wire.ForgetReply(retired=list(res.retired), purged=res.purged)
