"""Typed messages between actors (pydantic models, no loose dicts)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from actors.store.memory_store import Review
from engine.models import AuditEvent, Candidate, Job, Memory, Sensitivity, Tension, Tier, Unit
from engine.retrieval import Conflict, Recalled, Suppressed


class Msg(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RecallRequest(Msg):
    project: str
    query: str
    k: int | None = Field(default=None, ge=1, le=50)
    budget_tokens: int | None = Field(default=None, ge=16, le=8192)
    passive: bool = False
    as_of_ms: int | None = None
    for_model: bool = True


class RecallResult(Msg):
    retrieval_id: str
    abstained: bool
    context: str
    memories: tuple[Recalled, ...]
    conflicts: tuple[Conflict, ...]
    suppressed: tuple[Suppressed, ...] = ()
    latency_ms: float = 0.0


class RememberRequest(Msg):
    project: str
    text: str
    scope: str = "project"
    tier: Tier = Tier.NORMAL
    ttl_hours: float | None = Field(default=None, gt=0)
    sensitivity: Sensitivity = Sensitivity.NORMAL
    key: str = ""
    belief: str = ""
    request_id: str = ""


class ForgetRequest(Msg):
    project: str
    memory_id: str | None = None
    match: str | None = None
    purge: bool = False
    request_id: str = ""


class ForgetResult(Msg):
    retired: tuple[str, ...]
    purged: bool
    purged_units: tuple[str, ...] = ()
    erase_from_caches: tuple[str, ...] = Field(default=(), description="purged texts to remove from model caches")


class IngestReport(Msg):
    outcomes: dict[str, int]
    memory_ids: tuple[str, ...]
    applied: bool


class IngestJob(Msg):
    """One extraction job's candidates for :meth:`EngineService.ingest_many` (its vectors travel
    in one matrix for the whole batch)."""

    receipt: str = Field(description="the job's idempotency key: ingested exactly once")
    candidates: tuple[Candidate, ...] = Field(description="the candidates, in the order extracted")
    units: int = Field(default=1, ge=0, description="log units the job covered (the engine's step advances by this)")


class IngestOutcome(Msg):
    """What became of one job of a batch: its report, or the error that failed it alone."""

    report: IngestReport | None = Field(default=None, description="the ingest report, when the job was ingested")
    error: str = Field(default="", description="the message of the error that failed this job")
    code: str = Field(default="", description="that error's stable code")


class MemoryDetail(Msg):
    memory: Memory
    history: tuple[AuditEvent, ...]
    versions: tuple[Memory, ...]
    sources: tuple[dict[str, object], ...] = ()


class Stats(Msg):
    project: str
    memories_by_state: dict[str, int]
    memories_by_pool: dict[str, int]
    open_tensions: int
    step: int


class ReviewItem(Msg):
    """A review with the memories of its tension (none when the tension is gone)."""

    review: Review
    memories: tuple[Memory, ...]


class OpenConflict(Msg):
    """An open tension with both of its memories."""

    tension: Tension
    a: Memory
    b: Memory


class RepairSignalRecord(Msg):
    """The signal an investigation started from (``RepairSignal`` as stored)."""

    query: str = Field(description="what memory should have answered: the question or the correction")
    kind: str = Field(description="correction, abstained, log_tool or extraction_failed")
    bound_turn: int = Field(description="turn of the signal; only units before it were read")
    scope: str = Field(description="scope of the proposals: 'global' or 'project:<id>'")


class RepairRead(Msg):
    """One log read of an investigation (``ToolCall`` as stored)."""

    tool: str = Field(description="search, timeline, window or units")
    args: dict[str, str | int | list[str] | None] = Field(description="the arguments of the read")
    unit_ids: tuple[str, ...] = Field(default=(), description="units the read revealed")
    chars: int = Field(default=0, description="characters revealed by this read (first reveals only)")
    truncated: bool = Field(default=False, description="the budget cut the read short")
    refused: bool = Field(default=False, description="the budget was spent; nothing was read")
    error: str = Field(default="", description="why the read failed, if it did")


class RepairProposal(Msg):
    """A fact an investigation proposed, and whether grounding (or a review decision) let it in."""

    text: str = Field(description="the proposed memory")
    key: str = Field(description="its key (what it is about)")
    cites: tuple[str, ...] = Field(description="units the proposal cites as its evidence")
    accepted: bool = Field(description="grounded and ingested")
    reason: str = Field(description="why it was accepted or rejected")
    slot: int | None = Field(default=None, description="position among the accepted proposals (accepted ones only)")


class RepairRecord(Msg):
    """A recorded repair investigation: the job, when, and the report of ``actors.repair.report_of``.

    Dump it with ``exclude_unset=True`` to get the stored document back as it was written.
    """

    job: str = Field(description="the repair job's key")
    at_ms: int = Field(description="when the investigation was recorded")
    signal: RepairSignalRecord | None = Field(default=None, description="what started the investigation")
    read: tuple[RepairRead, ...] = Field(default=(), description="every log read, in order")
    calls_used: int = Field(default=0, description="log tool calls spent")
    chars_revealed: int = Field(default=0, description="characters of log text revealed")
    stopped: str = Field(default="", description="why the investigation ended early, if it did")
    proposals: tuple[RepairProposal, ...] = Field(default=(), description="what it proposed, with the verdicts")


class LeasedBatch(Msg):
    """A batch of extract jobs leased from a project's log in one call (``LogService.lease_batch``):
    the jobs, the units each one distils (in the job's order), and how many extract jobs are still
    pending after the lease (the backlog the elastic pool follows)."""
    jobs: tuple[Job, ...] = ()
    units: tuple[tuple[Unit, ...], ...] = ()
    pending: int = 0
