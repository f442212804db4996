"""Effects: what an engine step decided, for the owning actor to carry out.

Engine steps never write; they return ``Effects``. The EngineActor applies one
``Effects`` as a single SQLite transaction (memories, audit rows, tensions, jobs and the
receipt that makes the step exactly-once) and then updates the vector index.
"""

from __future__ import annotations

from pydantic import Field

from engine.models import AuditEvent, Frozen, Memory, Tension


class JobRequest(Frozen):
    """A job to enqueue in the same transaction (e.g. ``adjudicate`` for a tension)."""

    kind: str
    key: str
    payload: str


class Effects(Frozen):
    memories: tuple[Memory, ...] = Field(default=(), description="rows to upsert")
    audit: tuple[AuditEvent, ...] = ()
    tensions: tuple[Tension, ...] = Field(default=(), description="rows to upsert")
    jobs: tuple[JobRequest, ...] = ()
    index_add: tuple[str, ...] = Field(default=(), description="memory ids to (re)index")
    index_remove: tuple[str, ...] = Field(default=(), description="memory ids to drop from the index")
    receipt: str | None = Field(default=None, description="idempotency key of this step")
    step: int | None = Field(default=None, description="new engine step counter, if it moved")

    def __add__(self, other: Effects) -> Effects:
        mems = {m.id: m for m in self.memories}
        mems.update({m.id: m for m in other.memories})
        tens = {t.id: t for t in self.tensions}
        tens.update({t.id: t for t in other.tensions})
        removed = set(self.index_remove) | set(other.index_remove)
        added = [i for i in dict.fromkeys(self.index_add + other.index_add) if i not in removed]
        return Effects(
            memories=tuple(mems.values()),
            audit=self.audit + other.audit,
            tensions=tuple(tens.values()),
            jobs=self.jobs + other.jobs,
            index_add=tuple(added),
            index_remove=tuple(sorted(removed)),
            receipt=other.receipt or self.receipt,
            step=other.step if other.step is not None else self.step,
        )
