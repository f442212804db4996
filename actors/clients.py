"""Typed clients of the actors: one small class per service, whose methods mirror the service's.

The pipeline, the graph (``actors/launch.py``), repair and the doctor call an actor only
through these: ``rt.log(project).append(turns)`` instead of ``Ref.call("append", ...)``.
Each method names the service's method by reference (``LogService.append``), so mypy
checks both sides: a renamed service method, a changed argument or return type fails type
checking. tests/actors/test_clients.py checks that every client method exists on its
service with the same signature.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

from actors.adjudication_actor import AdjudicationService
from actors.engine_actor import EngineService
from actors.extraction_actor import Extracted, ExtractionService
from actors.index_actor import IndexChange, IndexService, PackedVectors
from actors.investigator_actor import Investigation, InvestigatorService, LogTools, RepairSignal
from actors.llm.base import Judgement
from actors.log_actor import LogService
from actors.ref import Pending, Ref
from actors.store.log_store import LogHit
from actors.wire import (
    ForgetRequest, ForgetResult, IngestJob, IngestOutcome, IngestReport, LeasedBatch, MemoryDetail, OpenConflict,
    RecallRequest, RecallResult, RememberRequest, RepairRecord, ReviewItem, Stats,
)
from engine.models import Candidate, Job, Memory, Origin, TurnIn, Unit, Verdict
from actors.store.memory_store import AuditRecord

S = TypeVar("S")


class ServiceClient(Generic[S]):
    """What every client holds: the :class:`Ref` to its actor (or in-process object)."""

    service: type[Any]  # the class whose methods this client mirrors (checked by a test)

    def __init__(self, ref: Ref[S]) -> None:
        self.ref = ref

    @property
    def remote(self) -> bool:
        """Whether the service runs in a Ray actor (else in this process)."""
        return self.ref.remote

    @property
    def target(self) -> Any:
        """The Ray actor handle, or the in-process service object (for fault injection and probes)."""
        return self.ref.target


class LogClient(ServiceClient[LogService]):
    """A project's LogActor: the turn log, its jobs and the read-only log views (also the investigator's LogTools)."""

    service = LogService

    def ping(self) -> int:
        return self.ref.call(LogService.ping)

    def append(self, turns: Sequence[TurnIn]) -> list[tuple[Unit, bool]]:
        return self.ref.call(LogService.append, turns)

    def submit_append(self, turns: Sequence[TurnIn]) -> Pending[list[tuple[Unit, bool]]]:
        return self.ref.submit(LogService.append, turns)

    def units(self, ids: Sequence[str]) -> list[Unit]:
        return self.ref.call(LogService.units, list(ids))

    def lease(self, kinds: Sequence[str], n: int, lease_ms: int = 60_000, token: str = "") -> list[Job]:
        return self.ref.call(LogService.lease, kinds, n, lease_ms, token)

    def lease_batch(self, kinds: Sequence[str], n: int, lease_ms: int = 60_000, token: str = "",
                    renew: Sequence[str] = (), min_ready: int = 0) -> LeasedBatch:
        return self.ref.call(LogService.lease_batch, list(kinds), n, lease_ms, token, list(renew), min_ready)

    def renew(self, tokens: Sequence[str], lease_ms: int = 60_000) -> int:
        return self.ref.call(LogService.renew, list(tokens), lease_ms)

    def complete(self, job_id: int, token: str = "") -> bool:
        return self.ref.call(LogService.complete, job_id, token)

    def complete_many(self, job_ids: Sequence[int], token: str = "") -> list[bool]:
        return self.ref.call(LogService.complete_many, list(job_ids), token)

    def fail(self, job_id: int, error: str, token: str = "") -> str:
        return self.ref.call(LogService.fail, job_id, error, token)

    def last_turn(self) -> int:
        return self.ref.call(LogService.last_turn)

    def enqueue_repair(self, key: str, payload: str, daily_cap: int) -> int | None:
        return self.ref.call(LogService.enqueue_repair, key, payload, daily_cap)

    def defer(self, job_id: int, until_ms: int, error: str, token: str = "") -> None:
        self.ref.call(LogService.defer, job_id, until_ms, error, token)

    def job_counts(self) -> dict[str, dict[str, int]]:
        return self.ref.call(LogService.job_counts)

    def search(self, query: str, limit: int = 10, before_turn: int | None = None) -> list[LogHit]:
        return self.ref.call(LogService.search, query, limit, before_turn)

    def timeline(self, around_turn: int | None = None, limit: int = 20) -> list[Unit]:
        return self.ref.call(LogService.timeline, around_turn, limit)

    def window(self, unit_id: str, radius: int = 2) -> list[Unit]:
        return self.ref.call(LogService.window, unit_id, radius)

    def enqueue(self, kind: str, key: str, payload: str) -> int | None:
        return self.ref.call(LogService.enqueue, kind, key, payload)

    def jobs(self, state: str | None = None, kind: str | None = None, limit: int = 100) -> list[Job]:
        return self.ref.call(LogService.jobs, state, kind, limit)

    def retry_job(self, job_id: int) -> None:
        self.ref.call(LogService.retry_job, job_id)

    def retry_dead(self, kind: str) -> int:
        return self.ref.call(LogService.retry_dead, kind)

    def purge_units(self, ids: Sequence[str]) -> list[str]:
        return self.ref.call(LogService.purge_units, ids)

    def close(self) -> None:
        self.ref.call(LogService.close)


class EngineClient(ServiceClient[EngineService]):
    """A project's EngineActor (or the global one): memories, recall, verdicts, reviews, audit."""

    service = EngineService

    def close(self) -> None:
        self.ref.call(EngineService.close)

    def ping(self) -> str:
        return self.ref.call(EngineService.ping)

    def ingest(self, receipt: str, candidates: Sequence[Candidate], vectors: np.ndarray | None = None, units: int = 1,
               request_id: str = "", result: str = "") -> IngestReport:
        return self.ref.call(EngineService.ingest, receipt, candidates, vectors, units, request_id, result)

    def ingest_many(self, jobs: Sequence[IngestJob], vectors: np.ndarray | None = None,
                    budget_s: float | None = None) -> list[IngestOutcome]:
        return self.ref.call(EngineService.ingest_many, list(jobs), vectors, budget_s)

    def ingest_repair(self, receipt: str, candidates: Sequence[Candidate], report: str) -> dict[int, str]:
        return self.ref.call(EngineService.ingest_repair, receipt, candidates, report)

    def repairs(self, limit: int = 100) -> list[RepairRecord]:
        return self.ref.call(EngineService.repairs, limit)

    def remember(self, req: RememberRequest) -> IngestReport:
        return self.ref.call(EngineService.remember, req)

    def snapshot(self, since_version: int) -> tuple[int, list[Memory], dict[str, np.ndarray]] | None:
        return self.ref.call(EngineService.snapshot, since_version)

    def submit_snapshot(self, since_version: int) -> Pending[tuple[int, list[Memory], dict[str, np.ndarray]] | None]:
        return self.ref.submit(EngineService.snapshot, since_version)

    def recall(self, req: RecallRequest, retrieval_id: str | None = None) -> RecallResult:
        return self.ref.call(EngineService.recall, req, retrieval_id)

    def submit_recall(self, req: RecallRequest, retrieval_id: str | None = None) -> Pending[RecallResult]:
        return self.ref.submit(EngineService.recall, req, retrieval_id)

    def injected(self, retrieval_id: str) -> list[Memory]:
        return self.ref.call(EngineService.injected, retrieval_id)

    def credit_hits(self, retrieval_id: str, used_ids: Sequence[str], request_id: str = "") -> bool:
        return self.ref.call(EngineService.credit_hits, retrieval_id, used_ids, request_id)

    def receipt(self, key: str) -> str | None:
        return self.ref.call(EngineService.receipt, key)

    def get(self, memory_id: str) -> Memory:
        return self.ref.call(EngineService.get, memory_id)

    def list_memories(self, state: str | None = None, limit: int = 1000) -> list[Memory]:
        return self.ref.call(EngineService.list_memories, state, limit)

    def detail(self, memory_id: str) -> MemoryDetail:
        return self.ref.call(EngineService.detail, memory_id)

    def stats(self) -> Stats:
        return self.ref.call(EngineService.stats)

    def forget(self, req: ForgetRequest) -> ForgetResult:
        return self.ref.call(EngineService.forget, req)

    def decide(self, tension_id: str, verdict: Verdict, decided_by: Origin, why: str, request_id: str = "") -> bool:
        return self.ref.call(EngineService.decide, tension_id, verdict, decided_by, why, request_id)

    def reviews(self, status: str | None = "open") -> list[ReviewItem]:
        return self.ref.call(EngineService.reviews, status)

    def decide_review(self, review_id: str, decision: str, decided_by: Origin, note: str = "",
                      request_id: str = "") -> list[Memory]:
        return self.ref.call(EngineService.decide_review, review_id, decision, decided_by, note, request_id)

    def patch(self, memory_id: str, tier: str | None = None, sensitivity: str | None = None,
              request_id: str = "") -> Memory:
        return self.ref.call(EngineService.patch, memory_id, tier, sensitivity, request_id)

    def conflicts(self) -> list[OpenConflict]:
        return self.ref.call(EngineService.conflicts)

    def audit(self, limit: int = 100, since_id: int | None = None) -> list[AuditRecord]:
        return self.ref.call(EngineService.audit, limit, since_id)

    def export(self) -> list[Memory]:
        return self.ref.call(EngineService.export)

    def import_memories(self, memories: Sequence[Memory], request_id: str = "",
                        vectors: Mapping[str, np.ndarray] | None = None) -> int:
        return self.ref.call(EngineService.import_memories, memories, request_id, vectors)

    def export_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return self.ref.call(EngineService.export_vectors, ids)

    def lease_adjudications(self, n: int, lease_ms: int = 60_000, token: str = "") -> list[tuple[int, str, Memory, Memory]]:
        return self.ref.call(EngineService.lease_adjudications, n, lease_ms, token)

    def complete_job(self, job_id: int, token: str = "") -> None:
        self.ref.call(EngineService.complete_job, job_id, token)

    def fail_job(self, job_id: int, error: str, token: str = "") -> None:
        self.ref.call(EngineService.fail_job, job_id, error, token)

    def defer_job(self, job_id: int, until_ms: int, error: str, token: str = "") -> None:
        self.ref.call(EngineService.defer_job, job_id, until_ms, error, token)

    def job_counts(self) -> dict[str, dict[str, int]]:
        return self.ref.call(EngineService.job_counts)


class IndexClient(ServiceClient[IndexService]):
    """The IndexActor: the embedder and the FAISS index of every scope (the engines' IndexPort)."""

    service = IndexService

    def ping(self) -> str:
        return self.ref.call(IndexService.ping)

    def probe(self) -> str:
        return self.ref.call(IndexService.probe)

    def generation(self) -> str:
        return self.ref.call(IndexService.generation)

    def embedder_id(self) -> str:
        return self.ref.call(IndexService.embedder_id)

    def embedder_backend(self) -> str:
        return self.ref.call(IndexService.embedder_backend)

    def embed(self, texts: Sequence[str], local_only: Sequence[bool] | None = None) -> np.ndarray:
        return self.ref.call(IndexService.embed, texts, local_only)

    def embed_query(self, text: str) -> np.ndarray:
        return self.ref.call(IndexService.embed_query, text)

    def upsert(self, scope: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        self.ref.call(IndexService.upsert, scope, ids, vectors)

    def remove(self, ids: Sequence[str]) -> None:
        self.ref.call(IndexService.remove, ids)

    def search(self, vector: np.ndarray, scopes: Sequence[str], k: int) -> list[tuple[str, float]]:
        return self.ref.call(IndexService.search, vector, scopes, k)

    def embed_search(self, text: str, scopes: Sequence[str], k: int) -> tuple[np.ndarray, list[tuple[str, float]]]:
        return self.ref.call(IndexService.embed_search, text, scopes, k)

    def update_search(self, scope: str, changes: Sequence[IndexChange], queries: np.ndarray | None,
                      scopes: Sequence[Sequence[str]], k: int) -> list[list[tuple[str, float]]]:
        return self.ref.call(IndexService.update_search, scope, changes, queries, scopes, k)

    def checked_update_search(self, scope: str, changes: Sequence[IndexChange], queries: np.ndarray | None,
                              scopes: Sequence[Sequence[str]], k: int) -> tuple[str, list[list[tuple[str, float]]]]:
        return self.ref.call(IndexService.checked_update_search, scope, changes, queries, scopes, k)

    def checked_search(self, vector: np.ndarray, scopes: Sequence[str], k: int) -> tuple[str, list[tuple[str, float]]]:
        return self.ref.call(IndexService.checked_search, vector, scopes, k)

    def search_vectors(self, vector: np.ndarray, scopes: Sequence[str], k: int, also: Sequence[str] = ()
                       ) -> tuple[str, list[tuple[str, float]], PackedVectors]:
        return self.ref.call(IndexService.search_vectors, vector, scopes, k, also)

    def embed_search_vectors(self, text: str, scopes: Sequence[str], k: int, also: Sequence[str] = ()
                             ) -> tuple[np.ndarray, list[tuple[str, float]], dict[str, np.ndarray]]:
        return self.ref.call_in("query", IndexService.embed_search_vectors, text, scopes, k, also)

    def checked_embed_search(self, text: str, scopes: Sequence[str], k: int, also: Sequence[str] = ()
                             ) -> tuple[str, np.ndarray, list[tuple[str, float]], PackedVectors]:
        return self.ref.call_in("query", IndexService.checked_embed_search, text, scopes, k, also)

    def size(self, scope: str | None = None) -> int:
        return self.ref.call(IndexService.size, scope)

    def wait_for_builds(self, timeout_s: float | None = None) -> bool:
        return self.ref.call(IndexService.wait_for_builds, timeout_s)

    def save_snapshot(self, scope: str, path: str, token: str, wait_s: float = 0.0) -> bool:
        return self.ref.call(IndexService.save_snapshot, scope, path, token, wait_s)

    def load_snapshot(self, scope: str, path: str, token: str) -> bool:
        return self.ref.call(IndexService.load_snapshot, scope, path, token)


class ExtractionClient(ServiceClient[ExtractionService]):
    """One worker of the extraction pool."""

    service = ExtractionService

    def ping(self) -> str:
        return self.ref.call(ExtractionService.ping)

    def extract(self, units: Sequence[Unit], scope: str) -> Extracted:
        return self.ref.call(ExtractionService.extract, units, scope)

    def purge_cache(self, texts: Sequence[str]) -> int:
        return self.ref.call(ExtractionService.purge_cache, texts)

    def submit_purge_cache(self, texts: Sequence[str]) -> Pending[int]:
        return self.ref.submit(ExtractionService.purge_cache, texts)

    def submit_extract(self, units: Sequence[Unit], scope: str) -> Pending[Extracted]:
        """Start an extraction without waiting (``Ref.result`` collects it), so the pool works in parallel."""
        return self.ref.submit(ExtractionService.extract, units, scope)


class AdjudicationClient(ServiceClient[AdjudicationService]):
    """The AdjudicationActor: verdicts on tensions, and which injected memories an answer used."""

    service = AdjudicationService

    def ping(self) -> str:
        return self.ref.call(AdjudicationService.ping)

    def probe(self) -> str:
        return self.ref.call(AdjudicationService.probe)

    def judge(self, a: Memory, b: Memory) -> Judgement:
        return self.ref.call(AdjudicationService.judge, a, b)

    def recognize(self, answer: str, injected: Sequence[Memory]) -> list[str]:
        return self.ref.call(AdjudicationService.recognize, answer, injected)

    def purge_cache(self, texts: Sequence[str]) -> int:
        return self.ref.call(AdjudicationService.purge_cache, texts)

    def submit_purge_cache(self, texts: Sequence[str]) -> Pending[int]:
        return self.ref.submit(AdjudicationService.purge_cache, texts)


class InvestigatorClient(ServiceClient[InvestigatorService]):
    """The InvestigatorActor: budgeted repair investigations over a project's log."""

    service = InvestigatorService

    def ping(self) -> str:
        return self.ref.call(InvestigatorService.ping)

    def investigate(self, signal: RepairSignal, tools: LogTools, budget_calls: int = 8,
                    budget_chars: int = 4000) -> Investigation:
        return self.ref.call(InvestigatorService.investigate, signal, tools, budget_calls, budget_chars)

    def purge_cache(self, texts: Sequence[str]) -> int:
        return self.ref.call(InvestigatorService.purge_cache, texts)

    def submit_purge_cache(self, texts: Sequence[str]) -> Pending[int]:
        return self.ref.submit(InvestigatorService.purge_cache, texts)


#: Every client, for the test that mirrors them against their services.
CLIENTS: tuple[type[ServiceClient[Any]], ...] = (LogClient, EngineClient, IndexClient, ExtractionClient,
                                                 AdjudicationClient, InvestigatorClient)
