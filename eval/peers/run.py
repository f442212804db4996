"""``dynmem bench peers``: score an opencode-memory scenario file with the upstream metrics."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from eval.cli import report_dir
from eval.peers.metrics import ScenarioResult, by_category, recall_by_tag, summarize

REPO = Path(__file__).resolve().parents[2]
DEFAULT_FILE = REPO.parent / "shared" / "peers" / "opencode-memory" / "dev.json"


def document(results: list[ScenarioResult]) -> dict[str, Any]:
    """The ``--json`` document (DESIGN §11), headline keys first, extras after."""
    s = summarize(results)
    head = ["recall_at_1", "recall_at_5", "mrr", "precision_macro", "precision_micro", "fpr", "false_abstention",
            "overhead_tokens", "n_positive", "n_negative"]
    doc: dict[str, Any] = {k: s[k] for k in head}
    doc["by_category"] = by_category(results)
    doc["scenarios"] = [{"id": r.id, "category": r.category, "negative": r.negative, "expected": list(r.expected),
                         "ranking": list(r.ranking), "surfaced": list(r.surfaced), "core": list(r.core),
                         "contested_marked": list(r.contested_marked), "overhead_tokens": r.overhead_tokens}
                        for r in results]
    doc.update({k: v for k, v in s.items() if k not in head})
    doc["recall_by_tag"] = recall_by_tag(results)
    return doc


def _notes(path: Path) -> str:
    """Hand-written analysis kept next to the report (``<stem>.notes.md``), appended on every run."""
    return "\n" + path.read_text(encoding="utf-8") if path.exists() else ""


def _command(args: argparse.Namespace) -> str:
    parts = [".venv/bin/dynmem", "bench", "peers"]
    if args.file:
        parts += ["--file", str(args.file)]
    if args.config:
        parts += ["--config", str(args.config)]
    if args.parallel and args.parallel > 1:
        parts += ["--parallel", str(args.parallel)]
    if args.out:
        parts += ["--out", str(args.out)]
    return shlex.join(parts)


def main(args: argparse.Namespace) -> int:
    from actors.config import load_settings
    from eval.peers.report import plot, render
    from eval.peers.runner import run_scenarios
    from eval.peers.scenarios import load_scenarios

    source = Path(args.file) if args.file else DEFAULT_FILE
    settings = load_settings(Path(args.config) if args.config else None)
    scenarios = load_scenarios(source)
    t0 = time.perf_counter()
    results = run_scenarios(scenarios, settings, parallel=max(1, args.parallel or 1),
                            progress=sys.stderr.isatty() and not args.json)
    seconds = time.perf_counter() - t0
    doc = document(results)
    doc["seconds"] = round(seconds, 2)

    out = report_dir(args)
    if out is not None:
        stem = f"peers-{source.stem}"
        png = plot(doc, out / f"{stem}.png")
        text = render(doc, results, settings=settings, command=_command(args), source=str(source), png_name=png.name,
                      seconds=seconds, parallel=args.parallel or 1)
        (out / f"{stem}.md").write_text(text + _notes(out / f"{stem}.notes.md"), encoding="utf-8")
    if args.json:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
        return 0
    ci = doc["ci95"]
    print(f"{doc['n_positive']} positive / {doc['n_negative']} negative scenarios from {source} ({seconds:.1f} s)")
    for key in ("recall_at_1", "recall_at_5", "mrr", "precision_macro", "precision_micro", "fpr", "false_abstention"):
        extra = f"  95% CI [{ci[key][0]:.3f}, {ci[key][1]:.3f}]" if key in ci else ""
        print(f"  {key:<18} {doc[key]:.3f}{extra}")
    print(f"  {'overhead_tokens':<18} {doc['overhead_tokens']:.1f}")
    print("  by category:")
    for cat, v in doc["by_category"].items():
        if v["polarity"] == "positive":
            print(f"    + {cat[:48]:<48} n={v['n']:<3} R@5 {v['recall_at_5']:.2f}  MRR {v['mrr']:.2f}  "
                  f"false-abst {v['false_abstention']:.2f}")
        else:
            print(f"    - {cat[:48]:<48} n={v['n']:<3} FPR {v['fpr']:.2f}")
    print(f"report: {out / (stem + '.md')}" if out is not None else "(no report written: --out DIR, or --canonical for eval/results/)")
    return 0
