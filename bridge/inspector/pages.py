"""The pages of the web inspector (``/ui``): server-rendered HTML over the same pipeline as the API.

Pages: log-in, projects, memories (filters and search), one memory (versions on a
timeline, source turns, score terms of recent recalls, audit trail), what would be injected
for a question (with an as-of time), reviews (accept / keep both / reject, review token
only), repairs and jobs, stats. Templates are Jinja2 with autoescaping; the one script and
stylesheet are served from the package (no CDN), and a Content-Security-Policy forbids
anything else.
"""

from __future__ import annotations

import functools
import threading
from collections import deque
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ParamSpec
from urllib.parse import parse_qs, quote, urlencode

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape

from actors.wire import ForgetRequest, RecallRequest, RecallResult
from bridge.auth import Tokens
from bridge.inspector.sessions import LOGIN_COOKIE, SESSION_COOKIE, Sessions, UiSession, same_origin, tokens_match
from engine import errors as E
from engine.history import parse_ts
from engine.models import Kind, Origin, Tier, TrustState

P = ParamSpec("P")
STATIC = Path(__file__).resolve().parent / "static"
STATES = tuple(s.value for s in TrustState)
TIERS = tuple(t.value for t in Tier)
KINDS = tuple(k.value for k in Kind)
# What the review page offers, and what each button means in the engine's vocabulary.
# accept: the newer memory wins; reject: the newer one is rejected and the older kept.
DECISIONS = {"accept": "accept_new", "keep_both": "keep_both", "reject": "keep_old"}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # no-referrer would make Chromium send `Origin: null` on our own forms
    "Cache-Control": "no-store",
}


class RecentRecalls:
    """The last recalls served over HTTP, per project, with every memory's score terms (kept in memory)."""

    def __init__(self, per_project: int = 50) -> None:
        self._by_project: dict[str, deque[dict[str, Any]]] = {}
        self._per_project = per_project
        self._lock = threading.Lock()

    def add(self, project: str, query: str, at_ms: int, res: RecallResult) -> None:
        entry = {"query": query, "at_ms": at_ms, "retrieval_id": res.retrieval_id, "abstained": res.abstained,
                 "memories": {m.id: m.why.model_dump() for m in res.memories}}
        with self._lock:
            self._by_project.setdefault(project, deque(maxlen=self._per_project)).appendleft(entry)

    def of_memory(self, project: str, memory_id: str, limit: int = 5) -> list[dict[str, Any]]:
        with self._lock:
            rows = list(self._by_project.get(project, ()))
        return [{**r, "why": r["memories"][memory_id]} for r in rows if memory_id in r["memories"]][:limit]


def _when(ms: int | None) -> str:
    if ms is None:
        return "now"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")


def _env() -> Environment:
    env = Environment(loader=PackageLoader("bridge.inspector", "templates"), autoescape=select_autoescape(["html"]))
    env.filters["when"] = _when
    env.filters["q"] = lambda v: quote(str(v), safe="")
    env.globals["urlencode"] = urlencode
    return env


class LoginRequired(Exception):
    def __init__(self, next_url: str) -> None:
        self.next_url = next_url


class Inspector:
    """The inspector's routes; ``pipe`` is the sidecar's pipeline."""

    def __init__(self, pipe: Any, tokens: Tokens, recent: RecentRecalls) -> None:
        self.pipe = pipe
        self.sessions = Sessions(tokens)
        self.recent = recent
        self.env = _env()

    # ---- plumbing ----------------------------------------------------------------------
    def render(self, name: str, http_status: int = 200, sess: UiSession | None = None, **ctx: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(sess=sess, **ctx)
        return HTMLResponse(html, status_code=http_status, headers=SECURITY_HEADERS)

    def session(self, request: Request) -> UiSession:
        sess = self.sessions.get(request.cookies.get(SESSION_COOKIE))
        if sess is None:
            raise LoginRequired(str(request.url.path) + (f"?{request.url.query}" if request.url.query else ""))
        return sess

    async def form(self, request: Request, sess: UiSession | None) -> dict[str, str]:
        """The posted form, after the cross-site checks (Origin, then the session's CSRF token)."""
        if not same_origin(request.headers.get("origin"), request.headers.get("host")):
            raise E.Forbidden("cross-site form post refused")
        raw = (await request.body()).decode("utf-8", "replace")
        fields = {k: v[-1] for k, v in parse_qs(raw, keep_blank_values=True).items()}
        expected = sess.csrf if sess is not None else request.cookies.get(LOGIN_COOKIE)
        if not tokens_match(fields.get("csrf"), expected):
            raise E.Forbidden("the form's CSRF token is missing or wrong; reload the page and try again")
        return fields

    def _project_links(self, project: str) -> dict[str, str]:
        q = urlencode({"project": project})
        return {name: f"/ui/{name}?{q}" for name in ("memories", "inject", "reviews", "work", "stats")}

    # ---- pages -------------------------------------------------------------------------
    def login_form(self, request: Request, next: str = "/ui") -> HTMLResponse:  # noqa: A002 (the query name)
        return self.login_page(request, next)

    def login_page(self, request: Request, next_url: str = "/ui", error: str = "", status: int = 200) -> HTMLResponse:
        token = request.cookies.get(LOGIN_COOKIE) or _new_token()
        resp = self.render("login.html", http_status=status, csrf=token, next_url=_safe_next(next_url), error=error)
        resp.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="strict", path="/ui")
        return resp

    async def login(self, request: Request) -> Response:
        fields = await self.form(request, None)
        role = self.sessions.role_of(fields.get("token", ""))
        if role is None:
            return self.login_page(request, fields.get("next", "/ui"), "That is neither the agent token nor the review token.", 401)
        sid, _ = self.sessions.start(role)
        resp = RedirectResponse(_safe_next(fields.get("next", "/ui")), status_code=303)
        resp.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="strict", path="/ui", max_age=int(self.sessions.ttl_s))
        resp.delete_cookie(LOGIN_COOKIE, path="/ui")
        return resp

    async def logout(self, request: Request) -> Response:
        sess = self.session(request)
        await self.form(request, sess)
        self.sessions.end(request.cookies.get(SESSION_COOKIE))
        resp = RedirectResponse("/ui/login", status_code=303)
        resp.delete_cookie(SESSION_COOKIE, path="/ui")
        return resp

    def projects(self, request: Request) -> HTMLResponse:
        sess = self.session(request)
        names = self.pipe.rt.projects_on_disk()
        rows = []
        for name in names:
            try:
                st = self.pipe.stats(name)
                rows.append({"name": name, "states": st.memories_by_state, "tensions": st.open_tensions,
                             "links": self._project_links(name)})
            except E.DynmemError:
                rows.append({"name": name, "states": {}, "tensions": 0, "links": self._project_links(name)})
        return self.render("projects.html", sess=sess, projects=rows)

    def memories(self, request: Request, project: str, state: str = "", tier: str = "", scope: str = "",
                 kind: str = "", q: str = "") -> HTMLResponse:
        sess = self.session(request)
        rows = self.pipe.memories(project, state or None)
        needle = q.casefold().strip()
        rows = [m for m in rows
                if (not tier or m.tier.value == tier) and (not kind or m.kind.value == kind)
                and (not scope or (m.scope == "global") == (scope == "global"))
                and (not needle or needle in m.text.casefold() or needle in m.key.casefold() or needle == m.id)]
        return self.render("memories.html", sess=sess, project=project, links=self._project_links(project),
                           memories=rows, f={"state": state, "tier": tier, "scope": scope, "kind": kind, "q": q},
                           states=STATES, tiers=TIERS, kinds=KINDS)

    def memory(self, request: Request, project: str, memory_id: str, query: str = "") -> HTMLResponse:
        sess = self.session(request)
        d = self.pipe.detail(project, memory_id)
        sources: list[Any] = []  # a Unit, or None for a source no longer in the log
        for uid in d.memory.source_unit_ids:
            try:
                sources.extend(u for u in self.pipe.log_window(project, uid, 0) if u.id == uid)
            except E.NotFound:
                sources.append(None)
        why = self.pipe.why(project, memory_id, query or None)
        return self.render("memory.html", sess=sess, project=project, links=self._project_links(project), m=d.memory,
                           versions=d.versions, history=d.history, sources=sources, source_ids=d.memory.source_unit_ids,
                           why=why.model_dump() if why is not None else None, query=query,
                           recent=self.recent.of_memory(project, memory_id))

    async def forget(self, request: Request, project: str, memory_id: str) -> Response:
        sess = self.session(request)
        fields = await self.form(request, sess)
        self.pipe.forget(ForgetRequest(project=project, memory_id=memory_id, purge=fields.get("purge") == "1"))
        return RedirectResponse(f"/ui/memory/{quote(memory_id, safe='')}?{urlencode({'project': project})}", status_code=303)

    def inject(self, request: Request, project: str, q: str = "", as_of: str = "") -> HTMLResponse:
        sess = self.session(request)
        res, error = None, ""
        if q.strip():
            as_of_ms = None
            if as_of:
                text = as_of if len(as_of) > 16 else as_of + ":00"  # <input type=datetime-local> has no seconds
                try:
                    as_of_ms = parse_ts(text if text.endswith("Z") or "+" in text[10:] else text + "Z")
                except (E.InvalidInput, OverflowError):
                    error = f"{as_of!r} is not a date and time"
            if not error:
                res = self.pipe.recall(RecallRequest(project=project, query=q, passive=True, as_of_ms=as_of_ms))
        return self.render("inject.html", sess=sess, project=project, links=self._project_links(project), q=q,
                           as_of=as_of, res=res, error=error)

    def reviews(self, request: Request, project: str, status: str = "open") -> HTMLResponse:
        sess = self.session(request)
        rows = self.pipe.reviews(project, None if status == "all" else status)
        return self.render("reviews.html", sess=sess, project=project, links=self._project_links(project),
                           reviews=rows, status=status, decisions=DECISIONS)

    async def decide(self, request: Request, project: str, review_id: str) -> Response:
        sess = self.session(request)
        fields = await self.form(request, sess)
        if not sess.can_review:  # the agent token never settles a review, whatever review.allow_agent says
            raise E.Forbidden("settling a review needs the review token: log out and log in with it")
        decision = DECISIONS.get(fields.get("decision", ""))
        if decision is None:
            raise E.InvalidInput(f"unknown decision {fields.get('decision')!r}")
        self.pipe.decide_review(project, review_id, decision, Origin.HUMAN, fields.get("note", ""), "")
        return RedirectResponse(f"/ui/reviews?{urlencode({'project': project, 'status': 'all'})}", status_code=303)

    def work(self, request: Request, project: str) -> HTMLResponse:
        sess = self.session(request)
        return self.render("work.html", sess=sess, project=project, links=self._project_links(project),
                           repairs=self.pipe.repairs(project, 50), jobs=self.pipe.jobs(project))

    def stats(self, request: Request, project: str) -> HTMLResponse:
        sess = self.session(request)
        return self.render("stats.html", sess=sess, project=project, links=self._project_links(project),
                           stats=self.pipe.stats(project), conflicts=self.pipe.conflicts(project))


def _new_token() -> str:
    import secrets

    return secrets.token_urlsafe(32)


def _safe_next(url: str) -> str:
    """Only a path of the inspector itself: never an open redirect."""
    return url if url.startswith("/ui") and not url.startswith("//") and "\\" not in url else "/ui"


def _html_errors(insp: Inspector, fn: Callable[P, Any]) -> Callable[P, Any]:
    """Our errors as an HTML page with the right status; a missing session as a redirect to log in."""
    import inspect

    def page(exc: Exception, request: Request | None) -> Response:
        if isinstance(exc, LoginRequired):
            return RedirectResponse("/ui/login?" + urlencode({"next": exc.next_url}), status_code=303)
        assert isinstance(exc, E.DynmemError)
        from bridge.app import status_of

        sess = insp.sessions.get(request.cookies.get(SESSION_COOKIE)) if request is not None else None
        return insp.render("error.html", http_status=status_of(exc), sess=sess, message=exc.message, code=exc.code)

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def run_async(*args: P.args, **kwargs: P.kwargs) -> Any:
            try:
                return await fn(*args, **kwargs)
            except (LoginRequired, E.DynmemError) as exc:
                return page(exc, kwargs.get("request"))  # type: ignore[arg-type]
        return run_async

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> Any:
        try:
            return fn(*args, **kwargs)
        except (LoginRequired, E.DynmemError) as exc:
            return page(exc, kwargs.get("request"))  # type: ignore[arg-type]
    return run


def mount_inspector(app: FastAPI, pipe: Any, tokens: Tokens, recent: RecentRecalls) -> None:
    """Add ``/ui`` (pages) and ``/ui/static`` (the script and stylesheet) to the sidecar's app."""
    insp = Inspector(pipe, tokens, recent)
    r = APIRouter(prefix="/ui", include_in_schema=False, default_response_class=HTMLResponse)
    w = functools.partial(_html_errors, insp)
    r.add_api_route("/login", insp.login_form, methods=["GET"])
    r.add_api_route("/login", w(insp.login), methods=["POST"])
    r.add_api_route("/logout", w(insp.logout), methods=["POST"])
    r.add_api_route("", w(insp.projects), methods=["GET"])
    r.add_api_route("/", w(insp.projects), methods=["GET"])
    r.add_api_route("/memories", w(insp.memories), methods=["GET"])
    r.add_api_route("/memory/{memory_id}", w(insp.memory), methods=["GET"])
    r.add_api_route("/memory/{memory_id}/forget", w(insp.forget), methods=["POST"])
    r.add_api_route("/inject", w(insp.inject), methods=["GET"])
    r.add_api_route("/reviews", w(insp.reviews), methods=["GET"])
    r.add_api_route("/reviews/{review_id}", w(insp.decide), methods=["POST"])
    r.add_api_route("/work", w(insp.work), methods=["GET"])
    r.add_api_route("/stats", w(insp.stats), methods=["GET"])
    app.include_router(r)
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="inspector-static")
