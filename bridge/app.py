"""The HTTP API (FastAPI): validation, auth, one error table, and calls into the pipeline."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import AfterValidator
from starlette.exceptions import HTTPException as StarletteHTTPException

from actors.pipeline import Pipeline
from actors.wire import ForgetRequest, RecallRequest, RememberRequest
from bridge import wire
from bridge.admission import Gate, ObserveBatcher
from bridge.api_docs import install_api_docs
from bridge.auth import Tokens
from bridge.cli_routes import add_cli_routes
from bridge.inspector import RecentRecalls, mount_inspector
from bridge.version import __version__
from engine import errors as E
from engine.history import parse_ts
from engine.models import Origin, Sensitivity, Tier, TurnIn

VERSION = __version__
MAX_BODY_BYTES = 1_048_576

# One table from error class to HTTP status; the first matching class wins (most specific first).
STATUS: tuple[tuple[type[E.DynmemError], int], ...] = (
    (E.Forbidden, 403),
    (E.AuthError, 401),
    (E.ScopeViolation, 403),
    (E.NotFound, 404),
    (E.Conflict, 409),
    (E.PayloadTooLarge, 413),
    (E.BudgetExceeded, 429),
    (E.RateLimited, 429),
    (E.InvalidInput, 422),
    (E.StoreError, 503),
    (E.IndexError_, 503),
    (E.ModelError, 503),
    (E.ServiceUnavailable, 503),
)


# Every route may answer these with ``{"error", "code"}``; documented so that /openapi.json
# describes the real error body (FastAPI's default 422 schema is not what we send).
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": wire.ErrorReply, "description": text}
    for status, text in (
        (400, "malformed JSON body"), (401, "missing or wrong bearer token"), (403, "wrong token for this route"),
        (404, "unknown route, memory or unit"), (405, "method not allowed"),
        (409, "request id reused with other content"), (413, "request body too large"),
        (415, "request body is not JSON"), (422, "request does not validate"), (429, "rate or budget exceeded"),
        (500, "internal error"),
        (503, "a store, model or actor is unavailable, or the sidecar is busy (code overloaded, with Retry-After)"),
    )
}


def status_of(exc: E.DynmemError) -> int:
    return next((code for cls, code in STATUS if isinstance(exc, cls)), 500)


def _err(status: int, message: str, code: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status, headers=headers)


# Admission control (bridge/admission.py): (calls in flight, callers waiting, longest wait in s)
# per route. Recalls: a project's engine answers one at a time, so more calls in flight would
# only queue inside Ray. Observes are written together (group commit), so a few in flight fill a
# batch. A caller that gets no slot in time is answered 503 ``overloaded`` with Retry-After and
# nothing was done (the opencode plugin keeps the turn in its outbox and sends it again).
ADMISSION: dict[str, tuple[int, int, float]] = {
    "/v1/recall": (4, 8, 0.15),
    "/v1/observe": (8, 16, 0.1),
}
#: Observes waiting to be written; past this many, 503 ``overloaded``.
OBSERVE_MAX_PENDING = 2048


def _mem_out(m: Any) -> wire.MemoryOut:
    return wire.MemoryOut.model_validate(m.model_dump(mode="json"))


def _unit_out(u: Any, snippet: str | None = None) -> wire.UnitOut:
    return wire.UnitOut(id=u.id, turn=u.turn, session=u.session, ts_ms=u.ts_ms, user=u.user, assistant=u.assistant,
                        snippet=snippet)


# The project of GET and DELETE routes, validated like the ``project`` of every body.
ProjectQuery = Annotated[str, Query(min_length=1, max_length=512, pattern=wire.PROJECT_PATTERN,
                                    description=wire.PROJECT_DESCRIPTION), AfterValidator(wire.valid_project)]


def _ts(field: str, text: str | None) -> int | None:
    """An ISO 8601 body field to epoch ms; a bad value is the caller's input error, named by field."""
    if not text:
        return None
    try:
        return parse_ts(text)
    except (E.InvalidInput, OverflowError) as exc:  # parse_ts speaks of history lines (MalformedHistory)
        raise E.InvalidInput(f"{field}: {text!r} is not an ISO 8601 time") from exc


def create_app(pipe: Pipeline, data_dir: Path, on_observe: Callable[[str], None] = lambda p: None) -> FastAPI:
    """Build the app over a pipeline; ``on_observe`` wakes the background worker for a project."""
    tokens = Tokens(data_dir)
    allow_agent_review = pipe.rt.settings.review.allow_agent
    recent = RecentRecalls()  # what /v1/recall served lately, for the inspector's memory pages
    gates = {path: Gate(path, *bounds) for path, bounds in ADMISSION.items()}
    observer: ObserveBatcher[TurnIn, Any] = ObserveBatcher(lambda turns: pipe.observe(turns),
                                                           max_pending=OBSERVE_MAX_PENDING)
    app = FastAPI(title="dynamics-memory", version=VERSION,
                  description="Long-term project memory for coding agents. Every route but /v1/health needs a bearer token.",
                  responses=ERROR_RESPONSES, docs_url=None, redoc_url=None)
    install_api_docs(app)  # /docs from a registry package (offline), bearer schemes in /openapi.json

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        path = request.url.path
        if request.method in ("POST", "PATCH", "PUT"):
            length = request.headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
                return _err(413, f"request body over {MAX_BODY_BYTES} bytes", E.PayloadTooLarge.code)
            body = await request.body()
            if len(body) > MAX_BODY_BYTES:
                return _err(413, f"request body over {MAX_BODY_BYTES} bytes", E.PayloadTooLarge.code)
            ctype = request.headers.get("content-type", "")
            if body and "json" not in ctype.lower() and not path.startswith("/ui/"):  # /ui: forms, checked there
                return _err(415, "send JSON (Content-Type: application/json)", "unsupported_media_type")
        if path.startswith("/v1/") and path != "/v1/health":
            try:
                if request.method == "POST" and path.startswith("/v1/reviews/") and not allow_agent_review:
                    tokens.check_review(request.headers.get("authorization"))
                else:
                    tokens.check_api(request.headers.get("authorization"))
            except E.DynmemError as exc:
                return _err(status_of(exc), exc.message, exc.code)
        gate = gates.get(path) if request.method == "POST" else None
        if gate is None:
            return await call_next(request)
        t0 = time.perf_counter()
        try:
            async with gate.admit():
                t1 = time.perf_counter()
                response = await call_next(request)
        except E.Overloaded as exc:  # refused before anything was done
            return _err(status_of(exc), exc.message, exc.code, {"Retry-After": str(exc.retry_after_s)})
        # Server-Timing (W3C): time waiting for admission and time serving, as the sidecar saw them
        response.headers["Server-Timing"] = (f"admit;dur={(t1 - t0) * 1000:.1f}, "
                                             f"serve;dur={(time.perf_counter() - t1) * 1000:.1f}")
        return response

    @app.exception_handler(E.DynmemError)
    async def dynmem_error(request: Request, exc: E.DynmemError) -> JSONResponse:
        retry = {"Retry-After": str(exc.retry_after_s)} if isinstance(exc, E.Overloaded) else None
        return _err(status_of(exc), exc.message, exc.code, retry)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        errs = exc.errors()
        if errs and errs[0].get("type") == "json_invalid":
            return _err(400, "malformed JSON body", "malformed_json")
        first = errs[0] if errs else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return _err(422, f"{where or 'body'}: {first.get('msg')}", E.InvalidInput.code)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _err(exc.status_code, str(exc.detail), code)

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:
        return _err(500, f"internal error ({type(exc).__name__})", "internal")

    @app.get("/v1/health", response_model=wire.Health)
    def health() -> wire.Health:
        return wire.Health(ok=True, version=VERSION)

    @app.post("/v1/observe", response_model=wire.ObserveReply)
    def observe(body: wire.ObserveBody) -> wire.ObserveReply:
        ts_ms = _ts("ts", body.ts)
        turn = TurnIn(project=body.project, session=body.session, user=body.user, assistant=body.assistant,
                      ts_ms=ts_ms, request_id=body.request_id)
        pipe.check_turn(turn)  # a bad turn is refused here, never in a batch with others
        ack = observer.submit(turn)  # durable once this returns (written with the observes waiting now)
        on_observe(body.project)
        return wire.ObserveReply(unit_id=ack.unit_id, turn=ack.turn, created=ack.created)

    @app.post("/v1/recall", response_model=wire.RecallReply)
    def recall(body: wire.RecallBody) -> wire.RecallReply:
        req = RecallRequest(project=body.project, query=body.query, k=body.k, budget_tokens=body.budget_tokens,
                            passive=body.passive, as_of_ms=_ts("as_of", body.as_of))
        res = pipe.recall(req)
        if res.abstained and not body.passive:
            on_observe(body.project)  # an abstained live recall may have queued a repair job
        recent.add(body.project, body.query, pipe.rt.clock.now_ms(), res)
        return wire.RecallReply(
            retrieval_id=res.retrieval_id, abstained=res.abstained, context=res.context,
            memories=[wire.RecalledMemory(id=m.id, text=m.text, score=m.score, state=m.state, scope=m.scope, kind=m.kind,
                                          tier=m.tier, provisional=m.provisional, always_on=m.always_on)
                      for m in res.memories],
            conflicts=[wire.ConflictLine(**c.model_dump()) for c in res.conflicts])

    @app.post("/v1/feedback", response_model=wire.FeedbackReply)
    def feedback(body: wire.FeedbackBody) -> wire.FeedbackReply:
        return wire.FeedbackReply(used=pipe.feedback(body.project, body.retrieval_id, body.answer, body.request_id or ""))

    @app.get("/v1/memories", response_model=wire.MemoryList)
    def list_memories(project: ProjectQuery, state: str | None = None) -> wire.MemoryList:
        return wire.MemoryList(memories=[_mem_out(m) for m in pipe.memories(project, state)])

    @app.post("/v1/memories", response_model=wire.RememberReply)
    def remember(body: wire.RememberBody) -> wire.RememberReply:
        rep = pipe.remember(RememberRequest(project=body.project, text=body.text, scope=body.scope, tier=Tier(body.tier),
                                            ttl_hours=body.ttl_hours, sensitivity=Sensitivity(body.sensitivity),
                                            request_id=body.request_id or ""))
        return wire.RememberReply(memory_ids=list(rep.memory_ids), outcomes=rep.outcomes)

    @app.get("/v1/memories/{memory_id}", response_model=wire.MemoryOut)
    def show(memory_id: str, project: ProjectQuery) -> wire.MemoryOut:
        return _mem_out(pipe.detail(project, memory_id).memory)

    @app.get("/v1/memories/{memory_id}/why", response_model=wire.WhyReply)
    def why(memory_id: str, project: ProjectQuery, query: str | None = None) -> wire.WhyReply:
        d = pipe.detail(project, memory_id)
        terms = pipe.why(project, memory_id, query)
        return wire.WhyReply(memory=_mem_out(d.memory),
                             why=wire.ScoreTermsOut.model_validate(terms.model_dump()) if terms else None,
                             history=[wire.AuditEventOut.model_validate(e.model_dump(mode="json")) for e in d.history],
                             versions=[_mem_out(v) for v in d.versions])

    @app.delete("/v1/memories/{memory_id}", response_model=wire.ForgetReply)
    def forget(memory_id: str, project: ProjectQuery, purge: bool = False) -> wire.ForgetReply:
        res = pipe.forget(ForgetRequest(project=project, memory_id=memory_id, purge=purge))
        return wire.ForgetReply(retired=list(res.retired), purged=res.purged)

    # The global scope (the user's memories, read by every project) has its own routes: its
    # memories are not any project's, so /v1/memories/{id}?project=... answers 404 for them.
    @app.get("/v1/global/memories", response_model=wire.MemoryList)
    def list_global(state: str | None = None) -> wire.MemoryList:
        return wire.MemoryList(memories=[_mem_out(m) for m in pipe.global_memories(state)])

    @app.get("/v1/global/memories/{memory_id}", response_model=wire.MemoryDetailReply)
    def show_global(memory_id: str) -> wire.MemoryDetailReply:
        d = pipe.global_detail(memory_id)
        return wire.MemoryDetailReply(
            memory=_mem_out(d.memory),
            history=[wire.AuditEventOut.model_validate(e.model_dump(mode="json")) for e in d.history],
            versions=[_mem_out(v) for v in d.versions])

    @app.patch("/v1/global/memories/{memory_id}", response_model=wire.MemoryOut)
    def patch_global(memory_id: str, body: wire.PatchBody) -> wire.MemoryOut:
        return _mem_out(pipe.global_patch(memory_id, body.tier, body.sensitivity))

    @app.delete("/v1/global/memories/{memory_id}", response_model=wire.ForgetReply)
    def forget_global(memory_id: str, purge: bool = False) -> wire.ForgetReply:
        res = pipe.global_forget(memory_id=memory_id, purge=purge)
        return wire.ForgetReply(retired=list(res.retired), purged=res.purged)

    @app.post("/v1/miss", response_model=wire.MissReply)
    def miss(body: wire.MissBody) -> wire.MissReply:
        job = pipe.miss(body.project, body.query, body.tool, body.session)
        on_observe(body.project)  # wake the worker: a repair job is waiting
        return wire.MissReply(job_id=job)

    @app.post("/v1/log/search", response_model=wire.UnitList)
    def log_search(body: wire.LogSearchBody) -> wire.UnitList:
        return wire.UnitList(units=[_unit_out(h.unit, h.snippet) for h in pipe.log_search(body.project, body.query, body.limit)])

    @app.post("/v1/log/timeline", response_model=wire.UnitList)
    def log_timeline(body: wire.LogTimelineBody) -> wire.UnitList:
        return wire.UnitList(units=[_unit_out(u) for u in pipe.log_timeline(body.project, body.around_turn, body.limit)])

    @app.post("/v1/log/window", response_model=wire.UnitList)
    def log_window(body: wire.LogWindowBody) -> wire.UnitList:
        return wire.UnitList(units=[_unit_out(u) for u in pipe.log_window(body.project, body.unit_id, body.radius)])

    @app.patch("/v1/memories/{memory_id}", response_model=wire.MemoryOut)
    def patch(memory_id: str, project: ProjectQuery, body: wire.PatchBody) -> wire.MemoryOut:
        return _mem_out(pipe.patch(project, memory_id, body.tier, body.sensitivity))

    @app.get("/v1/conflicts", response_model=wire.ConflictList)
    def conflicts(project: ProjectQuery) -> wire.ConflictList:
        return wire.ConflictList(conflicts=[
            wire.ConflictOut(tension_id=c["tension"].id, reason=c["tension"].reason, verdict=c["tension"].verdict,
                             a=_mem_out(c["a"]), b=_mem_out(c["b"])) for c in pipe.conflicts(project)])

    @app.get("/v1/reviews", response_model=wire.ReviewList)
    def reviews(project: ProjectQuery, status: str | None = "open") -> wire.ReviewList:
        return wire.ReviewList(reviews=[
            wire.ReviewOut(**r["review"].model_dump(), memories=[_mem_out(m) for m in r["memories"]])
            for r in pipe.reviews(project, status if status != "all" else None)])

    @app.post("/v1/reviews/{review_id}", response_model=wire.ReviewDecisionReply)
    def decide(review_id: str, body: wire.ReviewDecisionBody, request: Request) -> wire.ReviewDecisionReply:
        # The middleware let this through with the review token, or with the API token when the
        # agent may decide (then it is audited as the agent's decision).
        by = Origin.HUMAN if tokens.is_review(request.headers.get("authorization")) else Origin.AGENT
        mems = pipe.decide_review(body.project, review_id, body.decision, by, body.note, body.request_id or "")
        return wire.ReviewDecisionReply(review_id=review_id, decision=body.decision, decided_by=by.value,
                                        memories=[_mem_out(m) for m in mems])

    @app.get("/v1/audit", response_model=wire.AuditList)
    def audit(project: ProjectQuery,
              limit: Annotated[int, Query(ge=1, le=1000, description="at most this many events")] = 100,
              # le: SQLite integers are 64-bit (a larger id overflowed into a 500)
              since_id: Annotated[int | None, Query(ge=0, le=2**63 - 1, description="only events after this id")] = None,
              ) -> wire.AuditList:
        rows = pipe.audit(project, max(1, min(limit, 1000)), since_id)
        return wire.AuditList(events=[wire.AuditRow(id=r.id, **r.event.model_dump(mode="json")) for r in rows])

    @app.get("/v1/jobs", response_model=wire.JobCounts)
    def jobs(project: ProjectQuery) -> wire.JobCounts:
        return wire.JobCounts(jobs=pipe.jobs(project))

    @app.get("/v1/stats", response_model=wire.StatsReply)
    def stats(project: ProjectQuery) -> wire.StatsReply:
        return wire.StatsReply.model_validate(pipe.stats(project).model_dump())

    # The sidecar's worker yields to these; its stop writes the observes still waiting.
    app.state.foreground_busy = lambda: observer.busy or any(g.busy for g in gates.values())
    app.state.gates = gates
    app.state.observer = observer
    add_cli_routes(app, pipe, str(data_dir))  # projects, export/import, jobs, repairs: the CLI through the sidecar
    mount_inspector(app, pipe, tokens, recent)
    return app
