"""A pipeline that talks to a running sidecar over HTTP, so that the CLI never opens a store
that the sidecar owns (one writer per SQLite file, and the sidecar's view stays current)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from actors.wire import (
    ForgetRequest, ForgetResult, IngestReport, MemoryDetail, RecallRequest, RecallResult, RememberRequest, RepairRecord,
    ReviewItem,
)
from engine import errors as E
from engine.models import AuditEvent, Job, Memory, Origin, TurnIn
from engine.retrieval import Conflict, Recalled, ScoreTerms

_CODES: dict[str, type[E.DynmemError]] = {cls.code: cls for cls in (
    E.InvalidInput, E.MalformedHistory, E.EmptyQuery, E.NotFound, E.Conflict, E.AuthError, E.Forbidden,
    E.PayloadTooLarge, E.ScopeViolation, E.BudgetExceeded, E.RateLimited, E.StoreError, E.DataDirError,
    E.IndexError_, E.ModelError, E.ModelTimeout, E.ModelUnavailable, E.ModelBadReply, E.ServiceUnavailable)}


def _memory(d: dict[str, Any]) -> Memory:
    return Memory.model_validate({k: d[k] for k in Memory.model_fields if k in d})


class SidecarPipeline:
    """The subset of ``Pipeline`` the CLI uses, served by the sidecar of a data directory."""

    def __init__(self, info: dict[str, Any]) -> None:
        self.wait_drain = False  # drain() waits for the sidecar's worker (replay, demo) instead of returning at once
        self.url = str(info["url"]).rstrip("/")
        self.token = Path(info["token_file"]).read_text(encoding="utf-8").strip()
        review = info.get("review_token_file")
        self.review_token = Path(review).read_text(encoding="utf-8").strip() if review and Path(review).exists() else ""

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None, query: dict[str, Any] | None = None,
              token: str | None = None) -> Any:
        q = "?" + urllib.parse.urlencode({k: v for k, v in (query or {}).items() if v is not None}) if query else ""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path + q, data=data, method=method, headers={
            "Authorization": f"Bearer {token or self.token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return json.loads(r.read() or b"null")
        except urllib.error.HTTPError as exc:
            try:
                err = json.loads(exc.read())
            except ValueError:
                raise E.ServiceUnavailable(f"the sidecar answered {exc.code}") from exc
            raise _CODES.get(err.get("code", ""), E.DynmemError)(err.get("error", "error")) from exc
        except OSError as exc:
            raise E.ServiceUnavailable(f"the sidecar at {self.url} does not answer: {exc}") from exc

    def observe(self, turns: list[TurnIn]) -> list[Any]:
        from actors.pipeline import ObserveAck

        acks = []
        for t in turns:
            ts = datetime.fromtimestamp(t.ts_ms / 1000, tz=timezone.utc).isoformat() if t.ts_ms else None
            r = self._call("POST", "/v1/observe", {"project": t.project, "session": t.session, "user": t.user,
                                                   "assistant": t.assistant, "request_id": t.request_id, "ts": ts})
            acks.append(ObserveAck(unit_id=r["unit_id"], project=t.project, turn=r["turn"], created=r["created"]))
        return acks

    def drain(self, project: str, progress: Any = None, wait: bool = False, timeout_s: float = 3600.0) -> Any:
        """The sidecar's worker distils turns in the background; ``wait`` polls until its jobs are done."""
        from actors.pipeline import DrainReport

        if not (wait or self.wait_drain):
            return DrainReport(jobs_done=0, jobs_failed=0, dead=0, adjudicated=0, outcomes={"queued in the sidecar": 1})
        deadline = time.monotonic() + timeout_s
        while True:
            counts = self._call("GET", "/v1/jobs", query={"project": project})["jobs"]
            live = sum(c.get("pending", 0) + c.get("running", 0) for c in counts.values())
            dead = sum(c.get("dead", 0) for c in counts.values())
            if live == 0:
                done = sum(c.get("done", 0) for c in counts.values())
                return DrainReport(jobs_done=done, jobs_failed=0, dead=dead, adjudicated=0,
                                   outcomes={"distilled by the sidecar": done})
            if time.monotonic() > deadline:
                raise E.ServiceUnavailable(f"the sidecar still has {live} jobs of {project!r} after {timeout_s:.0f} s")
            time.sleep(0.5)

    def stats(self, project: str) -> Any:
        from actors.wire import Stats

        return Stats.model_validate(self._call("GET", "/v1/stats", query={"project": project}))

    def projects(self) -> list[str]:
        return list(self._call("GET", "/v1/projects")["projects"])

    def export(self, project: str) -> list[Memory]:
        return [Memory.model_validate(m) for m in self._call("GET", "/v1/export", query={"project": project})["memories"]]

    def embedder_id(self) -> str:
        """The HTTP API carries no vectors: nothing exported through a sidecar names a vector space."""
        return ""

    def export_vectors(self, project: str, ids: Sequence[str]) -> tuple[str, dict[str, Any]]:
        """No vectors through the HTTP API: such an export is imported by embedding every memory."""
        return "", {}

    def import_memories(self, project: str, memories: list[Memory], request_id: str = "",
                        vectors: Any = None, embedder: str = "") -> int:
        """Through the sidecar every memory is embedded again (the HTTP API carries no vectors)."""
        from bridge.routes.projects import IMPORT_CHUNK

        n = 0
        for i in range(0, len(memories), IMPORT_CHUNK):
            chunk = [m.model_dump(mode="json") for m in memories[i:i + IMPORT_CHUNK]]
            n += int(self._call("POST", "/v1/import", {"project": project, "memories": chunk})["imported"])
        return n

    def job_list(self, project: str, state: str | None = None, limit: int = 200) -> tuple[dict[str, dict[str, int]], list[Job]]:
        r = self._call("GET", "/v1/jobs/list", query={"project": project, "state": state, "limit": limit})
        return r["counts"], [Job.model_validate(j) for j in r["jobs"]]

    def retry_job(self, project: str, job_id: int) -> None:
        self._call("POST", f"/v1/jobs/{int(job_id)}/retry", query={"project": project})

    def repairs(self, project: str, limit: int = 100) -> list[RepairRecord]:
        rows = self._call("GET", "/v1/repairs", query={"project": project, "limit": limit})["repairs"]
        return [RepairRecord.model_validate(r) for r in rows]

    def recall(self, req: RecallRequest) -> RecallResult:
        as_of = datetime.fromtimestamp(req.as_of_ms / 1000, tz=timezone.utc).isoformat() if req.as_of_ms else None
        r = self._call("POST", "/v1/recall", {"project": req.project, "query": req.query, "k": req.k,
                                              "budget_tokens": req.budget_tokens, "passive": req.passive, "as_of": as_of})
        zero = ScoreTerms(cos=0, lex=0, w_lex_x_lex=0, pool_prior=0, freshness=0, alpha_x_freshness=0, tier_bonus=0,
                          gate=0, score=0, value=0, confidence=0)
        return RecallResult(retrieval_id=r["retrieval_id"], abstained=r["abstained"], context=r["context"],
                            memories=tuple(Recalled(**m, why=zero) for m in r["memories"]),
                            conflicts=tuple(Conflict(**c) for c in r["conflicts"]))

    def remember(self, req: RememberRequest) -> IngestReport:
        r = self._call("POST", "/v1/memories", {"project": req.project, "text": req.text, "scope": req.scope,
                                                "tier": req.tier.value, "ttl_hours": req.ttl_hours,
                                                "sensitivity": req.sensitivity.value})
        return IngestReport(outcomes=r["outcomes"], memory_ids=tuple(r["memory_ids"]), applied=True)

    def forget(self, req: ForgetRequest) -> ForgetResult:
        ids = [req.memory_id] if req.memory_id else [m.id for m in self.memories(req.project)
                                                     if m.servable and (req.match or "").casefold() in m.text.casefold()]
        if not ids:
            raise E.NotFound(f"no servable memory matches {req.match!r}")
        retired: list[str] = []
        for mid in ids:
            r = self._call("DELETE", f"/v1/memories/{urllib.parse.quote(mid)}", query={"project": req.project,
                                                                                      "purge": str(req.purge).lower()})
            retired += r["retired"]
        return ForgetResult(retired=tuple(retired), purged=req.purge)

    def patch(self, project: str, memory_id: str, tier: str | None = None, sensitivity: str | None = None) -> Memory:
        return _memory(self._call("PATCH", f"/v1/memories/{urllib.parse.quote(memory_id)}",
                                  {"tier": tier, "sensitivity": sensitivity}, query={"project": project}))

    def global_memories(self, state: str | None = None) -> list[Memory]:
        return [_memory(m) for m in self._call("GET", "/v1/global/memories", query={"state": state})["memories"]]

    def global_detail(self, memory_id: str) -> MemoryDetail:
        r = self._call("GET", f"/v1/global/memories/{urllib.parse.quote(memory_id)}")
        return MemoryDetail(memory=_memory(r["memory"]), history=tuple(AuditEvent.model_validate(e) for e in r["history"]),
                            versions=tuple(_memory(v) for v in r["versions"]))

    def global_forget(self, memory_id: str | None = None, match: str | None = None, purge: bool = False,
                      request_id: str = "") -> ForgetResult:
        ids = [memory_id] if memory_id else [m.id for m in self.global_memories()
                                             if m.servable and (match or "").casefold() in m.text.casefold()]
        if not ids:
            raise E.NotFound(f"no servable global memory matches {match!r}")
        retired: list[str] = []
        for mid in ids:
            r = self._call("DELETE", f"/v1/global/memories/{urllib.parse.quote(mid)}", query={"purge": str(purge).lower()})
            retired.extend(r["retired"])
        return ForgetResult(retired=tuple(retired), purged=purge)

    def global_patch(self, memory_id: str, tier: str | None = None, sensitivity: str | None = None) -> Memory:
        return _memory(self._call("PATCH", f"/v1/global/memories/{urllib.parse.quote(memory_id)}",
                                  {"tier": tier, "sensitivity": sensitivity}))

    def memories(self, project: str, state: str | None = None) -> list[Memory]:
        r = self._call("GET", "/v1/memories", query={"project": project, "state": state})
        return [_memory(m) for m in r["memories"]]

    def detail(self, project: str, memory_id: str) -> MemoryDetail:
        r = self._call("GET", f"/v1/memories/{urllib.parse.quote(memory_id)}/why", query={"project": project})
        return MemoryDetail(memory=_memory(r["memory"]), history=tuple(AuditEvent.model_validate(e) for e in r["history"]),
                            versions=tuple(_memory(v) for v in r["versions"]))

    def why(self, project: str, memory_id: str, query: str | None = None) -> ScoreTerms | None:
        r = self._call("GET", f"/v1/memories/{urllib.parse.quote(memory_id)}/why", query={"project": project, "query": query})
        return ScoreTerms.model_validate(r["why"]) if r.get("why") else None

    def reviews(self, project: str, status: str | None = "open") -> list[ReviewItem]:
        from actors.store.memory_store import Review

        r = self._call("GET", "/v1/reviews", query={"project": project, "status": status or "all"})
        return [ReviewItem(review=Review.model_validate({k: v for k, v in x.items() if k != "memories"}),
                           memories=tuple(_memory(m) for m in x["memories"])) for x in r["reviews"]]

    def decide_review(self, project: str, review_id: str, decision: str, decided_by: Origin, note: str = "",
                      request_id: str = "") -> list[Memory]:
        r = self._call("POST", f"/v1/reviews/{urllib.parse.quote(review_id)}",
                       {"project": project, "decision": decision, "note": note}, token=self.review_token or None)
        return [_memory(m) for m in r["memories"]]
