"""The opencode-memory scenario format, and its mapping onto our memory model.

The format is the one of ``../shared/peers/opencode-memory/dev.json`` (README there):
each scenario holds up to a few memories, a query, the session's ``directory`` and the
expected memory ids (or ``"none"``). Every memory carries an ``effective`` block with the
defaults that the upstream harness (``bench/lib.ts`` ``buildStore``) applies, and those
are what we map:

==========================  ===============================================================
upstream (effective)        dynamics-memory
==========================  ===============================================================
scope global                scope ``global``
scope project, projectID P  scope ``project:P``, imported into project P's own engine
tier core (category in      ``Tier.CORE`` (always-on slot); ``pinned`` -> ``Tier.PINNED``;
preferences/workflow/       otherwise ``Tier.NORMAL`` (upstream "archival" is not our
decisions/environment)      archive pool: it only means "not core")
status ACTIVE/CONFLICTED/   ``TrustState.ACTIVE`` / ``CONTESTED`` / ``SUPERSEDED``
SUPERSEDED
lastSeenAgoDays d           valid_from / last_evidence / recorded_at = now - d days
weight w (default 2)        value V = v_init * w / 2 (w 2 is a fresh memory); pool M when
                            V >= theta_p, else C
helpful h / irrelevant i    value += eta * h (credited hits); conf_for 1 + h, conf_against 1 + i
category                    kind: preferences -> preference, decisions -> decision,
                            workflow -> procedure, other -> note, everything else -> fact
==========================  ===============================================================
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from engine.errors import InvalidInput, NotFound

from engine.keys import fingerprint
from engine.models import GLOBAL_SCOPE, Kind, Memory, Origin, Pool, Tier, TrustState
from engine.scopes import project_scope
from engine.settings import Settings

DAY_MS = 86_400_000
# Project of a session with no directory (upstream: no project, only global memories match).
NO_DIRECTORY_PROJECT = "peers-no-directory"

_KIND = {"preferences": Kind.PREFERENCE, "decisions": Kind.DECISION, "workflow": Kind.PROCEDURE, "other": Kind.NOTE}
_STATE = {"ACTIVE": TrustState.ACTIVE, "CONFLICTED": TrustState.CONTESTED, "SUPERSEDED": TrustState.SUPERSEDED}


class PeerMemory(BaseModel):
    """One memory of a scenario, with upstream's effective fields."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    id: str
    text: str
    effective: dict[str, Any]


class Scenario(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")
    id: str
    section: str = ""
    tags: tuple[str, ...] = ()
    memories: tuple[PeerMemory, ...]
    query: str
    directory: str | None = None
    expected: tuple[str, ...] = Field(description="expected memory ids; empty for a negative scenario")
    polarity: str = ""
    negative_category: str | None = None

    @property
    def negative(self) -> bool:
        # bench/lib.ts computeMetrics: a negative is a scenario with no expected memory.
        return not self.expected

    @property
    def project(self) -> str:
        return self.directory or NO_DIRECTORY_PROJECT

    @property
    def category(self) -> str:
        """Row of the per-category table: the negative category, or the positive section."""
        return (self.negative_category or "negative") if self.negative else self.section


def parse_scenario(raw: dict[str, Any]) -> Scenario:
    expected = raw.get("expected")
    data = dict(raw, expected=() if expected in (None, "none") else tuple(expected))
    return Scenario.model_validate(data)


def load_scenarios(path: Path) -> list[Scenario]:
    """Read a scenario file (``{"meta", "scenarios"}`` or a bare list).

    Raises ``NotFound`` for a missing file and ``InvalidInput`` for one that is no scenario file."""
    path = Path(path)
    if not path.is_file():
        raise NotFound(f"no scenario file at {path}; pass --file PATH (the default is "
                       "../shared/peers/opencode-memory/dev.json beside the checkout)")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InvalidInput(f"{path} is not a JSON scenario file: {e}") from None
    rows = doc.get("scenarios") if isinstance(doc, dict) else doc
    if not isinstance(rows, list):
        raise InvalidInput(f"{path} holds no list of scenarios (a bare list, or an object with 'scenarios')")
    return [parse_scenario(r) for r in rows]


def scope_of(m: PeerMemory) -> str:
    eff = m.effective
    if eff.get("scope") == "project" and eff.get("projectID"):
        return project_scope(str(eff["projectID"]))
    return GLOBAL_SCOPE


def to_memory(m: PeerMemory, *, now_ms: int, settings: Settings) -> Memory:
    """Our memory row for one upstream memory (see the module table)."""
    eff = m.effective
    scope = scope_of(m)
    state = _STATE[str(eff.get("status") or "ACTIVE").upper()]
    if eff.get("pinned"):
        tier = Tier.PINNED
    elif eff.get("tier") == "core":
        tier = Tier.CORE
    else:
        tier = Tier.NORMAL
    seen_ms = now_ms - int(float(eff.get("lastSeenAgoDays") or 0) * DAY_MS)
    helpful = int(eff.get("helpfulCount") or 0)
    irrelevant = int(eff.get("irrelevantCount") or 0)
    d = settings.dynamics
    weight = eff.get("weight")
    value = d.v_init * float(2 if weight is None else weight) / 2 + d.eta * helpful
    retired = state == TrustState.SUPERSEDED
    return Memory(
        id=m.id, scope=scope, text=m.text, fingerprint=fingerprint(scope, "", "", m.text),
        kind=_KIND.get(str(eff.get("category") or "other"), Kind.FACT), tier=tier, state=state,
        pool=Pool.M if value >= d.theta_p else Pool.C, value=value, conf_for=1.0 + helpful,
        conf_against=1.0 + irrelevant, valid_from_ms=seen_ms, valid_to_ms=now_ms if retired else None,
        last_evidence_ms=seen_ms, recorded_at_ms=seen_ms, retired_at_ms=now_ms if retired else None,
        origin=Origin.HUMAN,
    )


def memories_by_project(scenario: Scenario, *, now_ms: int, settings: Settings) -> dict[str, list[Memory]]:
    """Memory rows grouped by the project whose engine imports them.

    Global memories go with the session's project (the pipeline routes them to the global
    engine); a memory of another project is imported into that project's own engine, so a
    recall from the session's project can only reach it by crossing a scope.
    """
    out: dict[str, list[Memory]] = {}
    for pm in scenario.memories:
        mem = to_memory(pm, now_ms=now_ms, settings=settings)
        owner = mem.scope.removeprefix("project:") if mem.scope != GLOBAL_SCOPE else scenario.project
        out.setdefault(owner, []).append(mem)
    return out
