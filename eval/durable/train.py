"""Train (and cross-validate) the durable-clause classifier of ``actors/llm/durable.py``.

    python -m eval.durable.train            # the report on stdout
    python -m eval.durable.train --write    # also rewrite the shipped weights and eval/results/durable.md
    python -m eval.durable.train --check    # exit 1 if the shipped weights are not what training gives

The corpus, ``actors/llm/data/durable.jsonl``, was written from a brief by a helper who read
neither the code nor any evaluation history (see ``actors/llm/data/README.md``); each line says which
part (writer) it belongs to. Folds are fixed (line number modulo k) and pick the threshold; the report
also scores each part by a model trained on the others, and ``eval/durable/heldout.jsonl`` (three more
writers) by the shipped model. Training has no randomness, so a rerun gives the same weights.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from actors.llm import durable, linear

CORPUS = "durable.jsonl"
RESULTS = Path(__file__).resolve().parents[1] / "results" / "durable.md"
#: Clauses by three more writers, never trained on: how the shipped model does on wording it never saw.
HELDOUT = Path(__file__).resolve().parent / "heldout.jsonl"
WEIGHTS = Path(durable.__file__).resolve().parent / "data" / "durable_weights.json"
#: The decision threshold favours precision: a clause that is not durable and becomes a memory
#: costs more (it can be injected with a wrong value) than a durable clause that is missed.
MIN_PRECISION = 0.95


class Scored(NamedTuple):
    p: float  # P(durable) under a model that never saw this example's part
    label: int
    cat: str
    part: int


class Row(NamedTuple):
    example: durable.Example
    cat: str
    part: int  # which helper wrote it (the corpus README's parts): the unit of the cross-author check


def load_corpus(path: Path | None = None) -> list[Row]:
    """The training corpus (shipped with the package), or another file of the same format."""
    text = (path.read_text(encoding="utf-8") if path is not None
            else resources.files("actors.llm.data").joinpath(CORPUS).read_text(encoding="utf-8"))
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("label") not in (0, 1) or row.get("speaker") not in ("user", "assistant") \
                or not isinstance(row.get("part"), int):
            raise ValueError(f"{path.name if path else CORPUS}:{n}: label must be 0 or 1, speaker user or assistant, "
                             "part a number")
        out.append(Row(durable.Example(row["text"], row["speaker"], int(row["label"])), str(row.get("cat", "")),
                       row["part"]))
    return out


def cross_validate(rows: list[Row], k: int = 5) -> list[Scored]:
    """Out-of-fold scores of every example, ``k`` fixed folds by line number (writers mixed)."""
    out: list[Scored] = [Scored(0.0, 0, "", 0)] * len(rows)
    for fold in range(k):
        w = durable.train([r.example for i, r in enumerate(rows) if i % k != fold])
        for i, r in enumerate(rows):
            if i % k == fold:
                out[i] = Scored(durable.probability(w, r.example.text, r.example.speaker), r.example.label, r.cat, r.part)
    return out


def cross_author(rows: list[Row]) -> list[Scored]:
    """Every example scored by a model trained on the *other* parts only. Each part has one writer:
    folds that mix writers share each one's habits between training and test, and overstate how the
    model does on wording it never learned from, which is what the extractor meets."""
    out: list[Scored] = []
    for part in sorted({r.part for r in rows}):
        w = durable.train([r.example for r in rows if r.part != part])
        out += [Scored(durable.probability(w, r.example.text, r.example.speaker), r.example.label, r.cat, part)
                for r in rows if r.part == part]
    return out


def pick_threshold(scored: list[Scored]) -> float:
    """The lowest threshold (most recall) whose out-of-fold precision is at least MIN_PRECISION."""
    return linear.pick_threshold([(s.p, s.label) for s in scored], MIN_PRECISION)


def _precision_recall(scored: list[Scored], threshold: float) -> tuple[float, float, int, int]:
    return linear.precision_recall([(s.p, s.label) for s in scored], threshold)


def _by_part(scored: list[Scored], threshold: float) -> list[str]:
    lines = ["| part | clauses | precision | recall |", "|---|---|---|---|"]
    for part in sorted({s.part for s in scored}):
        p_, r_, _, _ = _precision_recall([s for s in scored if s.part == part], threshold)
        lines.append(f"| {part} | {sum(s.part == part for s in scored)} | {p_:.3f} | {r_:.3f} |")
    return lines


def report(scored: list[Scored], threshold: float, authors: list[Scored], heldout: list[Scored]) -> str:
    """The markdown report: mixed folds (which pick the threshold), each writer left out, and
    writers never trained on, all at the shipped threshold."""
    precision, recall, tp, fp = _precision_recall(scored, threshold)
    per_cat: dict[str, Counter[str]] = {}
    for s in scored:
        c = per_cat.setdefault(s.cat or "?", Counter())
        c["n"] += 1
        c["kept"] += s.p >= threshold
        c["label"] = s.label
    lines = [
        "# Durable-clause classifier (`actors/llm/durable.py`)",
        "",
        "Logistic regression over hashed word, word-pair and value-shape features, trained on",
        f"`actors/llm/data/durable.jsonl` ({len(scored)} clauses in {len({s.part for s in scored})} parts, each "
        "written from a brief by a helper who read no code",
        "and no evaluation history). Out-of-fold figures, 5 fixed folds. Reproduce:",
        "",
        "```",
        "python -m eval.durable.train --write",
        "```",
        "",
        f"- threshold **{threshold:.2f}** (the lowest with out-of-fold precision >= {MIN_PRECISION})",
        f"- precision **{precision:.3f}**, recall **{recall:.3f}** (kept {tp + fp} of {len(scored)}; {tp} durable, {fp} not)",
        "",
        "Folds mix writers, so each writer's habits are on both sides. Each part scored by a model trained on the",
        "other parts only, at the same threshold:",
        "",
        *_by_part(authors, threshold),
    ]
    if heldout:
        p_, r_, _, _ = _precision_recall(heldout, threshold)
        lines += ["", f"Writers never trained on (`eval/durable/heldout.jsonl`, {len(heldout)} clauses, README beside it), "
                  f"scored by the shipped model: precision **{p_:.3f}**, recall **{r_:.3f}**.", "",
                  *_by_part(heldout, threshold)]
    lines += ["", "| category | label | clauses | kept as durable |", "|---|---|---|---|"]
    for cat, c in sorted(per_cat.items(), key=lambda kv: (-kv[1]["label"], kv[0])):
        lines.append(f"| {cat} | {c['label']} | {c['n']} | {c['kept']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite the shipped weights and eval/results/durable.md")
    ap.add_argument("--check", action="store_true", help="exit 1 if the shipped weights differ from a retrain")
    args = ap.parse_args(argv)
    rows = load_corpus()
    w = durable.train([r.example for r in rows])
    meta = {"corpus": CORPUS, "examples": len(rows), "trainer": "eval.durable.train"}
    if args.check:  # the threshold is the shipped one: only the cross-validation picks it
        shipped = json.loads(WEIGHTS.read_text(encoding="utf-8")) if WEIGHTS.exists() else {}
        same = shipped and WEIGHTS.read_text(encoding="utf-8") == durable.to_json(w, shipped["threshold"], meta)
        print("shipped weights match a retrain" if same else "shipped weights differ from a retrain")
        return 0 if same else 1
    scored = cross_validate(rows)
    threshold = pick_threshold(scored)
    held = load_corpus(HELDOUT) if HELDOUT.exists() else []
    heldout = [Scored(durable.probability(w, r.example.text, r.example.speaker), r.example.label, r.cat, r.part)
               for r in held]
    text = report(scored, threshold, cross_author(rows), heldout)
    print(text)
    if args.write:
        WEIGHTS.write_text(durable.to_json(w, threshold, meta), encoding="utf-8")
        RESULTS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
