"""Pipeline: the public API over the actor graph (used by the CLI, the bridge and eval/).

It moves work along the graph: units leased from a LogActor go to the extraction pool in
batches, their candidates are embedded in one IndexActor call and ingested by the
project's EngineActor in turn order; tensions are then judged by the AdjudicationActor.
``drain`` returns only when no job of the project is pending or running.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Protocol, TypeVar

import numpy as np

from pydantic import BaseModel, ConfigDict

from actors import repair
from actors.clients import EngineClient, LogClient
from actors.extraction_actor import Extracted
from actors.index_actor import IndexService
from actors.launch import Runtime
from actors.ref import Pending, Ref
from actors.store.log_store import LogHit
from actors.store.memory_store import AuditRecord
from actors.wire import (
    ForgetRequest, ForgetResult, IngestJob, IngestOutcome, IngestReport, MemoryDetail, OpenConflict, RecallRequest, RecallResult, RememberRequest,
    RepairRecord, ReviewItem, Stats,
)
from engine.errors import ActorDied, DynmemError, EmptyQuery, ModelTimeout, ModelUnavailable, NotFound
from engine.gate import stored_id
from engine.limits import check_turn_size, check_turn_time
from engine.models import Job, Memory, Origin, Sensitivity, TurnIn, Unit
from engine.retrieval import ScoreTerms
from engine.scopes import project_scope
from engine.miss_signals import is_correction, is_memory_question


class ObserveAck(BaseModel):
    model_config = ConfigDict(frozen=True)
    unit_id: str
    project: str
    turn: int
    created: bool


class DrainReport(BaseModel):
    model_config = ConfigDict(frozen=True)
    jobs_done: int
    jobs_failed: int
    dead: int
    adjudicated: int
    repaired: int = 0
    outcomes: dict[str, int]


#: How long one engine call of a batch's ingest may run before it commits and returns (the rest
#: follows in the next call): a recall of the project being replayed waits for one slice at most.
#: 50 ms: a few jobs on a loaded 2-core machine, one commit (fsync) per slice (issue 12).
INGEST_SLICE_S = 0.05

#: A leased batch of extract jobs: its lease token, and (job, its units, the pending extraction) each.
Batch = tuple[str, list[tuple[Job, list[Unit], Pending[Extracted]]]]


class _LeaseKeeper:
    """Renews the leases of the batches a drain holds while it waits for their extractions.

    A lease bounds how long a job stays with a holder that died (``[runtime] lease_s``); a live
    holder whose jobs queue behind others in the extraction pool (a 3 s endpoint, one request in
    flight, 64 jobs leased) renews them every third of a lease, so that none is leased again
    and sent to the model a second time while it is still waiting for its turn."""

    def __init__(self, log: LogClient, tokens: list[str], lease_ms: int) -> None:
        self.log = log
        self.tokens = tokens
        self.lease_ms = lease_ms
        self.every_s = max(0.05, lease_ms / 3000)
        self.renewed = 0

    def renew(self) -> None:
        try:
            self.renewed += self.log.renew(self.tokens, self.lease_ms)
        except ActorDied:
            pass  # the log is restarting: the leases may run out, the jobs are then taken again (at-least-once)


_T = TypeVar("_T")


class Offload(Protocol):
    """Runs a blocking call on a thread and awaits it (the sidecar passes Starlette's ``run_in_threadpool``)."""

    def __call__(self, fn: Callable[[], _T], /) -> Awaitable[_T]: ...


class Pipeline:
    """observe -> log -> extract -> embed -> ingest -> adjudicate, and the read/forget paths."""

    def __init__(self, runtime: Runtime, batch_jobs: int = 32) -> None:
        self.rt = runtime
        self.batch_jobs = batch_jobs
        self._rr = 0
        self.deferred = 0  # jobs given back because the model endpoint was down (not failures)
        self.restarts = 0  # drain rounds cut short by an actor that died (and was restarted)
        self.redone = 0  # extractions sent to another worker because theirs died
        self.signals = runtime.signals  # abstained recalls' repair signals, off the recall path (one queue a runtime)

    def _resume_ms(self) -> int:
        """When a job deferred for an unavailable endpoint is tried again (one breaker cooldown)."""
        return self.rt.clock.now_ms() + max(50, int(self.rt.settings.model.breaker_cooldown_s * 1000))

    # ---- write path ------------------------------------------------------------------
    def observe(self, turns: Sequence[TurnIn]) -> list[ObserveAck]:
        """Append turns to their projects' logs (durable before this returns); one ack per turn, in order."""
        by_project = self._by_project(turns)
        acks: list[ObserveAck | None] = [None] * len(turns)
        for project, idx in by_project.items():
            self.signals.settle(project)  # a queued signal sees the log as its recall did
            log = self.rt.log(project)
            self._signal_corrections(log, self._fill_acks(acks, project, idx, log.append([turns[i] for i in idx])))
        return [a for a in acks if a is not None]

    async def observe_async(self, turns: Sequence[TurnIn], offload: Offload) -> list[ObserveAck]:
        """:meth:`observe` on an event loop: the log actors of live projects are called and their
        acknowledgements awaited on the loop, so no thread waits for them (the sidecar's group
        commit, issue 15); anything else (a project to open, an in-process runtime, a log actor
        being restarted, a correction to signal) runs the blocking path through ``offload``."""
        by_project = self._by_project(turns)
        live = {project: self.rt.live_log(project) for project in by_project}
        logs = {project: log for project, log in live.items() if log is not None and log.remote}
        if len(logs) < len(by_project):
            return await offload(lambda: self.observe(turns))
        for project in by_project:
            await self.signals.settle_async(project)
        pending = {project: log.submit_append([turns[i] for i in by_project[project]]) for project, log in logs.items()}
        acks: list[ObserveAck | None] = [None] * len(turns)
        for project, idx in by_project.items():
            try:
                stored = await Ref.result_async(pending[project])
            except ActorDied:  # being restarted: the blocking path waits for it (append is idempotent)
                stored = await offload(functools.partial(self._append, project, [turns[i] for i in idx]))
            corrections = self._fill_acks(acks, project, idx, stored)
            if corrections:
                await offload(functools.partial(self._signal_corrections, logs[project], corrections))
        return [a for a in acks if a is not None]

    def _append(self, project: str, turns: Sequence[TurnIn]) -> list[tuple[Unit, bool]]:
        return self.rt.log(project).append(turns)

    def _by_project(self, turns: Sequence[TurnIn]) -> dict[str, list[int]]:
        """The positions of the turns of each project; every turn is checked before any is
        logged (never half a batch)."""
        now_ms = self.rt.clock.now_ms()
        by_project: dict[str, list[int]] = {}
        for i, t in enumerate(turns):
            self.check_turn(t, now_ms)
            by_project.setdefault(t.project, []).append(i)
        return by_project

    @staticmethod
    def _fill_acks(acks: list[ObserveAck | None], project: str, idx: Sequence[int],
                   stored: Sequence[tuple[Unit, bool]]) -> list[Unit]:
        """Put each stored turn's ack at its turn's position; returns the new units that open with
        a user correction ("no, it's ..."), a miss signal read on the unit as stored (redacted)."""
        corrections: list[Unit] = []
        for i, (unit, created) in zip(idx, stored, strict=True):
            acks[i] = ObserveAck(unit_id=unit.id, project=project, turn=unit.turn, created=created)
            if created and is_correction(unit.user):
                corrections.append(unit)
        return corrections

    def _signal_corrections(self, log: LogClient, corrections: Sequence[Unit]) -> None:
        for unit in corrections:
            repair.signal(log, "correction", unit.user, bound_turn=unit.turn + 1, session=unit.session,
                          daily_cap=self.rt.settings.repair.daily_cap)

    def check_turn(self, t: TurnIn, now_ms: int | None = None) -> None:
        """Raise the input error a turn would meet in :meth:`observe` (name, sizes, time)."""
        project_scope(t.project)  # validates the name
        check_turn_size(t.user, t.assistant, t.session, t.request_id, t.project)
        # a far-future turn would stay "latest" for ever
        check_turn_time(t.ts_ms, self.rt.clock.now_ms() if now_ms is None else now_ms)

    def pump(self, project: str, outcomes: dict[str, int] | None = None, batch: int | None = None) -> tuple[int, int]:
        """Process one batch of extract jobs (``batch`` of them, default ``batch_jobs``); returns (done, failed)."""
        d, f, _ = self.pump_ahead(project, outcomes, None, lookahead=False, batch=batch)
        return d, f

    def pump_ahead(self, project: str, outcomes: dict[str, int] | None, ahead: Batch | None,
                   lookahead: bool = True, batch: int | None = None,
                   logging: threading.Event | None = None) -> tuple[int, int, Batch | None]:
        """Ingest one batch while the next one is being extracted; returns (done, failed, next batch).

        ``ahead`` is the batch a previous call started (its extractions in flight). With a
        latency-bound endpoint this keeps requests in flight while a batch is ingested, so
        throughput follows the requests in flight rather than their sum with the ingest time
        (issue 12). Batches are ingested in lease order, and the units of each in turn order.

        ``logging``: set once the turns being distilled are all in the log (see :meth:`drain`)."""
        d, f, queue = self.pump_queue(project, outcomes, [ahead] if ahead is not None else [],
                                      1 if lookahead else 0, batch, logging)
        return d, f, queue[0] if queue else None

    def pump_queue(self, project: str, outcomes: dict[str, int] | None, queue: Sequence[Batch], depth: int,
                   batch: int | None = None, logging: threading.Event | None = None) -> tuple[int, int, list[Batch]]:
        """:meth:`pump_ahead` with ``depth`` batches kept in extraction while the oldest of ``queue``
        is ingested; returns (done, failed, the batches still in extraction, oldest first).

        The batches and their order are those of ``depth`` 1 (each lease takes the next jobs in
        order), so the memories are too; a deeper queue keeps the request slots busy while an
        ingest is slower than the extraction of one batch (a loaded data node)."""
        log = self.rt.log(project)
        engine = self.rt.engine(project)
        started: list[Batch] = list(queue)
        try:
            if not started:
                first = self._start_batch(project, log, batch, logging, wait=True)
                if first is None:
                    return 0, 0, []
                started.append(first)
            while len(started) < 1 + depth:
                nxt = self._start_batch(project, log, batch, logging, wait=False, held=[t for t, _ in started])
                if nxt is None:
                    break
                started.append(nxt)
            d, f = self._finish_batch(project, log, engine, started[0], outcomes, held=[t for t, _ in started])
            return d, f, started[1:]
        except ActorDied:
            # The log or the engine died mid-batch: give the batches back at once (no attempt spent)
            # rather than after their lease; a finished job is left alone, an ingest is exactly-once.
            for token, work in started:
                for job, _, _ in work:
                    try:
                        log.defer(job.id, 0, "a pipeline worker died during the batch", token)
                    except ActorDied:
                        break  # still restarting: the lease runs out instead
            raise

    def _lookahead(self) -> int:
        """Batches kept in extraction beyond the one being ingested: enough for about four rounds of
        the pool's request slots (workers x ``[model] max_concurrency``), between one and three."""
        slots = len(self.rt.extractors) * self.rt.pool_bounds()[2]
        return max(1, min(3, slots * 4 // max(1, self.batch_jobs)))

    def _token(self) -> str:
        """A fresh lease token of this run: acks name it, so a stale holder's late ack is ignored."""
        import uuid

        return f"{self.rt.run_id}:{uuid.uuid4().hex[:12]}"

    def _start_batch(self, project: str, log: LogClient, batch: int | None = None,
                     logging: threading.Event | None = None, wait: bool = True,
                     held: Sequence[str] = ()) -> Batch | None:
        """Lease a batch of extract jobs and send their units to the extraction pool (no wait).

        While ``logging`` is not set (turns are still being logged), only a full batch is leased:
        the batches, and so the memories, are those of a drain that starts once all is logged. The
        call waits for a full batch with ``wait``, else gives ``None`` at once (a lookahead).

        ``held``: the lease tokens of the batches still in extraction; the same log call renews
        their leases before it takes new jobs (a job waiting in the pool's queue is never taken
        again as if its holder had died). The lease, the units and the backlog are one call."""
        size = batch or self.batch_jobs
        token = self._token()
        while True:
            full_only = logging is not None and not logging.is_set()  # read before the lease
            # A retry of this call after the log actor died returns the same batch (same token).
            leased = log.lease_batch(["extract"], size, self._lease_ms(), token, held, size if full_only else 0)
            if leased.jobs or not full_only:
                break
            if not wait or logging is None:
                return None
            logging.wait(0.02)
        if not leased.jobs:
            return None
        # The elastic pool follows the backlog: this batch plus what is still pending.
        self.rt.scale_extractors(len(leased.jobs) + leased.pending)
        scope = project_scope(project)
        work: list[tuple[Job, list[Unit], Pending[Extracted]]] = []
        for job, units in zip(leased.jobs, leased.units):
            worker = self.rt.extractors[self._rr % len(self.rt.extractors)]
            self._rr += 1
            work.append((job, list(units), worker.submit_extract(list(units), scope)))
        return token, work

    def _finish_batch(self, project: str, log: LogClient, engine: EngineClient, batch: Batch,
                      outcomes: dict[str, int] | None, held: Sequence[str] = ()) -> tuple[int, int]:
        """Wait for a batch's extractions, embed their candidates in one call, ingest in turn order.

        ``held``: the lease tokens of every batch in extraction (this one included), renewed
        while the wait lasts (see :meth:`_extracted`)."""
        scope = project_scope(project)
        token, work = batch
        done = failed = 0
        extracted: list[tuple[Job, list[Unit], Extracted]] = []
        keep = _LeaseKeeper(log, list(held) or [token], self._lease_ms())
        for job, units, fut in work:
            try:
                extracted.append((job, units, self._extracted(fut, units, scope, keep)))
            except (ModelUnavailable, ModelTimeout) as exc:  # endpoint down: wait, no attempt spent
                log.defer(job.id, self._resume_ms(), f"extract: {exc}", token)
                self.deferred += 1
            except ActorDied as exc:
                # The worker died, not the extraction: retried at once (on the restarted worker
                # or another one) without spending an attempt, and never handed to repair.
                log.defer(job.id, 0, f"extract: {exc}", token)
                self.deferred += 1
            except Exception as exc:  # a failed extraction is retried later, never dropped
                if log.fail(job.id, f"extract: {exc}", token) == "dead" and units:
                    # Failed for good: the investigator may still recover the facts from the log.
                    repair.signal(log, "extraction_failed", " ".join(u.user for u in units)[:2000],
                                  bound_turn=max(u.turn for u in units) + 1, daily_cap=self.rt.settings.repair.daily_cap)
                failed += 1
        cands = [c for _, _, ex in extracted for c in ex.candidates]
        texts = [c.text for c in cands]
        local_only = [c.sensitivity == Sensitivity.LOCAL_ONLY for c in cands]
        try:
            # the IndexActor's bulk group: a recall's query embedding never waits behind this batch
            vectors = self.rt.index.ref.call_in("bulk", IndexService.embed, texts, local_only) if texts else None
        except (ModelUnavailable, ModelTimeout) as exc:  # a remote embedder is down: all wait
            for job, _, _ in extracted:
                log.defer(job.id, self._resume_ms(), f"embed: {exc}", token)
                self.deferred += 1
            return done, failed
        ordered = sorted(range(len(extracted)), key=lambda i: min((u.turn for u in extracted[i][1]), default=0))
        starts = np.cumsum([0] + [len(ex.candidates) for _, _, ex in extracted])
        jobs = [IngestJob(receipt=extracted[i][0].key, candidates=extracted[i][2].candidates, units=len(extracted[i][1]))
                for i in ordered]
        # The batch's vectors in ingest order (the embed call above took them in lease order).
        vecs = (np.concatenate([vectors[starts[i]:starts[i + 1]] for i in ordered])
                if vectors is not None and len(ordered) else None)
        results: list[IngestOutcome] = []
        try:
            # A few engine calls and store transactions for the batch, in turn order (issue 12): each
            # call ingests what fits in INGEST_SLICE_S, so that a recall waits for a slice at most.
            while len(results) < len(jobs):
                rest = jobs[len(results):]
                done_cands = sum(len(j.candidates) for j in jobs[:len(results)])
                part = engine.ingest_many(rest, vecs[done_cands:] if vecs is not None else None, INGEST_SLICE_S)
                if not part:
                    raise AssertionError("ingest_many returned no outcome")  # it always ingests one job
                results.extend(part)
        except ActorDied as exc:  # the engine restarts; the ingest receipts make a retry exactly-once
            for i in ordered[len(results):]:
                log.defer(extracted[i][0].id, 0, f"ingest: {exc}", token)
                self.deferred += 1
            ordered = ordered[:len(results)]
        except DynmemError as exc:  # a slice's commit failed (a store error): every job of it failed
            for i in ordered[len(results):]:
                log.fail(extracted[i][0].id, f"ingest: {exc}", token)
                failed += 1
            ordered = ordered[:len(results)]
        ingested: list[int] = []
        for i, res in zip(ordered, results):
            job = extracted[i][0]
            if res.report is None:
                log.fail(job.id, f"ingest: {res.error}", token)
                failed += 1
                continue
            ingested.append(job.id)
            done += 1
            if outcomes is not None:
                for k, v in res.report.outcomes.items():
                    outcomes[k] = outcomes.get(k, 0) + v
        if ingested:
            log.complete_many(ingested, token)  # one transaction for the batch's acks
        return done, failed

    def _extracted(self, fut: Pending[Extracted], units: list[Unit], scope: str,
                   keep: _LeaseKeeper | None = None, tries: int = 4) -> Extracted:
        """The result of an extraction; if its worker died, the same units go to the next worker
        at once (Ray restarts the dead one), so the batch keeps its turn order and no attempt
        is spent. Raises ``ActorDied`` only if every try met a dying worker.

        While it waits, ``keep`` renews the leases of the batches in extraction (a slow endpoint
        with few requests in flight can hold a job in the pool's queue longer than ``lease_s``)."""
        for attempt in range(tries):
            try:
                while keep is not None and not Ref.ready(fut, keep.every_s):
                    keep.renew()
                return Ref.result(fut)
            except ActorDied:
                if attempt == tries - 1:
                    raise
                ex = self.rt.extractors[self._rr % len(self.rt.extractors)]
                self._rr += 1
                self.redone += 1
                fut = ex.submit_extract(units, scope)
        raise AssertionError("unreachable")

    def adjudicate(self, project: str, n: int = 32, pause: Callable[[], object] | None = None) -> int:
        """Judge leased tensions of a project with the model client and apply the verdicts.

        ``pause`` is called before each verdict (the sidecar's worker waits there while agents'
        calls are in flight, so that a recall never queues behind a whole batch)."""
        engine = self.rt.engine(project)
        decided = 0
        token = self._token()
        for job_id, tension_id, a, b in engine.lease_adjudications(n, self._lease_ms(), token):
            if pause is not None:
                pause()
            try:
                j = self.rt.adjudicator.judge(a, b)
                by = Origin.RULES if j.decided_by == "rules" else Origin.JUDGE
                engine.decide(tension_id, j.verdict, by, f"{j.decided_by}: {j.reason}")
                engine.complete_job(job_id, token)
                decided += 1
            except (ModelUnavailable, ModelTimeout, ActorDied) as exc:  # a dependency is down: no attempt spent
                engine.defer_job(job_id, self._resume_ms() if not isinstance(exc, ActorDied) else 0, str(exc), token)
                self.deferred += 1
            except DynmemError as exc:
                engine.fail_job(job_id, str(exc), token)
        return decided

    def _lease_ms(self) -> int:
        return int(self.rt.settings.runtime.lease_s * 1000)

    def jobs(self, project: str) -> dict[str, dict[str, int]]:
        """Job counts by kind and state, on the log and on the engine."""
        self._known(project)
        self.signals.settle(project)
        counts: dict[str, dict[str, int]] = dict(self.rt.log(project).job_counts())
        counts.update(self.rt.engine(project).job_counts())
        if lost := self.signals.lost(project):  # repair signals that failed or were dropped (``actors.signals``)
            counts["repair_signal"] = lost
        return counts

    def job_list(self, project: str, state: str | None = None, limit: int = 200) -> tuple[dict[str, dict[str, int]], list[Job]]:
        """The log's job counts and its jobs (newest first), for ``dynmem jobs list``."""
        log = self.rt.log(self._known(project))
        self.signals.settle(project)
        return dict(log.job_counts()), list(log.jobs(state, None, limit))

    def retry_job(self, project: str, job_id: int) -> None:
        """Give a dead log job another try."""
        self.rt.log(self._known(project)).retry_job(job_id)

    def pending(self, project: str) -> int:
        """Live jobs that this pipeline drains (extract and repair on the log, adjudicate on the engine)."""
        self.signals.settle(project)
        logc = self.rt.log(project).job_counts()
        ecounts = self.rt.engine(project).job_counts().get("adjudicate", {})
        live = (logc.get("extract", {}), logc.get("repair", {}), ecounts)
        return sum(c.get("pending", 0) + c.get("running", 0) for c in live)

    def drain(self, project: str, progress: Callable[[int], None] | None = None, max_rounds: int = 100_000,
              logging: threading.Event | None = None) -> DrainReport:
        """Run every pending job of ``project`` to completion (or to its visible dead state).

        ``logging``: turns of the project are still being logged by another thread until it is
        set (a replay distils the first turns while it logs the rest); until then extract jobs are
        leased in full batches only, and the drain does not end.
        """
        import time

        self.signals.settle(project)  # a repair job that an abstained recall asked for is drained too
        done = failed = adjudicated = repaired = 0
        outcomes: dict[str, int] = {}
        ahead: list[Batch] = []  # the batches being extracted while the oldest one is ingested
        for _ in range(max_rounds):
            try:
                d, f, ahead = self.pump_queue(project, outcomes, ahead, self._lookahead(), logging=logging)
                a = self.adjudicate(project)
                # repairs read the log as extracted so far: never while turns are still being logged
                r = self.repair(project) if d == 0 and (logging is None or logging.is_set()) else 0
                done, failed, adjudicated, repaired = done + d, failed + f, adjudicated + a, repaired + r
                if progress and d:
                    progress(d)
                if d == 0 and f == 0 and a == 0 and r == 0:
                    logged = logging is None or logging.is_set()  # first: then pending counts every job logged
                    if logged and self.pending(project) == 0:
                        break
                    time.sleep(0.05)  # a retry is backing off
            except ActorDied:
                # A log or engine actor died mid-round and is being restarted from its stores; its
                # leased jobs come back when their lease runs out. Nothing is lost: go on.
                ahead = []  # given back by pump_queue
                self.restarts += 1
                time.sleep(0.2)
        dead = sum(k.get("dead", 0) for k in self.rt.log(project).job_counts().values())
        return DrainReport(jobs_done=done, jobs_failed=failed, dead=dead, adjudicated=adjudicated, repaired=repaired,
                           outcomes=outcomes)

    # ---- read path ---------------------------------------------------------------------
    def _known(self, project: str) -> str:
        project_scope(project)
        if not self.rt.has_project(project):
            raise NotFound(f"no project named {project!r} in this data directory")
        return project

    def recall(self, req: RecallRequest) -> RecallResult:
        if not req.query.strip():
            raise EmptyQuery("the query is empty")
        project_scope(req.project)  # validates the name
        if not self.rt.has_project(req.project):
            # A project without stores: the global engine answers (global memories only), and no
            # folder, log or engine is created for a read (issue 17, failure 5).
            return self.rt.global_engine.recall(req)
        res: RecallResult = self.rt.engine(req.project).recall(req)
        if self._repair_wanted(req, res):
            self.signals.submit(req.project, functools.partial(self._signal_abstained, req))
        return res

    async def recall_async(self, req: RecallRequest, offload: Offload) -> RecallResult:
        """:meth:`recall` on an event loop: a live project's engine actor is called and its answer
        awaited on the loop (no thread waits for it); everything else (a project to open, an
        in-process runtime, an engine being restarted, a repair signal) runs :meth:`recall`'s
        blocking path through ``offload`` (a thread pool)."""
        if not req.query.strip():
            raise EmptyQuery("the query is empty")
        project_scope(req.project)  # validates the name
        engine = self.rt.live_engine(req.project)
        if engine is None or not engine.remote:
            return await offload(lambda: self.recall(req))
        try:
            res = await Ref.result_async(engine.submit_recall(req))
        except ActorDied:  # being restarted: the blocking path waits for it
            return await offload(lambda: self.recall(req))
        if self._repair_wanted(req, res):
            self.signals.submit(req.project, functools.partial(self._signal_abstained, req))
        return res

    def _repair_wanted(self, req: RecallRequest, res: RecallResult) -> bool:
        """Whether an abstained recall may be a miss worth a repair job (a live memory question)."""
        return bool(res.abstained and not req.passive and req.as_of_ms is None and self.rt.settings.repair.on_abstain
                    and is_memory_question(req.query))

    def _signal_abstained(self, req: RecallRequest) -> None:
        """Queue a repair job for an abstained recall whose question the log can answer."""
        log = self.rt.log(req.project)
        if log.search(req.query, 1):
            repair.signal(log, "abstained", req.query, daily_cap=self.rt.settings.repair.daily_cap)

    def remember(self, req: RememberRequest) -> IngestReport:
        if req.request_id:
            req = req.model_copy(update={"request_id": stored_id(req.request_id)})
        if req.scope == "global":
            return self.rt.global_engine.remember(req)
        return self.rt.engine(req.project).remember(req)

    def forget(self, req: ForgetRequest) -> ForgetResult:
        """Retract (or purge) memories; a purge also erases the source turns from the log."""
        self._known(req.project)
        if req.purge:
            self.signals.settle(req.project)  # a queued signal runs before the purge, never on what it erases
        res: ForgetResult = self.rt.engine(req.project).forget(req)
        if req.purge and res.purged_units:
            self.rt.log(req.project).purge_units(list(res.purged_units))
        if req.purge:
            from pathlib import Path

            from actors.llm.response_cache import purge_matching

            cache = Path(self.rt.settings.model.cache_dir) if self.rt.settings.model.cache_dir else self.rt.data_dir / "cache"
            for text in res.erase_from_caches:
                purge_matching(cache, text)
            if res.erase_from_caches:
                self._purge_worker_caches(list(res.erase_from_caches))
        return res.model_copy(update={"erase_from_caches": ()})

    def _purge_worker_caches(self, texts: list[str]) -> int:
        """Each model worker erases ``texts`` from its own reply cache, on whichever node it runs."""
        pending = [w.submit_purge_cache(texts) for w in self.rt.extractors]  # all at once, then collected
        pending += [self.rt.adjudicator.submit_purge_cache(texts), self.rt.investigator.submit_purge_cache(texts)]
        return sum(Ref.result(p) for p in pending)

    # ---- the global scope (the user's memories, shared by every project) ------------------------
    def global_memories(self, state: str | None = None) -> list[Memory]:
        """Every memory of the global scope (optionally in one state)."""
        return self.rt.global_engine.list_memories(state)

    def global_detail(self, memory_id: str) -> MemoryDetail:
        return self.rt.global_engine.detail(memory_id)

    def global_forget(self, memory_id: str | None = None, match: str | None = None, purge: bool = False,
                      request_id: str = "") -> ForgetResult:
        """Retract (or purge) global memories; audited like a project's. A purge erases the memory's
        text; the turns it came from stay in their projects' logs (forget them there by project)."""
        req = ForgetRequest(project="", memory_id=memory_id, match=match, purge=purge, request_id=stored_id(request_id))
        res: ForgetResult = self.rt.global_engine.forget(req)
        return res.model_copy(update={"erase_from_caches": (), "purged_units": ()})

    def global_patch(self, memory_id: str, tier: str | None = None, sensitivity: str | None = None) -> Memory:
        return self.rt.global_engine.patch(memory_id, tier, sensitivity)

    def memories(self, project: str, state: str | None = None) -> list[Memory]:
        self._known(project)  # like every read: an unknown project is NotFound, and nothing is created
        return self.rt.engine(project).list_memories(state)

    def detail(self, project: str, memory_id: str) -> MemoryDetail:
        self._known(project)
        return self.rt.engine(project).detail(memory_id)

    def why(self, project: str, memory_id: str, query: str | None = None) -> ScoreTerms | None:
        """Every score term of a memory for ``query`` (default: its own text); None when not eligible."""
        m = self.detail(project, memory_id).memory
        res = self.recall(RecallRequest(project=project, query=query or m.text, passive=True, k=50,
                                        budget_tokens=8192, for_model=False))
        hit = next((r for r in res.memories if r.id == memory_id), None)
        return hit.why if hit else None

    def stats(self, project: str) -> Stats:
        self._known(project)
        return self.rt.engine(project).stats()

    def export(self, project: str) -> list[Memory]:
        self._known(project)
        return self.rt.engine(project).export()

    def embedder_id(self) -> str:
        """The id of this runtime's vector space (``IndexService.embedder_id``)."""
        return self.rt.index.embedder_id()

    def export_vectors(self, project: str, ids: Sequence[str]) -> tuple[str, dict[str, np.ndarray]]:
        """The vector space's id (``IndexService.embedder_id``) and the stored vectors of these memories."""
        self._known(project)
        return self.rt.index.embedder_id(), self.rt.engine(project).export_vectors(list(ids))

    def import_memories(self, project: str, memories: Sequence[Memory], request_id: str = "",
                        vectors: Mapping[str, np.ndarray] | None = None, embedder: str = "") -> int:
        """Restore exported memories; global-scope rows go to the global engine.

        ``vectors`` (with the ``embedder`` id they were made by) are used only when that id is
        this runtime's: 100k memories then import without a forward pass each. Otherwise
        every servable memory is embedded again.
        """
        request_id = stored_id(request_id)
        if vectors and embedder != self.rt.index.embedder_id():
            vectors = None
        glob = [m for m in memories if m.scope == "global"]
        mine = [m for m in memories if m.scope != "global"]
        n = 0
        if mine:
            n += self.rt.engine(project).import_memories(mine, request_id, vectors)
        if glob:
            n += self.rt.global_engine.import_memories(glob, request_id, vectors)
        return n

    # ---- feedback, misses and the log ---------------------------------------------------
    def feedback(self, project: str, retrieval_id: str, answer: str, request_id: str = "") -> list[str]:
        """Credit the memories that ``answer`` actually used (recognizer); idempotent on request id."""
        import json

        self._known(project)  # feedback on a project without stores creates none
        engine = self.rt.engine(project)
        request_id = stored_id(request_id)  # receipts and hits are stored: ids go through the gate
        key = "feedback:" + (request_id or retrieval_id)
        done = engine.receipt(key)
        if done is not None:
            return list(json.loads(done or "[]"))
        injected = engine.injected(retrieval_id)
        used = self.rt.adjudicator.recognize(answer, injected) if injected and answer.strip() else []
        engine.credit_hits(retrieval_id, used, request_id)
        return list(used)

    def miss(self, project: str, query: str, tool: str = "", session: str = "") -> int | None:
        """Record a memory miss (the agent reached for a log tool) as a durable repair job."""
        self._known(project)
        self.signals.settle(project)  # signals count against one daily cap, in the order they came
        return repair.signal(self.rt.log(project), "log_tool", query, session=session,
                             daily_cap=self.rt.settings.repair.daily_cap)

    def repair(self, project: str, n: int = 4) -> int:
        """Investigate leased repair jobs and ingest their grounded proposals (exactly once per job)."""
        import json

        from actors.investigator_actor import RepairSignal

        self.signals.settle(project)  # the jobs of abstained recalls queued so far
        log, engine = self.rt.log(project), self.rt.engine(project)
        settings = self.rt.settings.repair
        done = 0
        token = self._token()
        for job in log.lease(["repair"], n, self._lease_ms(), token):
            try:
                p = json.loads(job.payload)
                sig = RepairSignal(query=p["query"], kind=p["kind"], bound_turn=p["bound_turn"],
                                   scope=project_scope(project))
                inv = self.rt.investigator.investigate(sig, repair.RemoteLogTools(log),
                                                settings.budget_calls, settings.budget_chars)
                engine.ingest_repair(job.key, list(inv.accepted), repair.report_of(inv))
                log.complete(job.id, token)
                done += 1
            except (ModelUnavailable, ModelTimeout, ActorDied) as exc:  # a dependency is down: no attempt spent
                log.defer(job.id, self._resume_ms() if not isinstance(exc, ActorDied) else 0, f"repair: {exc}",
                         token)
                self.deferred += 1
            except (DynmemError, KeyError, ValueError) as exc:
                log.fail(job.id, f"repair: {exc}", token)
        return done

    def repairs(self, project: str, limit: int = 100) -> list[RepairRecord]:
        self._known(project)
        return self.rt.engine(project).repairs(limit)

    def log_search(self, project: str, query: str, limit: int = 10) -> list[LogHit]:
        self._known(project)
        return self.rt.log(project).search(query, limit)

    def log_timeline(self, project: str, around_turn: int | None = None, limit: int = 20) -> list[Unit]:
        self._known(project)
        return self.rt.log(project).timeline(around_turn, limit)

    def log_window(self, project: str, unit_id: str, radius: int = 2) -> list[Unit]:
        self._known(project)
        return self.rt.log(project).window(unit_id, radius)

    # ---- truth maintenance: conflicts, reviews, audit, tiers --------------------------------
    def conflicts(self, project: str) -> list[OpenConflict]:
        self._known(project)
        return self.rt.engine(project).conflicts()

    def reviews(self, project: str, status: str | None = "open") -> list[ReviewItem]:
        self._known(project)
        return self.rt.engine(project).reviews(status)

    def decide_review(self, project: str, review_id: str, decision: str, decided_by: Origin, note: str = "",
                      request_id: str = "") -> list[Memory]:
        self._known(project)
        return self.rt.engine(project).decide_review(review_id, decision, decided_by, note,
                                            stored_id(request_id))

    def audit(self, project: str, limit: int = 100, since_id: int | None = None) -> list[AuditRecord]:
        self._known(project)
        return self.rt.engine(project).audit(limit, since_id)

    def patch(self, project: str, memory_id: str, tier: str | None = None, sensitivity: str | None = None) -> Memory:
        self._known(project)
        return self.rt.engine(project).patch(memory_id, tier, sensitivity)
