"""Domain models: units, candidates, memories, tensions, audit events.

These are the nouns of the engine. They are plain pydantic models with no I/O; the
stores under ``actors/store`` turn them into rows and back.

Times are integers in milliseconds since the Unix epoch (``*_ms``); an engine *step*
is the per-project count of units ingested, used by the value dynamics.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

GLOBAL_SCOPE = "global"


class TrustState(StrEnum):
    """Whether a memory may be served. Only ``active`` and ``contested`` are injectable."""

    ACTIVE = "active"
    CONTESTED = "contested"
    SUPERSEDED = "superseded"
    RETRACTED = "retracted"
    EXPIRED = "expired"


SERVABLE_STATES = frozenset({TrustState.ACTIVE, TrustState.CONTESTED})
RETIRED_STATES = frozenset({TrustState.SUPERSEDED, TrustState.RETRACTED, TrustState.EXPIRED})


class Pool(StrEnum):
    """Ranking prior driven by value: candidate, main (small, capped), archive."""

    C = "C"
    M = "M"
    A = "A"


class Kind(StrEnum):
    FACT = "fact"
    DECISION = "decision"
    PREFERENCE = "preference"
    PROCEDURE = "procedure"
    NOTE = "note"


class Tier(StrEnum):
    CORE = "core"  # always-on slot
    NORMAL = "normal"
    TEMPORARY = "temporary"  # expires after a TTL
    PINNED = "pinned"  # no value decay, always-on slot


class Sensitivity(StrEnum):
    NORMAL = "normal"
    LOCAL_ONLY = "local-only"  # never reaches a model, only the owner's CLI


class Origin(StrEnum):
    """Who proposed or changed something (recorded on memories and audit events)."""

    EXTRACTOR = "extractor"
    JUDGE = "judge"
    RULES = "rules"
    AGENT = "agent"
    HUMAN = "human"
    SYSTEM = "system"
    REPAIR = "repair"


class Verdict(StrEnum):
    SAME = "same"
    UPDATE = "update"
    CONTRADICTION = "contradiction"
    UNRELATED = "unrelated"


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Unit(Frozen):
    """One turn as stored in the raw log (L0)."""

    id: str
    project: str
    session: str
    turn: int = Field(description="1-based position of the turn in its project log")
    ts_ms: int = Field(description="wall-clock time of the turn")
    user: str
    assistant: str
    request_id: str


class Candidate(Frozen):
    """A sentence proposed for memory by extraction, the agent, a human or repair."""

    text: str = Field(description="self-contained sentence stating the latest value")
    key: str = Field(default="", description="normalised belief key; empty when none")
    belief: str = Field(default="", description="normalised value asserted for the key")
    kind: Kind = Kind.FACT
    salience: float = 0.5
    scope: str = Field(description="'global' or 'project:<id>'")
    source_unit_ids: tuple[str, ...] = ()
    valid_from_ms: int = Field(description="time of the evidence (not of the write)")
    tier: Tier = Tier.NORMAL
    sensitivity: Sensitivity = Sensitivity.NORMAL
    ttl_ms: int | None = None
    origin: Origin = Origin.EXTRACTOR
    prompt_version: str = ""
    negated: bool = Field(default=False, description="asserts that the key no longer holds")
    update_only: bool = Field(default=False, description="names a held setting with a new value: applied to the "
                              "memory held for that setting, or dropped (engine/mentions.py); never stored on its own")


class Memory(Frozen):
    """An accepted belief with its state, pool, value dynamics and validity interval."""

    id: str
    scope: str
    text: str
    key: str = ""
    belief: str = ""
    fingerprint: str
    kind: Kind = Kind.FACT
    tier: Tier = Tier.NORMAL
    sensitivity: Sensitivity = Sensitivity.NORMAL
    state: TrustState = TrustState.ACTIVE
    pool: Pool = Pool.C
    value: float = Field(description="value-dynamics score V at step `value_step`")
    value_step: int = 0
    conf_for: float = 1.0
    conf_against: float = 1.0
    evidence: int = 1
    source_unit_ids: tuple[str, ...] = ()
    valid_from_ms: int
    valid_to_ms: int | None = None
    last_evidence_ms: int
    recorded_at_ms: int
    retired_at_ms: int | None = None
    expires_at_ms: int | None = None
    created_step: int = 0
    last_hit_step: int = 0
    origin: Origin = Origin.EXTRACTOR
    prompt_version: str = ""
    superseded_by: str | None = None
    negated: bool = False
    purged: bool = False

    @property
    def servable(self) -> bool:
        return self.state in SERVABLE_STATES

    @property
    def confidence(self) -> float:
        return self.conf_for / (self.conf_for + self.conf_against)


class Tension(Frozen):
    """A pair of memories that may conflict, waiting for (or given) a verdict."""

    id: str
    scope: str
    a_id: str
    b_id: str
    reason: str = Field(description="'key', 'cosine' or 'suppression'")
    cosine: float = 0.0
    status: str = "open"  # open | decided
    verdict: Verdict | None = None
    decided_by: Origin | None = None
    why: str = ""
    created_at_ms: int


class AuditEvent(Frozen):
    """One append-only row per change to a memory."""

    memory_id: str
    action: str = Field(
        description="create, confirm, promote, demote, archive, supersede, contest, "
        "uncontest, review, retract, purge, expire, absorb, merge"
    )
    actor: Origin
    reason: str
    evidence: tuple[str, ...] = ()
    request_id: str = ""
    at_ms: int
    from_state: str = ""
    to_state: str = ""
    detail: str = ""


class TurnIn(Frozen):
    """A turn as offered to the log, before it gets an id and a turn number."""

    project: str
    session: str = "default"
    user: str
    assistant: str = ""
    ts_ms: int | None = None
    request_id: str | None = None


class JobState(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    DEAD = "dead"


class Job(Frozen):
    """A durable work item with a lease, retries and a visible dead state."""

    id: int = Field(description="row id in its store (the log's or the engine's)")
    kind: str = Field(description="extract, adjudicate, recognize, repair, review")
    key: str = Field(description="dedup key: one live job per key")
    payload: str = Field(description="JSON document")
    state: JobState = Field(default=JobState.PENDING, description="pending, running, done or dead")
    attempts: int = Field(default=0, description="failed attempts so far (a deferral spends none)")
    not_before_ms: int = Field(default=0, description="not leased before this time (backoff or deferral)")
    lease_until_ms: int = Field(default=0, description="while running: picked up again after this time")
    last_error: str = Field(default="", description="the error of the last failed or deferred attempt")
    created_ms: int = Field(default=0, description="when the job was enqueued")
    updated_ms: int = Field(default=0, description="when the job last changed state")
