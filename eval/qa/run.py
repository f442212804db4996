"""``dynmem bench qa``: recall alone, on notes and questions written without reading the code.

Extraction is left out: each note of a project is stored with ``remember`` (as an agent or a person
would store it), in the order written; the report counts the outcomes, as two close notes may contest
each other. Then every question is one passive recall in its project, scored on what the block injects:

- an *answered* question (its note exists) scores a hit when its note is injected (as a line, or as
  the conflicting-note line of a contested rival), and a top hit when its note is the first line;
- an *unanswered* question (nothing of the project answers it, though it sounds as if something
  does) scores a false positive when anything besides the always-on slots is injected.

So this measures the relevance gate and the ranking on wording nobody tuned on: four helpers
wrote the data from a brief alone (``data/README.md``). Part 4 is held out (aggregates only).
The same sets also report how well the bundled embedder alone tells an answered question from an
unanswered one (the area under the curve of the best cosine), the ceiling a cosine gate works under.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from eval.cli import report_dir
from eval import jsonl

DATA = Path(__file__).resolve().parent / "data"
PARTS = (1, 2, 3, 4)
HELD_OUT = frozenset({4})
STEP_MS = 60_000


class Row(BaseModel):
    """One line of a part file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    project: str = Field(min_length=1)
    note: str | None = Field(min_length=1)
    questions: tuple[str, ...] = Field(min_length=1)


class Question(BaseModel):
    model_config = ConfigDict(frozen=True)
    text: str
    note: int | None  # index of the answering note in its project, None: unanswered


class Project(BaseModel):
    model_config = ConfigDict(frozen=True)
    part: int
    name: str
    notes: tuple[str, ...]
    questions: tuple[Question, ...]


def load_part(part: int, folder: Path = DATA) -> list[Project]:
    """The projects of ``part<part>.jsonl``: one line a note with its questions, or ``note: null``
    with the project's unanswered questions. A bad line raises ``ValueError`` naming the file and line."""
    path = folder / f"part{part}.jsonl"
    notes: dict[str, list[str]] = {}
    questions: dict[str, list[Question]] = {}
    for _, row in jsonl.rows(path, Row):
        notes.setdefault(row.project, [])
        qs = questions.setdefault(row.project, [])
        if row.note is None:
            qs += [Question(text=q, note=None) for q in row.questions]
        else:
            notes[row.project].append(row.note)
            qs += [Question(text=q, note=len(notes[row.project]) - 1) for q in row.questions]
    empty = [k for k, v in notes.items() if not v]
    if empty:
        raise ValueError(f"{path.name}: project {empty[0]!r} has questions but no note")
    return [Project(part=part, name=k, notes=tuple(v), questions=tuple(questions[k])) for k, v in notes.items()]


def project_id(p: Project) -> str:
    """A project name as the pipeline takes it (lower case, dashes)."""
    return "qa-" + "-".join(p.name.lower().split())


def run_project(p: Project, config: str | None = None, stored: Counter[str] | None = None) -> list[dict[str, Any]]:
    """Store the notes, ask every question; one row a question. ``stored`` counts the outcomes of storing
    the notes (``created``; ``contested`` or a merge when two notes of a project come too close)."""
    from actors.clock import FakeClock
    from actors.config import load_settings
    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from actors.wire import RecallRequest, RememberRequest

    settings = load_settings(Path(config) if config else None)
    clock = FakeClock()
    rows = []
    stored = Counter() if stored is None else stored
    with tempfile.TemporaryDirectory(prefix="dynmem-qa-") as tmp:
        rt = Runtime(Path(tmp), settings, use_ray=False, clock=clock)
        try:
            pipe = Pipeline(rt)
            pid = project_id(p)
            ids = []
            for i, note in enumerate(p.notes):
                clock.advance(STEP_MS)
                rep = pipe.remember(RememberRequest(project=pid, text=note, request_id=f"qa-{pid}-{i}"))
                if not rep.memory_ids:
                    raise RuntimeError(f"{p.name}: note {i} was stored as no memory ({rep.outcomes})")
                ids.append(rep.memory_ids[0])
                stored.update(rep.outcomes)
            for q in p.questions:
                res = pipe.recall(RecallRequest(project=pid, query=q.text, passive=True))
                shown = [m.id for m in res.memories if not m.always_on]
                # a note that lost a tension is injected as its rival's "conflicting note" line: still injected
                rivals = {c.rival_id for c in res.conflicts}
                want = ids[q.note] if q.note is not None else None
                rows.append({"part": p.part, "answered": want is not None,
                             "hit": want in shown or want in rivals, "top": bool(shown) and shown[0] == want,
                             "surfaced": bool(shown)})
        finally:
            rt.shutdown()
    return rows


def separability(projects: Sequence[Project], embedder: Any = None) -> float:
    """Area under the curve of the best cosine (bundled embedder) over a project's notes:
    answered questions against unanswered ones. 0.5 is chance."""
    from actors.embedder import make_embedder

    emb = embedder if embedder is not None else make_embedder("minilm")
    pos: list[float] = []
    neg: list[float] = []
    for p in projects:
        notes = np.asarray(emb.embed(list(p.notes)))
        qs = np.asarray(emb.embed([q.text for q in p.questions]))
        best = (qs @ notes.T).max(axis=1)
        for q, b in zip(p.questions, best):
            (pos if q.note is not None else neg).append(float(b))
    if not pos or not neg:
        return float("nan")
    a, b = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float((a > b).mean() + 0.5 * (a == b).mean())


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    ans = [r for r in rows if r["answered"]]
    un = [r for r in rows if not r["answered"]]
    return {"answered": len(ans), "hit": sum(r["hit"] for r in ans), "top": sum(r["top"] for r in ans),
            "unanswered": len(un), "false_positive": sum(r["surfaced"] for r in un)}


def _share(n: int, of: int) -> str:
    return f"{n / of:.1%}" if of else "-"


def render(by_part: dict[int, dict[str, Any]], auc: dict[int, float], command: str, stored: Counter[str]) -> str:
    lines = [
        "# Recall on notes and questions written without reading the code (`dynmem bench qa`)",
        "",
        "Each note stored with `remember`, then one passive recall per question (see `eval/qa/run.py`);",
        f"storing the notes: {dict(sorted(stored.items()))}.",
        "Part 4 is held out: its numbers are read, its questions are not.",
        "",
        "Reproduce:",
        "",
        "```",
        command,
        "```",
        "",
        "| part | answered | note injected | note first | unanswered | false positive | embedder AUC |",
        "|---|---|---|---|---|---|---|",
    ]
    for part, d in by_part.items():
        name = f"{part} (held out)" if part in HELD_OUT else str(part)
        lines.append(f"| {name} | {d['answered']} | {_share(d['hit'], d['answered'])} | {_share(d['top'], d['answered'])} | "
                     f"{d['unanswered']} | {_share(d['false_positive'], d['unanswered'])} | {auc[part]:.3f} |")
    lines += ["", "Embedder AUC: how often the best cosine of an answered question beats that of an unanswered one",
              "(0.5 is chance); a gate on cosine cannot separate the two better than this.", ""]
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    parts = [int(x) for x in (args.parts or ",".join(map(str, PARTS))).split(",")]
    by_part: dict[int, dict[str, Any]] = {}
    auc: dict[int, float] = {}
    stored: Counter[str] = Counter()
    from actors.embedder import make_embedder

    embedder = make_embedder("minilm")  # loaded once for every part's separability
    for part in parts:
        projects = load_part(part)
        rows = [r for p in projects for r in run_project(p, args.config, stored)]
        by_part[part] = summarise(rows)
        auc[part] = separability(projects, embedder)
        d = by_part[part]
        if not args.json:
            print(f"part {part}: note injected {d['hit']}/{d['answered']}, first {d['top']}/{d['answered']}, "
                  f"false positive {d['false_positive']}/{d['unanswered']}, embedder AUC {auc[part]:.3f}")
    out = report_dir(args)
    if out is not None:
        command = "dynmem bench qa --canonical" + (f" --config {args.config}" if args.config else "")
        suffix = f"-{Path(args.config).stem}" if args.config else ""
        (out / f"qa{suffix}.md").write_text(render(by_part, auc, command, stored), encoding="utf-8")
    if args.json:
        print(json.dumps({"parts": by_part, "auc": auc}))
    return 0
