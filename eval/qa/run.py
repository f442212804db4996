"""``dynmem bench qa``: recall alone, on notes and questions written without reading the code.

Extraction is left out: each note of a project is stored as one memory (``remember``, as an agent
or a person would store it), in the order written, then every question is one passive recall in
its project, scored on what the block injects:

- an *answered* question (its note exists) scores a hit when its note is injected, and a top
  hit when its note is the first line;
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from eval.cli import report_dir

DATA = Path(__file__).resolve().parent / "data"
PARTS = (1, 2, 3, 4)
HELD_OUT = frozenset({4})
STEP_MS = 60_000


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
    with the project's unanswered questions."""
    notes: dict[str, list[str]] = {}
    questions: dict[str, list[Question]] = {}
    for n, line in enumerate((folder / f"part{part}.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        name = str(row["project"])
        notes.setdefault(name, [])
        qs = questions.setdefault(name, [])
        if row["note"] is None:
            qs += [Question(text=q, note=None) for q in row["questions"]]
        else:
            notes[name].append(str(row["note"]))
            qs += [Question(text=q, note=len(notes[name]) - 1) for q in row["questions"]]
        if not row["questions"]:
            raise ValueError(f"part{part}.jsonl line {n}: no questions")
    return [Project(part=part, name=k, notes=tuple(v), questions=tuple(questions[k])) for k, v in notes.items()]


def project_id(p: Project) -> str:
    """A project name as the pipeline takes it (lower case, dashes)."""
    return "qa-" + "-".join(p.name.lower().split())


def run_project(p: Project, config: str | None = None) -> list[dict[str, Any]]:
    """Store the notes, ask every question; one row a question."""
    from actors.clock import FakeClock
    from actors.config import load_settings
    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from actors.wire import RecallRequest, RememberRequest

    settings = load_settings(Path(config) if config else None)
    clock = FakeClock()
    rows = []
    with tempfile.TemporaryDirectory(prefix="dynmem-qa-") as tmp:
        rt = Runtime(Path(tmp), settings, use_ray=False, clock=clock)
        try:
            pipe = Pipeline(rt)
            pid = project_id(p)
            ids = []
            for i, note in enumerate(p.notes):
                clock.advance(STEP_MS)
                rep = pipe.remember(RememberRequest(project=pid, text=note, request_id=f"qa-{pid}-{i}"))
                ids.append(rep.memory_ids[0] if rep.memory_ids else "")
            for q in p.questions:
                res = pipe.recall(RecallRequest(project=pid, query=q.text, passive=True))
                shown = [m.id for m in res.memories if not m.always_on]
                want = ids[q.note] if q.note is not None else None
                rows.append({"part": p.part, "answered": want is not None,
                             "hit": want in shown, "top": bool(shown) and shown[0] == want,
                             "surfaced": bool(shown)})
        finally:
            rt.shutdown()
    return rows


def separability(projects: Sequence[Project]) -> float:
    """Area under the curve of the best cosine (bundled embedder) over a project's notes:
    answered questions against unanswered ones. 0.5 is chance."""
    from actors.embedder import make_embedder

    emb = make_embedder("minilm")
    pos, neg = [], []
    for p in projects:
        notes = np.asarray(emb.embed(list(p.notes)))
        qs = np.asarray(emb.embed([q.text for q in p.questions]))
        best = (qs @ notes.T).max(axis=1)
        for q, b in zip(p.questions, best):
            (pos if q.note is not None else neg).append(float(b))
    a, b = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float((a > b).mean() + 0.5 * (a == b).mean())


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    ans = [r for r in rows if r["answered"]]
    un = [r for r in rows if not r["answered"]]
    return {"answered": len(ans), "hit": sum(r["hit"] for r in ans), "top": sum(r["top"] for r in ans),
            "unanswered": len(un), "false_positive": sum(r["surfaced"] for r in un)}


def render(by_part: dict[int, dict[str, Any]], auc: dict[int, float], command: str) -> str:
    lines = [
        "# Recall on notes and questions written without reading the code (`dynmem bench qa`)",
        "",
        "Each note stored as one memory, then one passive recall per question (see `eval/qa/run.py`).",
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
        lines.append(f"| {name} | {d['answered']} | {d['hit'] / d['answered']:.1%} | {d['top'] / d['answered']:.1%} | "
                     f"{d['unanswered']} | {d['false_positive'] / d['unanswered']:.1%} | {auc[part]:.3f} |")
    lines += ["", "Embedder AUC: how often the best cosine of an answered question beats that of an unanswered one",
              "(0.5 is chance); a gate on cosine cannot separate the two better than this.", ""]
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    parts = [int(x) for x in (args.parts or ",".join(map(str, PARTS))).split(",")]
    by_part: dict[int, dict[str, Any]] = {}
    auc: dict[int, float] = {}
    for part in parts:
        projects = load_part(part)
        rows = [r for p in projects for r in run_project(p, args.config)]
        by_part[part] = summarise(rows)
        auc[part] = separability(projects)
        d = by_part[part]
        if not args.json:
            print(f"part {part}: note injected {d['hit']}/{d['answered']}, first {d['top']}/{d['answered']}, "
                  f"false positive {d['false_positive']}/{d['unanswered']}, embedder AUC {auc[part]:.3f}")
    out = report_dir(args)
    if out is not None:
        command = "dynmem bench qa" + (f" --config {args.config}" if args.config else "")
        suffix = f"-{Path(args.config).stem}" if args.config else ""
        (out / f"qa{suffix}.md").write_text(render(by_part, auc, command), encoding="utf-8")
    if args.json:
        print(json.dumps({"parts": by_part, "auc": auc}))
    return 0
