"""Train (and check across writers) the removal classifier of ``actors/llm/removal.py``.

    python -m eval.removals.train            # the report on stdout
    python -m eval.removals.train --write    # also rewrite the shipped weights and eval/results/removal_model.md
    python -m eval.removals.train --check    # exit 1 if the shipped weights are not what training gives

The corpus, ``actors/llm/data/removal.jsonl``, was written from a brief by helpers who read neither
the code nor any evaluation data (``actors/llm/data/README.md``); each line is one chat message with
every named thing in it labelled gone or not, and says which part (writer) it belongs to. Each part is
scored by a model trained on the other parts only, and those scores pick the threshold; the report
also scores the held-out messages of ``eval/removals/data`` (two more writers, never trained on) by the
shipped model, with the thing each message names given and with the things ``named_things`` finds.
Training has no randomness, so a rerun gives the same weights.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from actors.llm import linear, removal
from eval import jsonl
from eval.removals.measure import DATA, load

CORPUS = "removal.jsonl"
RESULTS = Path(__file__).resolve().parents[1] / "results" / "removal_model.md"
WEIGHTS = Path(removal.__file__).resolve().parent / "data" / "removal_weights.json"
#: A thing read as gone retires every memory that names it, so a misreading loses a fact that holds:
#: the threshold asks this precision of the scores of writers the model never trained on.
MIN_PRECISION = 0.9


class Thing(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1)
    gone: bool


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    part: int
    speaker: str = Field(pattern="^(user|assistant)$")
    text: str = Field(min_length=1)
    things: tuple[Thing, ...]


class Scored(NamedTuple):
    p: float
    label: int
    part: int


def load_corpus(path: Path | None = None) -> list[tuple[int, removal.Labelled]]:
    """(part, labelled thing) for every thing of every message of the corpus (or another file of its format)."""
    if path is None:
        path = Path(str(resources.files("actors.llm.data").joinpath(CORPUS)))
    out = []
    for n, m in jsonl.rows(path, Message):
        for t in m.things:
            if t.name not in m.text:
                raise ValueError(f"{path.name} line {n}: the thing {t.name!r} is not in the text")
            out.append((m.part, removal.Labelled(m.text, m.speaker, t.name, int(t.gone))))
    return out


def cross_author(rows: list[tuple[int, removal.Labelled]]) -> list[Scored]:
    """Every thing scored by a model trained on the other parts (writers) only."""
    out: list[Scored] = []
    for part in sorted({p for p, _ in rows}):
        w = removal.train([e for p, e in rows if p != part])
        out += [Scored(removal.probability(w, e.text, e.thing, e.speaker), e.label, part) for p, e in rows if p == part]
    return out


def pick_threshold(scored: list[Scored]) -> float:
    """The lowest threshold (most recall) whose precision across writers is at least MIN_PRECISION."""
    return linear.pick_threshold([(s.p, s.label) for s in scored], MIN_PRECISION)


def _pr(scored: list[Scored], threshold: float) -> tuple[float, float]:
    return linear.precision_recall([(s.p, s.label) for s in scored], threshold)[:2]


def heldout(w: dict[int, float], threshold: float) -> dict[str, tuple[int, int]]:
    """On ``eval/removals/data``: (read, of) for removals and non-removals, the thing given, or among what
    ``removal.gone`` reads (the things ``named_things`` finds, of a distinctive form)."""
    counts = {k: [0, 0] for k in ("removal given", "not_removal given", "removal found", "not_removal found")}
    for path in sorted(DATA.glob("part*.jsonl")):
        for m in load(path):
            given = removal.probability(w, m.text, m.thing, m.speaker) >= threshold
            bare = m.thing.strip("`").lower()
            found = any(bare == t.lower() or bare in t.lower().split()
                        for t in removal.gone(m.text, m.speaker, model=(w, threshold)))
            for how, hit in (("given", given), ("found", found)):
                c = counts[f"{m.kind} {how}"]
                c[0] += hit
                c[1] += 1
    return {k: (a, b) for k, (a, b) in counts.items()}


def report(authors: list[Scored], threshold: float, held: dict[str, tuple[int, int]], messages: int) -> str:
    precision, recall = _pr(authors, threshold)
    lines = [
        "# Removal classifier (`actors/llm/removal.py`)",
        "",
        "Logistic regression over the words around a named thing (by position) and the words of its clause, trained on",
        f"`actors/llm/data/removal.jsonl` ({messages} messages, {len(authors)} labelled things, "
        f"{len({s.part for s in authors})} writers who read no code and no evaluation data). Reproduce:",
        "",
        "```",
        "python -m eval.removals.train --write",
        "```",
        "",
        f"- threshold **{threshold:.2f}**: the lowest whose precision is >= {MIN_PRECISION} when each writer is scored by a",
        "  model trained on the others",
        f"- across writers: precision **{precision:.3f}**, recall **{recall:.3f}**",
        "",
        "| writer left out | things | gone | precision | recall |",
        "|---|---|---|---|---|",
    ]
    for part in sorted({s.part for s in authors}):
        mine = [s for s in authors if s.part == part]
        p_, r_ = _pr(mine, threshold)
        lines.append(f"| {part} | {len(mine)} | {sum(s.label for s in mine)} | {p_:.3f} | {r_:.3f} |")
    lines += ["", "Held out (`eval/removals/data`, two more writers, never trained on, aggregates only), shipped model:",
              "", "| messages | the thing given | among what `gone` reads (things found, distinctive names only) |", "|---|---|---|"]
    for kind, what in (("removal", "removals read"), ("not_removal", "non-removals misread")):
        g, f = held[f"{kind} given"], held[f"{kind} found"]
        lines.append(f"| {what} | {g[0]} / {g[1]} ({g[0] / max(1, g[1]):.0%}) | {f[0]} / {f[1]} ({f[0] / max(1, f[1]):.0%}) |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--write", action="store_true", help="rewrite the shipped weights and the results page")
    ap.add_argument("--check", action="store_true", help="exit 1 if the shipped weights differ from a retrain")
    args = ap.parse_args(argv)
    rows = load_corpus()
    w = removal.train([e for _, e in rows])
    meta = {"corpus": CORPUS, "examples": len(rows), "trainer": "eval.removals.train"}
    if args.check:
        shipped = json.loads(WEIGHTS.read_text(encoding="utf-8")) if WEIGHTS.exists() else None
        same = shipped and WEIGHTS.read_text(encoding="utf-8") == linear.to_json(w, shipped["threshold"], meta)
        print("shipped weights match a retrain" if same else "shipped weights differ from a retrain")
        return 0 if same else 1
    authors = cross_author(rows)
    threshold = pick_threshold(authors)
    shipped_w = {int(i): v for i, v in json.loads(linear.to_json(w, threshold, meta))["weights"].items()}
    messages = sum(1 for _ in jsonl.rows(Path(str(resources.files("actors.llm.data").joinpath(CORPUS))), Message))
    doc = report(authors, threshold, heldout(shipped_w, threshold), messages)
    print(doc)
    if args.write:
        WEIGHTS.write_text(linear.to_json(w, threshold, meta), encoding="utf-8")
        RESULTS.write_text(doc, encoding="utf-8")
        linear.load.cache_clear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
