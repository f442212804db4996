"""``dynmem bench tide``: generate streams, run a system on them, score, report.

Serial by default; ``--parallel N`` runs streams as Ray tasks (each builds its own
in-process Runtime in a temporary directory), which gives the same result as the serial
run since every stream is independent and deterministic.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from eval.cli import report_dir
from eval.tide.generator import VARIANTS, Stream, generate
from eval.tide.score import BUDGETS, ProbeScore, has_token, score_block, summarise
from eval.tide.systems import SERVABLE, SYSTEMS, Blocks, run_stream



def run_streams(streams: Sequence[Stream], system: str, level: str, *, config: str | None = None,
                data_root: str | None = None, parallel: int = 1, progress: bool = False) -> list[Blocks]:
    """Blocks of every stream, serially or as Ray tasks (same result either way)."""
    if parallel <= 1 or system in ("none", "oracle", "recency", "bm25"):
        from tqdm import tqdm

        return [run_stream(s, system, level, config, data_root)
                for s in tqdm(streams, desc=f"tide {system}/{level}", disable=not progress, file=sys.stderr)]
    import ray

    from actors.launch import init_ray

    started = not ray.is_initialized()
    init_ray(num_cpus=parallel)
    try:
        task = ray.remote(num_cpus=0)(run_stream)
        refs = [task.remote(s, system, level, config, data_root) for s in streams]
        return list(ray.get(refs))
    finally:
        if started:
            ray.shutdown()


def score_streams(streams: Sequence[Stream], blocks: Sequence[Blocks]) -> dict[int, list[ProbeScore]]:
    """ProbeScores per budget, aligned with the probes of ``streams`` in order."""
    out: dict[int, list[ProbeScore]] = {b: [] for b in BUDGETS}
    for stream, per_probe in zip(streams, blocks):
        for probe, block in zip(stream.probes, per_probe):
            for b in BUDGETS:
                s, h = score_block(block[b], probe.gold, probe.harmful)
                out[b].append(ProbeScore(stream.id, probe.dimension, s, h))
    return out


def evaluate(streams: Sequence[Stream], blocks: Sequence[Blocks], *, seed: int, n_boot: int = 1000) -> dict[str, object]:
    """The benchmark document (without the run's identification fields)."""
    refs = {name: score_streams(streams, [run_stream(s, name, "engine") for s in streams]) for name in ("none", "oracle")}
    return summarise({"sys": score_streams(streams, blocks), **refs}, seed=seed, n_boot=n_boot)


#: Where each gold value of a probe stands, at the smaller budget (columns of the report's table).
STANDINGS = ("served", "served at 256 only", "in memory, not injected", "never extracted")


def standings(streams: Sequence[Stream], blocks: Sequence[Blocks]) -> dict[str, dict[str, int]]:
    """Per dimension, how many gold values were served at 64 tokens, only at 256, were held by a
    servable memory of the project but not injected (a retrieval miss), or by none (an extraction
    miss). Aggregates only, so a held-out variant's report can show them. Empty when the system
    reports no memories (references and baselines)."""
    out: dict[str, dict[str, int]] = {}
    for stream, per_probe in zip(streams, blocks):
        for probe, block in zip(stream.probes, per_probe):
            if SERVABLE not in block:
                return {}
            row = out.setdefault(probe.dimension, dict.fromkeys(STANDINGS, 0))
            for g in probe.gold:
                if has_token(block[64], g):
                    row["served"] += 1
                elif has_token(block[256], g):
                    row["served at 256 only"] += 1
                elif any(has_token(line, g) for line in block[SERVABLE].splitlines()):
                    row["in memory, not injected"] += 1
                else:
                    row["never extracted"] += 1
    return {d: row for d, row in out.items() if sum(row.values())}


def summed(runs: Sequence[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """The standings of several runs (seeds) added up, dimension by dimension."""
    total: dict[str, dict[str, int]] = {}
    for rows in runs:
        for dim, row in rows.items():
            into = total.setdefault(dim, dict.fromkeys(STANDINGS, 0))
            for k in STANDINGS:
                into[k] += int(row.get(k, 0))
    return total


def standings_table(rows: dict[str, dict[str, int]]) -> str:
    total = {k: sum(row[k] for row in rows.values()) for k in STANDINGS}
    lines = ["| dimension | " + " | ".join(STANDINGS) + " |", "|" + "---|" * (len(STANDINGS) + 1)]
    lines += [f"| {dim} | " + " | ".join(str(row[k]) for k in STANDINGS) + " |"
              for dim, row in {"**all**": total, **rows}.items()]
    return "\n".join(lines)


def failures(streams: Sequence[Stream], blocks: Sequence[Blocks], budget: int, limit: int = 40) -> list[dict[str, object]]:
    """Probes at ``budget`` that missed gold or injected something harmful, with their blocks."""
    rows: list[dict[str, object]] = []
    for stream, per_probe in zip(streams, blocks):
        for probe, block in zip(stream.probes, per_probe):
            s, h = score_block(block[budget], probe.gold, probe.harmful)
            if h or (probe.gold and s < 1):
                rows.append({"stream": stream.id, "dimension": probe.dimension, "project": probe.project,
                             "question": probe.question, "gold": list(probe.gold), "harmful": list(probe.harmful),
                             "s": s, "h": h, "block": block[budget]})
    return rows[:limit]


def _fmt(x: object) -> str:
    return "—" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def table(doc: dict[str, object]) -> str:
    """A plain-text/markdown table: overall and by dimension, both budgets."""
    head = "| dimension | n | NTU@64 | NTU@256 | harmful@64 | harmful@256 |"
    lines = [head, "|" + "---|" * 6]
    ntu, hr = doc["ntu"], doc["harmful_rate"]
    by_dim: dict[str, dict[str, object]] = doc["by_dimension"]  # type: ignore[assignment]
    n_all = sum(int(d["n"]) for d in by_dim.values())  # type: ignore[call-overload]
    lines.append(f"| **all** | {n_all} | {_fmt(ntu['64'])} | {_fmt(ntu['256'])} | "  # type: ignore[index]
                 f"{_fmt(hr['64'])} | {_fmt(hr['256'])} |")  # type: ignore[index]
    for dim, d in by_dim.items():
        lines.append(f"| {dim} | {d['n']} | {_fmt(d['ntu']['64'])} | {_fmt(d['ntu']['256'])} | "  # type: ignore[index]
                     f"{_fmt(d['harmful_rate']['64'])} | {_fmt(d['harmful_rate']['256'])} |")  # type: ignore[index]
    ci = doc["ci95"]
    for b in ("64", "256"):
        lines.append(f"\nci95@{b}: NTU {ci[b]['ntu']}, harmful rate {ci[b]['harmful_rate']}")  # type: ignore[index]
    return "\n".join(lines)


def plot(doc: dict[str, object], path: Path, title: str) -> None:
    """Bar plot of NTU by dimension at both budgets (dimensions without NTU show 1 - harmful rate)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_dim: dict[str, dict[str, dict[str, float | None]]] = doc["by_dimension"]  # type: ignore[assignment]
    dims = list(by_dim)
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.38
    for j, b in enumerate(("64", "256")):
        vals = [v if (v := by_dim[d]["ntu"][b]) is not None else 1 - (by_dim[d]["harmful_rate"][b] or 0) for d in dims]
        ax.bar([i + (j - 0.5) * width for i in range(len(dims))], vals, width, label=f"{b} tokens")
    ax.set_xticks(range(len(dims)), [d + ("*" if by_dim[d]["ntu"]["64"] is None else "") for d in dims], rotation=20)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("NTU (* = 1 - harmful rate)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def report_stem(doc: dict[str, object]) -> str:
    """File stem of a run's report: the shipped variant keeps its historical names; other
    variants add the variant and the seed (their point is to be run on several seeds)."""
    stem = f"tide-{doc['level']}-{doc['system']}"
    variant = doc.get("variant", "shipped")
    return stem if variant == "shipped" else f"{stem}-{variant}-seed{doc['seed']}"


def write_report(doc: dict[str, object], fails: list[dict[str, object]], out_dir: Path, command: str,
                 stand: dict[str, dict[str, int]] | None = None) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = report_stem(doc)
    variant = doc.get("variant", "shipped")
    title = (f"TIDE: {doc['system']} at the {doc['level']} level (seed {doc['seed']}, {doc['streams']} streams"
             + ("" if variant == "shipped" else f", {variant} variant") + ")")
    plot(doc, out_dir / f"{stem}.png", title)
    lines = [f"# {title}", "", "Reproduce:", "", "```", command, "```", "", table(doc), "",
             f"![NTU by dimension]({stem}.png)", "",
             "NTU: 0 = empty block, 1 = exactly the gold sentences; retraction and deletion have no gold "
             "(both references score 0), so only their harmful rate is defined.", ""]
    if stand:
        lines += ["## Where the gold values stand", "",
                  "Each gold value of a probe: served in the 64-token block, served only at 256 tokens, held by a "
                  "servable memory of its project but not injected (retrieval), or held by none (extraction).", "",
                  standings_table(stand), ""]
    if fails and variant == "heldout":
        # A held-out variant's wording must not be read to tune the extractor: only aggregates.
        lines += ["Individual failures are not listed for the held-out variant.", ""]
    elif fails:
        lines += ["## Failures at 64 tokens (first 40)", ""]
        for f in fails:
            block = str(f["block"]).replace("\n", " / ") or "(empty)"
            lines.append(f"- [{f['dimension']}] s{f['stream']} `{f['project']}` \"{f['question']}\" gold={f['gold']} "
                         f"harmful={f['harmful']} S={f['s']:.2f} H={f['h']}: {block}")
    path = out_dir / f"{stem}.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if variant != "shipped":  # the document too, for the multi-seed summary (eval.tide.summary)
        (out_dir / f"{stem}.json").write_text(json.dumps({**doc, "command": command}, indent=1) + "\n",
                                              encoding="utf-8")
    return path


def main(args: argparse.Namespace) -> int:
    if args.system not in SYSTEMS:
        print(f"error: unknown system {args.system!r}; one of {', '.join(SYSTEMS)}", file=sys.stderr)
        return 2
    if args.system == "no-supersede" and args.level != "engine":
        print("error: no-supersede is defined at the engine level only (add --level engine)", file=sys.stderr)
        return 2
    if args.streams < 1:
        print("error: --streams must be at least 1", file=sys.stderr)
        return 2
    variant = getattr(args, "variant", None) or "shipped"
    if variant not in VARIANTS:
        print(f"error: unknown variant {variant!r}; one of {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    streams = generate(args.seed, args.streams, variant=variant)
    blocks = run_streams(streams, args.system, args.level, config=args.config, data_root=args.data_dir,
                         parallel=args.parallel, progress=not args.json and sys.stderr.isatty())
    doc = evaluate(streams, blocks, seed=args.seed)
    doc.update({"system": args.system, "level": args.level, "seed": args.seed, "streams": args.streams})
    if variant != "shipped":
        doc["variant"] = variant
    command = "dynmem bench tide " + shlex.join(
        ["--seed", str(args.seed), "--level", args.level, "--streams", str(args.streams), "--system", args.system]
        + (["--variant", variant] if variant != "shipped" else [])
        + (["--config", args.config] if args.config else []))
    out = report_dir(args)
    stand = standings(streams, blocks)
    if stand:
        doc["standings"] = stand
    report = write_report(doc, failures(streams, blocks, 64), out, command, stand) if out is not None else None
    if args.json:
        print(json.dumps(doc))
    else:
        print(f"TIDE {args.system} ({args.level} level), seed {args.seed}, {args.streams} streams"
              + ("" if variant == "shipped" else f", {variant} variant"))
        print(table(doc))
        if stand:
            print("\nwhere the gold values stand:\n" + standings_table(stand))
        print(f"\nreport: {report}" if report else "\n(no report written: --out DIR, or --canonical for eval/results/)")
    return 0
