"""One report over several seeds of a TIDE variant: ``python -m eval.tide.summary``.

``dynmem bench tide --variant heldout --seed S --canonical`` (or ``--out DIR``) writes, for every seed, its own report and
its document (``tide-<level>-<system>-<variant>-seed<S>.{md,json}``); this module gathers the
documents of one level/system/variant into ``tide-<level>-<variant>.md`` (for example
``eval/results/tide-pipeline-heldout.md``): the overall scores per seed and the scores by
dimension per seed, both budgets, plus the hand-written ``<stem>.notes.md`` if present.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from eval.cli import CANONICAL_RESULTS
from eval.tide.run import _fmt, standings_table, summed


def _seed(path: Path) -> int:
    m = re.search(r"-seed(\d+)\.json$", path.name)
    return int(m.group(1)) if m else -1


def load(out_dir: Path, level: str, system: str, variant: str) -> list[dict[str, Any]]:
    paths = sorted(out_dir.glob(f"tide-{level}-{system}-{variant}-seed*.json"), key=_seed)
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


def render(docs: list[dict[str, Any]], *, level: str, system: str, variant: str, notes: str = "") -> str:
    def row(label: str, n: object, ntu: dict[str, Any], hr: dict[str, Any]) -> str:
        return (f"| {label} | {n} | {_fmt(ntu['64'])} | {_fmt(ntu['256'])} | {_fmt(hr['64'])} | "
                f"{_fmt(hr['256'])} |")

    head = "| seed | n | NTU@64 | NTU@256 | harmful@64 | harmful@256 |"
    lines = [f"# TIDE, {variant} variant: {system} at the {level} level, seeds "
             + ", ".join(str(d["seed"]) for d in docs), "",
             "Reproduce (each run about a minute on 2 shared cores):", "", "```"]
    lines += [str(d.get("command", "")) + " --canonical" for d in docs]
    lines += [f"python -m eval.tide.summary --level {level} --system {system} --variant {variant}", "```", "",
              "## Overall", "", head, "|" + "---|" * 6]
    for d in docs:
        by_dim: dict[str, Any] = d["by_dimension"]
        n = sum(int(v["n"]) for v in by_dim.values())
        lines.append(row(str(d["seed"]), n, d["ntu"], d["harmful_rate"]))
    if docs:
        mean = {k: {b: sum(float(d[k][b]) for d in docs) / len(docs) for b in ("64", "256")}
                for k in ("ntu", "harmful_rate")}
        lines.append(row("**mean**", "", mean["ntu"], mean["harmful_rate"]))
    lines += ["", "95% intervals (streams resampled, per seed): "
              + "; ".join(f"seed {d['seed']}: NTU@64 {d['ci95']['64']['ntu']}, "
                          f"harmful@64 {d['ci95']['64']['harmful_rate']}" for d in docs), "",
              "## By dimension", "", "| dimension | seed | n | NTU@64 | NTU@256 | harmful@64 | harmful@256 |",
              "|" + "---|" * 7]
    dims = sorted({k for d in docs for k in d["by_dimension"]})
    for dim in dims:
        for d in docs:
            v = d["by_dimension"][dim]
            lines.append(f"| {dim} " + row(str(d["seed"]), v["n"], v["ntu"], v["harmful_rate"]))
    stood = [d["standings"] for d in docs if d.get("standings")]
    if stood:
        lines += ["", f"## Where the gold values stand ({len(stood)} seeds summed)", "",
                  "Served in the 64-token block, served only at 256 tokens, held by a servable memory of the project "
                  "but not injected (retrieval), or held by none (extraction).", "", standings_table(summed(stood))]
    lines += ["", "NTU: 0 = empty block, 1 = exactly the gold sentences; retraction and deletion have no gold, so "
              "only their harmful rate is defined. Per-seed reports with the failing probes: "
              + ", ".join(f"`tide-{level}-{system}-{variant}-seed{d['seed']}.md`" for d in docs) + "."]
    return "\n".join(lines) + "\n" + (("\n" + notes) if notes else "")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--level", default="pipeline")
    p.add_argument("--system", default="dynmem")
    p.add_argument("--variant", default="heldout")
    p.add_argument("--out", help="folder of the per-seed documents and of the summary (default eval/results)")
    args = p.parse_args(argv)
    out = Path(args.out) if args.out else CANONICAL_RESULTS
    docs = load(out, args.level, args.system, args.variant)
    if not docs:
        print(f"no tide-{args.level}-{args.system}-{args.variant}-seed*.json under {out}")
        return 1
    stem = f"tide-{args.level}-{args.variant}"
    notes_path = out / f"{stem}.notes.md"
    notes = notes_path.read_text(encoding="utf-8") if notes_path.exists() else ""
    path = out / f"{stem}.md"
    path.write_text(render(docs, level=args.level, system=args.system, variant=args.variant, notes=notes),
                    encoding="utf-8")
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
