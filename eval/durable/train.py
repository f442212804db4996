"""Train (and cross-validate) the durable-clause classifier of ``actors/llm/durable.py``.

    python -m eval.durable.train            # k-fold report on stdout
    python -m eval.durable.train --write    # also rewrite the shipped weights and eval/results/durable.md
    python -m eval.durable.train --check    # exit 1 if the shipped weights are not what training gives

The corpus, ``actors/llm/data/durable.jsonl``, was written from a brief by a helper who read
neither the code nor any evaluation history (see ``actors/llm/data/README.md``). Folds are
fixed (line number modulo k), training has no randomness, so a rerun gives the same weights.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from importlib import resources
from pathlib import Path

import numpy as np

from actors.llm import durable

CORPUS = "durable.jsonl"
RESULTS = Path(__file__).resolve().parents[1] / "results" / "durable.md"
WEIGHTS = Path(durable.__file__).resolve().parent / "data" / "durable_weights.json"
#: The decision threshold favours precision: a clause that is not durable and becomes a memory
#: costs more (it can be injected with a wrong value) than a durable clause that is missed.
MIN_PRECISION = 0.95


def load_corpus() -> list[tuple[durable.Example, str]]:
    text = resources.files("actors.llm.data").joinpath(CORPUS).read_text(encoding="utf-8")
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("label") not in (0, 1) or row.get("speaker") not in ("user", "assistant"):
            raise ValueError(f"{CORPUS}:{n}: label must be 0 or 1 and speaker user or assistant")
        out.append((durable.Example(row["text"], row["speaker"], int(row["label"])), str(row.get("cat", ""))))
    return out


def cross_validate(rows: list[tuple[durable.Example, str]], k: int = 5) -> list[tuple[float, int, str]]:
    """Out-of-fold P(durable) for every example: (probability, label, category)."""
    out: list[tuple[float, int, str]] = [(0.0, 0, "")] * len(rows)
    for fold in range(k):
        train = [e for i, (e, _) in enumerate(rows) if i % k != fold]
        w = durable.train(train)
        for i, (e, cat) in enumerate(rows):
            if i % k == fold:
                out[i] = (durable.probability(w, e.text, e.speaker), e.label, cat)
    return out


def pick_threshold(scored: list[tuple[float, int, str]]) -> float:
    """The lowest threshold (most recall) whose out-of-fold precision is at least MIN_PRECISION."""
    for t in [x / 100 for x in range(30, 96)]:
        kept = [lab for p, lab, _ in scored if p >= t]
        if kept and sum(kept) / len(kept) >= MIN_PRECISION:
            return t
    return 0.95


def report(scored: list[tuple[float, int, str]], threshold: float, n: int) -> str:
    tp = sum(1 for p, lab, _ in scored if p >= threshold and lab)
    fp = sum(1 for p, lab, _ in scored if p >= threshold and not lab)
    fn = sum(1 for p, lab, _ in scored if p < threshold and lab)
    per_cat: dict[str, Counter[str]] = {}
    for p, lab, cat in scored:
        c = per_cat.setdefault(cat or "?", Counter())
        c["n"] += 1
        c["kept"] += p >= threshold
        c["label"] = lab
    lines = [
        "# Durable-clause classifier (`actors/llm/durable.py`)",
        "",
        "Logistic regression over hashed word, word-pair and value-shape features, trained on",
        f"`actors/llm/data/durable.jsonl` ({n} clauses written from a brief by a helper who read no code",
        "and no evaluation history). Out-of-fold figures, 5 fixed folds. Reproduce:",
        "",
        "```",
        "python -m eval.durable.train --write",
        "```",
        "",
        f"- threshold **{threshold:.2f}** (the lowest with out-of-fold precision >= {MIN_PRECISION})",
        f"- precision **{tp / max(1, tp + fp):.3f}**, recall **{tp / max(1, tp + fn):.3f}** "
        f"(kept {tp + fp} of {len(scored)}; {tp} durable, {fp} not)",
        "",
        "| category | label | clauses | kept as durable |",
        "|---|---|---|---|",
    ]
    for cat, c in sorted(per_cat.items(), key=lambda kv: (-kv[1]["label"], kv[0])):
        lines.append(f"| {cat} | {c['label']} | {c['n']} | {c['kept']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite the shipped weights and eval/results/durable.md")
    ap.add_argument("--check", action="store_true", help="exit 1 if the shipped weights differ from a retrain")
    args = ap.parse_args(argv)
    rows = load_corpus()
    w = durable.train([e for e, _ in rows])
    meta = {"corpus": CORPUS, "examples": len(rows), "trainer": "eval.durable.train"}
    if args.check:  # the threshold is the shipped one: only the cross-validation picks it
        shipped = json.loads(WEIGHTS.read_text(encoding="utf-8")) if WEIGHTS.exists() else {}
        same = shipped and WEIGHTS.read_text(encoding="utf-8") == durable.to_json(w, shipped["threshold"], meta)
        print("shipped weights match a retrain" if same else "shipped weights differ from a retrain")
        return 0 if same else 1
    scored = cross_validate(rows)
    threshold = pick_threshold(scored)
    doc = durable.to_json(w, threshold, meta)
    text = report(scored, threshold, len(rows))
    print(text)
    if args.write:
        WEIGHTS.write_text(doc, encoding="utf-8")
        RESULTS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
