"""Repair: memory misses become durable, budgeted investigations (DESIGN §6).

Signals become ``repair`` jobs on the project's log (deduplicated by key, with a daily
cap): a user correction at the start of a turn, the agent reaching for a log tool
(``POST /v1/miss``), a live recall that abstained on a question the log can answer, and
an extraction that failed for good. :func:`run_repairs` leases them; the
InvestigatorActor reads the log under a service-enforced budget and causal bound; the
grounded proposals go through the normal ingest, exactly once per job (the receipt is
the job key), and the whole investigation is kept as the job's report.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from actors.clients import LogClient
from actors.store.log_store import LogHit
from engine.gate import stored_id, stored_text
from engine.models import Unit

KINDS = ("correction", "log_tool", "abstained", "extraction_failed")


class RemoteLogTools:
    """The investigator's read-only view of a project log, over the typed client of its LogActor."""

    def __init__(self, log: LogClient) -> None:
        self.log = log

    def search(self, query: str, limit: int = 10, before_turn: int | None = None) -> list[LogHit]:
        return self.log.search(query, limit, before_turn)

    def timeline(self, around_turn: int | None = None, limit: int = 20) -> list[Unit]:
        return self.log.timeline(around_turn, limit)

    def window(self, unit_id: str, radius: int = 2) -> list[Unit]:
        return self.log.window(unit_id, radius)

    def units(self, ids: Sequence[str]) -> list[Unit]:
        return self.log.units(ids)


def signal(log: LogClient, kind: str, query: str, bound_turn: int | None = None, session: str = "",
           daily_cap: int = 50) -> int | None:
    """Enqueue one repair job; identical signals (same kind, query and bound) are one job."""
    if kind not in KINDS:
        raise ValueError(f"unknown repair signal {kind!r}")
    bound = bound_turn if bound_turn is not None else log.last_turn() + 1
    query, session = stored_text(query), stored_id(session)  # a job payload is stored: redacted first
    norm = " ".join(query.casefold().split())[:2000]
    key = "repair:" + hashlib.sha256(f"{kind}\x1f{norm}\x1f{bound}".encode()).hexdigest()[:24]
    payload = json.dumps({"kind": kind, "query": query[:4000], "bound_turn": max(1, bound), "session": session})
    return log.enqueue_repair(key, payload, daily_cap)


def report_of(investigation: Any) -> str:
    """The job's record: what was read, what was proposed, what was accepted or rejected and why.

    Grounded proposals carry ``slot``, their position among ``investigation.accepted``, so
    that the engine can add its own refusals (a human review decision wins) before storing.
    """
    proposals = []
    slot = 0
    for cand, verdict in zip(investigation.proposals, investigation.verdicts, strict=True):
        entry: dict[str, Any] = {"text": cand.text, "key": cand.key, "cites": list(cand.source_unit_ids),
                                 "accepted": verdict.accepted, "reason": verdict.reason}
        if verdict.accepted:
            entry["slot"] = slot
            slot += 1
        proposals.append(entry)
    return json.dumps({
        "signal": investigation.signal.model_dump(),
        "read": [c.model_dump() for c in investigation.trace],
        "calls_used": investigation.calls_used, "chars_revealed": investigation.chars_revealed,
        "stopped": investigation.stopped, "proposals": proposals,
    })
