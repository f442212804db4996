"""Keys decided by slot in the EngineActor's plain class (issue 11): a later value of the same kind
for the same subject supersedes, whichever reading keyed it; another subject of that kind does not.
Embedded with the bundled MiniLM model, as in the default configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from actors.clock import FakeClock
from actors.config import load_settings
from actors.engine_actor import EngineService
from actors.index_actor import IndexService
from engine.models import Candidate, TrustState

SCOPE = "project:tern"
T0 = 1_790_000_000_000


def _engine(folder: Path) -> EngineService:
    settings = load_settings()
    return EngineService("tern", folder, settings, IndexService(settings.embedder), FakeClock(T0 + 10**9))


def _cand(text: str, key: str, belief: str, at: int) -> Candidate:
    return Candidate(text=text, key=key, belief=belief, scope=SCOPE, source_unit_ids=(f"u{at}",),
                     valid_from_ms=T0 + at * 1000)


def _states(engine: EngineService) -> dict[str, Any]:
    return {m.text: m.state for m in engine.table if m.scope == SCOPE}


def test_a_clause_keyed_by_subject_and_kind_supersedes_the_reading_of_the_same_slot(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    engine.ingest("r1", [_cand("The badge refresh interval is 9 minutes.", "badge refresh interval", "9 minutes", 1)])
    engine.ingest("r2", [_cand("The metrics endpoint listens on port 9311.", "metrics port", "9311", 2)])
    # the speaker's own clause, keyed <subject> <kind of value> by the extractive reading
    engine.ingest("r3", [_cand("The badge refresh interval went up to 14 minutes.", "badge refresh interval number", "14", 3)])
    # another subject with a value of the same kind: no slot in common
    engine.ingest("r4", [_cand("The ledger replica answers on 6390.", "ledger replica number", "6390", 4)])
    states = _states(engine)
    assert states["The badge refresh interval is 9 minutes."] is TrustState.SUPERSEDED
    assert states["The badge refresh interval went up to 14 minutes."] is TrustState.ACTIVE
    assert states["The metrics endpoint listens on port 9311."] is TrustState.ACTIVE  # negative
    assert states["The ledger replica answers on 6390."] is TrustState.ACTIVE


def test_siblings_and_other_kinds_keep_their_own_slot(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    engine.ingest("r1", [_cand("The admin console serves on port 4210.", "admin console port", "4210", 1)])
    engine.ingest("r2", [_cand("The nightly export runs at 02:15.", "nightly export", "02:15", 2)])
    engine.ingest("r3", [_cand("The public console serves on 4300.", "public console number", "4300", 3)])
    engine.ingest("r4", [_cand("The nightly export writes var/spool/export.", "nightly export location", "var/spool/export", 4)])
    engine.ingest("r5", [_cand("The nightly export now starts at 03:40.", "nightly export time", "03:40", 5)])
    states = _states(engine)
    assert states["The admin console serves on port 4210."] is TrustState.ACTIVE  # a sibling, not the same
    assert states["The nightly export writes var/spool/export."] is TrustState.ACTIVE  # a path is no time
    # positive control: the time of the same subject replaces the time
    assert states["The nightly export runs at 02:15."] is TrustState.SUPERSEDED
    assert states["The nightly export now starts at 03:40."] is TrustState.ACTIVE


def test_a_choice_for_one_part_of_the_project_leaves_the_other_parts_alone(tmp_path: Path) -> None:
    """"the frontend uses pnpm" and "the backend uses Poetry" are two settings, although the bundled
    embedder puts their keys 0.93 apart: a change for one part supersedes that part only, and a choice
    that names no part names neither."""
    engine = _engine(tmp_path)
    engine.ingest("r1", [_cand("The frontend uses pnpm as its package manager.", "frontend package manager", "pnpm", 1)])
    engine.ingest("r2", [_cand("The backend uses Poetry as its package manager.", "backend package manager", "poetry", 2)])
    engine.ingest("r3", [_cand("The project uses uv as its package manager.", "package manager", "uv", 3)])
    engine.ingest("r4", [_cand("The frontend uses Bun as its package manager.", "frontend package manager", "bun", 4)])
    states = _states(engine)
    assert states["The backend uses Poetry as its package manager."] is TrustState.ACTIVE
    assert states["The project uses uv as its package manager."] is TrustState.ACTIVE
    assert states["The frontend uses Bun as its package manager."] is TrustState.ACTIVE
    # positive control: the same part's later choice replaces its earlier one
    assert states["The frontend uses pnpm as its package manager."] is TrustState.SUPERSEDED


def test_each_suite_keeps_its_own_test_command(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    engine.ingest("r1", [_cand("To run the contract tests, run `make pact`.", "contract test command", "make pact", 1)])
    engine.ingest("r2", [_cand("To run the browser tests, run `pnpm cypress run`.", "browser test command",
                               "pnpm cypress run", 2)])
    engine.ingest("r3", [_cand("To run the contract tests, run `just pact`.", "contract test command", "just pact", 3)])
    states = _states(engine)
    assert states["To run the browser tests, run `pnpm cypress run`."] is TrustState.ACTIVE
    assert states["To run the contract tests, run `just pact`."] is TrustState.ACTIVE
    assert states["To run the contract tests, run `make pact`."] is TrustState.SUPERSEDED  # positive control
