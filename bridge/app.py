"""The HTTP API (FastAPI): validation, auth, one error table; the routes live in ``bridge/routes/``.

``create_app`` builds the app: the guard (body size, content type, bearer tokens), the error
handlers, and every router of ``bridge.routes.ROUTERS`` (one per resource), over a
:class:`bridge.routes.context.Bridge` holding the pipeline.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from actors.pipeline import Pipeline
from bridge import wire
from bridge.admission import Gate, GroupCommit
from bridge.api_docs import install_api_docs
from bridge.auth import Tokens
from bridge.inspector import RecentRecalls, mount_inspector
from bridge.routes import ROUTERS
from bridge.routes.context import Bridge
from bridge.version import __version__
from engine import errors as E
from engine.models import TurnIn
from engine.settings import AdmissionSettings

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


class _TooLarge(Exception):
    """The body went past :data:`MAX_BODY_BYTES` while it was read."""


class Guard:
    """Every request passes here first: body size and type, bearer tokens, then admission.

    A plain ASGI middleware, not ``@app.middleware("http")``: Starlette's ``BaseHTTPMiddleware``
    runs the rest of the app in a task group with memory streams, which cost about as much as
    the recall route itself per request (py-spy on the sidecar, issue 15). The body is read
    once here (to bound it) and handed on unchanged.
    """

    def __init__(self, app: ASGIApp, tokens: Tokens, gates: dict[str, Gate], allow_agent_review: bool,
                 on_request: Callable[[], None]) -> None:
        self.app, self.tokens, self.gates = app, tokens, gates
        self.allow_agent_review, self.on_request = allow_agent_review, on_request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.on_request()
        refusal = await self._refusal(scope, receive)
        if isinstance(refusal, Response):
            await refusal(scope, receive, send)
            return
        receive = refusal if refusal is not None else receive
        path, method = scope["path"], scope["method"]
        gate = self.gates.get(path) if method == "POST" else None
        if gate is None:
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        try:
            async with gate.admit():
                t1 = time.perf_counter()

                async def timed(message: Message) -> None:
                    if message["type"] == "http.response.start":
                        # Server-Timing (W3C): time waiting for admission and time serving, as the sidecar saw them
                        MutableHeaders(scope=message).append(
                            "Server-Timing", f"admit;dur={(t1 - t0) * 1000:.1f}, "
                                             f"serve;dur={(time.perf_counter() - t1) * 1000:.1f}")
                    await send(message)

                await self.app(scope, receive, timed)
        except E.Overloaded as exc:  # refused before anything was done
            await _err(status_of(exc), exc.message, exc.code, {"Retry-After": str(exc.retry_after_s)})(
                scope, receive, send)

    async def _refusal(self, scope: Scope, receive: Receive) -> Response | Receive | None:
        """An error reply for a request refused here, else the ``receive`` that replays its body (or None)."""
        headers = Headers(scope=scope)
        path, method = scope["path"], scope["method"]
        replay: Receive | None = None
        if method in ("POST", "PATCH", "PUT"):
            length = headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
                return _err(413, f"request body over {MAX_BODY_BYTES} bytes", E.PayloadTooLarge.code)
            try:
                body = await _read_body(receive)
            except _TooLarge:
                return _err(413, f"request body over {MAX_BODY_BYTES} bytes", E.PayloadTooLarge.code)
            ctype = headers.get("content-type", "")
            if body and "json" not in ctype.lower() and not path.startswith("/ui/"):  # /ui: forms, checked there
                return _err(415, "send JSON (Content-Type: application/json)", "unsupported_media_type")
            replay = _replaying(body, receive)
        if path.startswith("/v1/") and path != "/v1/health":
            try:
                if method == "POST" and path.startswith("/v1/reviews/") and not self.allow_agent_review:
                    self.tokens.check_review(headers.get("authorization"))
                else:
                    self.tokens.check_api(headers.get("authorization"))
            except E.DynmemError as exc:
                return _err(status_of(exc), exc.message, exc.code)
        return replay


async def _read_body(receive: Receive) -> bytes:
    """The whole request body; :class:`_TooLarge` as soon as it passes :data:`MAX_BODY_BYTES`."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away: the app sees an empty body
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app the body already read, then whatever the client sends next."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def admission_gates(settings: AdmissionSettings) -> dict[str, Gate]:
    """The gates of the admitted routes (``[admission]`` settings; bridge/admission.py)."""
    return {"/v1/recall": Gate("/v1/recall", settings.recall_inflight, settings.recall_queue, settings.recall_max_wait_s),
            "/v1/observe": Gate("/v1/observe", settings.observe_inflight, settings.observe_queue,
                                settings.observe_max_wait_s)}


def create_app(pipe: Pipeline, data_dir: Path, on_observe: Callable[[str], None] = lambda p: None,
               on_request: Callable[[], None] = lambda: None) -> FastAPI:
    """Build the app over a pipeline; ``on_observe`` wakes the background worker for a project,
    ``on_request`` is called as each request arrives (the sidecar's idle clock)."""
    tokens = Tokens(data_dir)
    allow_agent_review = pipe.rt.settings.review.allow_agent
    recent = RecentRecalls()  # what /v1/recall served lately, for the inspector's memory pages
    admission = pipe.rt.settings.admission
    gates = admission_gates(admission)
    observer: GroupCommit[TurnIn, Any] = GroupCommit(lambda turns: pipe.observe_async(turns, run_in_threadpool),
                                                     max_pending=admission.observe_max_pending)
    app = FastAPI(title="dynamics-memory", version=VERSION,
                  description="Long-term project memory for coding agents. Every route but /v1/health needs a bearer token.",
                  responses=ERROR_RESPONSES, docs_url=None, redoc_url=None)
    install_api_docs(app)  # /docs from a registry package (offline), bearer schemes in /openapi.json
    app.state.bridge = Bridge(pipe=pipe, data_dir=Path(data_dir), tokens=tokens, recent=recent, on_observe=on_observe,
                              observer=observer)

    app.add_middleware(Guard, tokens=tokens, gates=gates, allow_agent_review=allow_agent_review,
                       on_request=on_request)

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

    for router in ROUTERS:  # one per resource (bridge/routes/): the one place to add an endpoint
        app.include_router(router)
    # The sidecar's worker yields to these (and for [admission] foreground_quiet_s after the last
    # one, so that the next call of an agent's burst does not queue behind a background step);
    # its stop writes the observes still waiting.
    quiet_s = admission.foreground_quiet_s
    app.state.foreground_busy = lambda: observer.busy or any(g.quiet_for() < quiet_s for g in gates.values())
    app.state.gates = gates
    app.state.observer = observer
    mount_inspector(app, pipe, tokens, recent)
    return app
