"""Typed messages between actors (pydantic models, no loose dicts)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from engine.models import AuditEvent, Memory, Tier, Sensitivity
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
