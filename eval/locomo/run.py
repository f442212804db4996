"""``dynmem bench locomo``: turn-level evidence retrieval on LoCoMo, against a BM25 baseline."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eval.cli import report_dir
from eval.locomo.metrics import KS
from eval.locomo.runner import SYSTEMS

REPO = Path(__file__).resolve().parents[2]
DEFAULT_FILE = REPO.parent / "shared" / "eval-data" / "locomo" / "locomo10.json"
LABELS = {"dynmem": "dynmem", "dynmem_nogate": "dynmem, gate off", "bm25": "BM25 over turns"}

ATTRIBUTION = (
    "Data: LoCoMo, Maharana et al., \"Evaluating Very Long-Term Conversational Memory of LLM Agents\", "
    "ACL 2024 (arXiv:2402.17753), https://github.com/snap-research/locomo (commit 3eb6f2c5), "
    "licensed CC BY-NC 4.0: attribution required, non-commercial use only. The data file is not "
    "redistributed with this project; it is read from `../shared/eval-data/locomo/`."
)


def _command(args: argparse.Namespace) -> str:
    parts = [".venv/bin/dynmem", "bench", "locomo", "--conversations", str(args.conversations)]
    for flag, value in (("--file", args.file), ("--config", args.config), ("--out", args.out)):
        if value:
            parts += [flag, str(value)]
    if args.parallel and args.parallel > 1:
        parts += ["--parallel", str(args.parallel)]
    return shlex.join(parts)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def render(doc: Mapping[str, Any], command: str, png_name: str, wall_s: float, parallel: int) -> str:
    lines = [
        "# LoCoMo: turn-level evidence retrieval",
        "",
        ATTRIBUTION,
        "",
        "Reproduce:",
        "",
        "```",
        command,
        "```",
        "",
        "Each conversation is replayed turn by turn through the whole pipeline (log, rules extraction, embedding,",
        "ingest, adjudication), one unit per dialogue turn; each question is then recalled (passive, k 50, budget",
        "8192 tokens) and the recalled memories are mapped to the dialogue ids of their source turns. Recall@k is",
        "the share of a question's evidence dialogue ids among the first k dialogue ids. `dynmem, gate off` is a",
        "diagnostic: the same memories with the relevance gate and the suppression switched off. BM25 ranks the raw",
        "turns directly (`engine.lexical.BM25Index`, k1 1.2, b 0.75).",
        "",
        f"{doc['conversations']} conversations, {doc['turns']} turns, {doc['questions']} questions "
        f"({doc['questions_without_evidence']} without a resolvable evidence id, skipped). Wall time "
        f"{wall_s:.1f} s ({'serial' if parallel <= 1 else f'{parallel} Ray tasks'}).",
        "",
        "## Recall of evidence turns, categories 1-4",
        "",
        f"![by category]({png_name})",
        "",
    ]
    header = "| category | n | " + " | ".join(f"{LABELS[s]} R@{k}" for s in SYSTEMS for k in KS) + " |"
    lines += [header, "| --- | --- | " + " | ".join("---" for _ in SYSTEMS for _ in KS) + " |"]
    rows = [("**all 1-4**", doc["overall_1_4"]), *doc["by_category"].items()]
    for name, row in rows:
        label = f"{name} (reported apart)" if name.startswith("5 ") else name
        lines.append(f"| {label} | {row['n']} | " + " | ".join(_pct(row[f'{s}_r@{k}']) for s in SYSTEMS for k in KS) + " |")
    lines += [
        "",
        "Category 5 (adversarial) questions have no answer in the conversation; their evidence ids point at the turns",
        "the question is built around, so their recall is shown for completeness only and is not in the 1-4 average.",
        "",
        "## What the pipeline kept",
        "",
        f"- memories extracted: {doc['memories']} ({doc['servable_memories']} servable) from {doc['turns']} turns; "
        f"turns cited by any memory: {doc['turns_cited_by_memories']}.",
        f"- share of the category 1-4 evidence ids cited by any memory at all (the ceiling of any dynmem recall): "
        f"{_pct(doc['evidence_covered'])}.",
        "",
        "## Time",
        "",
        "| step | seconds (sum over conversations) |",
        "| --- | --- |",
    ]
    for key, v in doc["seconds"].items():
        lines.append(f"| {key} | {v:.2f} |")
    lines += ["", f"Mean recall latency {doc['recall_ms_mean']:.1f} ms per question (in process, MiniLM query "
              f"embedding included); observe {doc['observe_turns_per_s']} turns/s; drain (extract + embed + ingest) "
              f"{doc['drain_turns_per_s']} turns/s.", ""]
    return "\n".join(lines)


def plot(doc: Mapping[str, Any], path: Path) -> Path:
    from eval.plots import grouped_bars

    cats = ["all 1-4", *[c for c in doc["by_category"] if not c.startswith("5 ")]]
    rows = [doc["overall_1_4"], *[doc["by_category"][c] for c in cats[1:]]]
    series = {f"{LABELS[s]} R@{k}": [r[f"{s}_r@{k}"] for r in rows] for s in ("dynmem", "bm25") for k in (5, 25)}
    return grouped_bars(path, "LoCoMo evidence recall by category (categories 1-4)", cats, series,
                        ylabel="evidence recall", rotate=0)


def main(args: argparse.Namespace) -> int:
    from actors.config import load_settings
    from eval.locomo.data import load_conversations
    from eval.locomo.metrics import summarize
    from eval.locomo.runner import run_conversations

    source = Path(args.file) if args.file else DEFAULT_FILE
    settings = load_settings(Path(args.config) if args.config else None)
    convs = load_conversations(source, limit=max(1, min(10, args.conversations)))
    parallel = max(1, args.parallel or 1)
    t0 = time.perf_counter()
    results = run_conversations(convs, settings, parallel=parallel, progress=sys.stderr.isatty() and not args.json)
    wall = time.perf_counter() - t0
    doc = summarize(results)
    doc["wall_seconds"] = round(wall, 2)
    out = report_dir(args)
    if out is not None:
        png = plot(doc, out / "locomo.png")
        notes = out / "locomo.notes.md"  # hand-written analysis, appended on every run
        text = render(doc, _command(args), png.name, wall, parallel)
        (out / "locomo.md").write_text(text + ("\n" + notes.read_text(encoding="utf-8") if notes.exists() else ""),
                                       encoding="utf-8")
    if args.json:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
        return 0
    print(f"{doc['conversations']} conversations, {doc['questions']} questions, {wall:.1f} s")
    for name, row in [("all 1-4", doc["overall_1_4"]), *doc["by_category"].items()]:
        cells = "  ".join(f"{s} R@{k} {row[f'{s}_r@{k}']:.3f}" for s in ("dynmem", "bm25") for k in KS)
        print(f"  {name:<16} n={row['n']:<4} {cells}")
    print(f"report: {out / 'locomo.md'}" if out is not None else "(no report written: --out DIR, or --canonical for eval/results/)")
    return 0
