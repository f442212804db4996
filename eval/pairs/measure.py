"""Is a later statement another version of an earlier one? ``python -m eval.pairs.measure [--write]``.

Six helpers who read no code and no evaluation data each wrote 300 pairs of short project statements
from one brief (``data/README.md``): an earlier memory ``a``, a later memory ``b``, and whether ``b``
is about the same setting as ``a`` (the value ``a`` gives is then out of date) or about another setting
of the same project, most of them hard cases that share topic words, a tool or the kind of value.

Each statement is read by the rules client (``extractive`` profile, the user's turn; a statement no
reading keeps becomes a keyless memory of its own words), and the pair is put to the recall's pair rule
``engine.retrieval.replaces`` with cosines of the bundled embedder, at several values of
``[retrieval] slot_change_min_cos``. How relevant each is to a question is not modelled: both are taken
to answer it equally well. A pair whose two readings share a key is counted apart: ingest joins those.

A pair of label 1 hidden is a stale value no longer served; a pair of label 0 hidden is a fact lost
from one recall, so precision is what the threshold is chosen for.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from actors.embedder import make_embedder
from actors.llm.rules_extract import extract_unit
from engine.ingest import new_memory
from engine.models import Candidate, Memory, Unit
from engine.retrieval import replaces
from engine.settings import Settings
from eval import jsonl

DATA = Path(__file__).resolve().parent / "data"
RESULTS = Path(__file__).resolve().parents[1] / "results" / "pairs.md"
THRESHOLDS = (0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
SCOPE = "project:p"


class Pair(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    a: str = Field(min_length=1)
    b: str = Field(min_length=1)
    label: int = Field(ge=0, le=1)
    why: str = ""


def load(folder: Path = DATA) -> list[tuple[int, Pair]]:
    """(part, pair) for every line of ``part*.jsonl`` in ``folder``; a bad line raises ``ValueError`` naming it."""
    out = []
    for path in sorted(folder.glob("part*.jsonl")):
        part = int(path.stem.removeprefix("part"))
        out += [(part, p) for _, p in jsonl.rows(path, Pair)]
    return out


def memory_of(text: str, t_ms: int, s: Settings) -> Memory:
    """The memory a statement said by the user becomes: its first positive reading, else its own words."""
    unit = Unit(id=f"u{t_ms}", project="p", session="s", turn=t_ms, ts_ms=t_ms, user=text, assistant="",
                request_id=f"r{t_ms}")
    found = [c for c in extract_unit(unit, SCOPE, extractive=True) if not c.negated and not c.update_only]
    c = found[0] if found else Candidate(text=text, scope=SCOPE, source_unit_ids=(unit.id,), valid_from_ms=t_ms)
    return new_memory(c.model_copy(update={"valid_from_ms": t_ms}), f"fp{t_ms}", t_ms, 0, s)


class Measured(NamedTuple):
    """Per pair: its label, its part, whether its two readings share a key, and, per threshold, whether the
    pair rule hides the earlier memory (pairs sharing a key left out)."""

    y: np.ndarray
    parts: np.ndarray
    same_key: np.ndarray
    hidden: dict[float, np.ndarray]


def _at(cos: float) -> Callable[[], float]:
    return lambda: cos


def measure(pairs: list[tuple[int, Pair]], s: Settings) -> Measured:
    emb = make_embedder(s.embedder.name, settings=s.embedder)
    olds = [memory_of(p.a, 1_000, s) for _, p in pairs]
    news = [memory_of(p.b, 2_000, s) for _, p in pairs]
    va, vb = emb.embed([m.text for m in olds]), emb.embed([m.text for m in news])
    cos = (va * vb).sum(axis=1)
    same_key = np.array([bool(o.key) and o.key == n.key for o, n in zip(olds, news)])
    hidden: dict[float, np.ndarray] = {}
    for th in THRESHOLDS:
        r = s.retrieval.model_copy(update={"slot_change_min_cos": th})
        hidden[th] = np.array([replaces(o, n, _at(float(c)), r) is not None
                               for o, n, c in zip(olds, news, cos)]) & ~same_key
    return Measured(np.array([p.label for _, p in pairs]), np.array([part for part, _ in pairs]), same_key, hidden)


def _pr(hidden: np.ndarray, y: np.ndarray, apart: np.ndarray) -> tuple[int, float, float]:
    """(pairs hidden, precision, recall over the same-setting pairs whose readings do not share a key)."""
    n = int(hidden.sum())
    wanted = (y == 1) & apart
    return n, float(y[hidden].mean()) if n else float("nan"), float(hidden[wanted].mean()) if wanted.any() else 0.0


def report(m: Measured, current: float) -> str:
    y, parts, same_key = m.y, m.parts, m.same_key
    lines = [
        "# Later statements as versions of earlier ones (`engine.retrieval.replaces`)",
        "",
        f"{len(y)} pairs by {len(set(parts.tolist()))} helpers who read no code (`eval/pairs/data`, its README); "
        f"{int(y.sum())} say the later statement is about the same setting. Reproduce:",
        "",
        "```",
        "python -m eval.pairs.measure --write",
        "```",
        "",
        "Each statement is read by the rules client (`extractive` profile) and the pair is put to the recall's pair",
        "rule with the bundled embedder's cosine; how relevant each is to a question is not modelled.",
        "",
        f"- readings sharing a key (joined at ingest, not counted below): {int(same_key.sum())} pairs, "
        f"{int(y[same_key].sum())} of them of one setting",
        f"- shipped `[retrieval] slot_change_min_cos`: {current}",
        "",
        "| slot_change_min_cos | pairs hidden | precision | recall (label 1, readings not sharing a key) |",
        "|---|---|---|---|",
    ]
    for th, h in m.hidden.items():
        n, p, r = _pr(h, y, ~same_key)
        lines.append(f"| {th}{' (shipped)' if abs(th - current) < 1e-9 else ''} | {n} | {p:.3f} | {r:.3f} |")
    shipped = m.hidden.get(current)
    if shipped is not None:
        lines += ["", "By writer, at the shipped threshold:", "", "| part | pairs | hidden | precision | recall |",
                  "|---|---|---|---|---|"]
        for part in sorted(set(parts.tolist())):
            sel = parts == part
            n, p, r = _pr(shipped[sel], y[sel], ~same_key[sel])
            lines.append(f"| {part} | {int(sel.sum())} | {n} | {p:.3f} | {r:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--write", action="store_true", help=f"also write {RESULTS.relative_to(RESULTS.parents[2])}")
    args = ap.parse_args(argv)
    s = Settings()
    text = report(measure(load(), s), s.retrieval.slot_change_min_cos)
    print(text, end="")
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
