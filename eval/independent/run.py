"""``dynmem bench independent``: replay a history written without reading the code, then probe it.

A data folder holds ``history.jsonl`` (DESIGN §11 history format, several projects) and
``probes.json`` (``id``, ``project``, ``question``, ``expect``, ``stale``, ``kind``, ``note``).
Every turn goes through the whole pipeline (``replay``); each probe is a passive recall in its
project, scored on the injected block exactly as the plugin would inject it:

- a gold token is *served* when it appears in the block (case-insensitive);
- a probe is *wrong* when any of its stale tokens appears (an old, retracted, other-project,
  trap or secret value).

The folders under ``eval/independent/data/`` were written by helpers who never read the
extractor or the engine; failures there are reported, never fixed by a phrase rule.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from eval.cli import report_dir

DATA = Path(__file__).resolve().parent / "data"
#: Folders held out (data/PROTOCOL.md): their reports give aggregates only, so that nobody
#: reading eval/results tunes on an individual miss.
HELD_OUT = frozenset({"gamma", "delta", "epsilon", "zeta", "kappa", "mu", "xi", "pi", "sigma", "upsilon"})


class Probe(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    id: str
    project: str
    question: str
    expect: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    kind: str = ""
    note: str = ""


class ProbeResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    probe: Probe
    served: tuple[str, ...] = Field(description="gold tokens found in the injected block")
    wrong: tuple[str, ...] = Field(description="stale tokens found in the injected block")
    context: str


def load_probes(folder: Path) -> list[Probe]:
    return [Probe.model_validate(p) for p in json.loads((folder / "probes.json").read_text(encoding="utf-8"))]


def score(probe: Probe, context: str) -> ProbeResult:
    low = context.lower()
    return ProbeResult(probe=probe, served=tuple(t for t in probe.expect if t.lower() in low),
                       wrong=tuple(t for t in probe.stale if t.lower() in low), context=context)


def summarise(results: Sequence[ProbeResult]) -> dict[str, Any]:
    gold = sum(len(r.probe.expect) for r in results)
    served = sum(len(r.served) for r in results)
    with_gold = [r for r in results if r.probe.expect]
    by_kind: dict[str, dict[str, Any]] = defaultdict(lambda: {"n": 0, "gold": 0, "served": 0, "wrong": 0})
    for r in results:
        k = by_kind[r.probe.kind or "other"]
        k["n"] += 1
        k["gold"] += len(r.probe.expect)
        k["served"] += len(r.served)
        k["wrong"] += bool(r.wrong)
    return {
        "probes": len(results),
        "gold_tokens": gold,
        "gold_served": served,
        "current_value_rate": round(served / gold, 4) if gold else None,
        "questions_fully_answered": sum(1 for r in with_gold if len(r.served) == len(r.probe.expect)),
        "questions_with_gold": len(with_gold),
        "questions_wrong": sum(1 for r in results if r.wrong),
        "by_kind": dict(sorted(by_kind.items())),
    }


def run_folder(folder: Path, data_dir: Path, *, use_ray: bool, config: str | None = None) -> tuple[dict[str, Any], list[ProbeResult]]:
    from actors.config import load_settings
    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from actors.replay import replay_file
    from actors.wire import RecallRequest

    settings = load_settings(Path(config) if config else None)
    rt = Runtime(data_dir, settings, use_ray=use_ray)
    try:
        pipe = Pipeline(rt)
        t0 = time.perf_counter()
        replay_file(pipe, folder / "history.jsonl")
        replay_s = time.perf_counter() - t0
        results = [score(p, pipe.recall(RecallRequest(project=p.project, query=p.question, passive=True)).context)
                   for p in load_probes(folder)]
        texts = {proj: [m.text.lower() for m in pipe.memories(proj) if m.servable]
                 for proj in sorted({p.project for p in load_probes(folder)})}
        active = {proj: len(t) for proj, t in texts.items()}
    finally:
        rt.shutdown()
    doc = summarise(results)
    # A missed gold value is an extraction miss when no active memory of its project holds it, else a
    # retrieval miss (the memory exists but was not injected for this question).
    missed = [(r.probe.project, t.lower()) for r in results for t in r.probe.expect if t not in r.served]
    doc["missed_gold_without_memory"] = sum(1 for proj, t in missed if not any(t in m for m in texts[proj]))
    doc["missed_gold_with_memory"] = len(missed) - doc["missed_gold_without_memory"]
    doc.update({"folder": folder.name, "replay_s": round(replay_s, 1), "active_memories": active,
                "path": "ray" if use_ray else "in-process"})
    return doc, results


def render(doc: dict[str, Any], results: Sequence[ProbeResult], command: str) -> str:
    lines = [
        f"# Independent history `{doc['folder']}`",
        "",
        "Written by a helper who never read the extractor or the engine (see the data folder's README);",
        ("held out: aggregates only (eval/independent/data/PROTOCOL.md)." if doc["folder"] in HELD_OUT
         else "development data since session 3 (eval/independent/data/PROTOCOL.md).")
        + " Every turn replayed through the whole pipeline, then one passive recall per probe.",
        "",
        "Reproduce:",
        "",
        "```",
        command,
        "```",
        "",
        f"- gold tokens served: **{doc['gold_served']} / {doc['gold_tokens']}** "
        f"({100 * (doc['current_value_rate'] or 0):.1f} %); questions fully answered "
        f"{doc['questions_fully_answered']} / {doc['questions_with_gold']}",
        f"- questions with a wrong token (stale, retracted, other project, trap, secret): "
        f"**{doc['questions_wrong']} / {doc['probes']}**",
        f"- missed gold values: {doc.get('missed_gold_without_memory', '?')} never became a memory (extraction), "
        f"{doc.get('missed_gold_with_memory', '?')} are in an active memory that was not injected (retrieval)",
        f"- replay {doc['replay_s']} s ({doc['path']}); active memories per project: {doc['active_memories']}",
        "",
        "| kind | probes | gold served | questions wrong |",
        "|---|---|---|---|",
    ]
    for kind, k in doc["by_kind"].items():
        lines.append(f"| {kind} | {k['n']} | {k['served']} / {k['gold']} | {k['wrong']} |")
    if doc["folder"] in HELD_OUT:
        return "\n".join(lines) + "\n"
    lines += ["", "## Probes that missed gold or served a wrong token", ""]
    for r in results:
        if len(r.served) < len(r.probe.expect) or r.wrong:
            missing = [t for t in r.probe.expect if t not in r.served]
            lines.append(f"- `{r.probe.id}` ({r.probe.kind}) {r.probe.question!r}: missing {missing}, wrong {list(r.wrong)}")
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace) -> int:
    folders = [Path(d) for d in (args.dir or [])] or sorted(p for p in DATA.iterdir() if (p / "probes.json").exists())
    out = report_dir(args)  # --out DIR, or eval/results with --canonical; else print only
    docs = []
    for folder in folders:
        with tempfile.TemporaryDirectory(prefix="dynmem-independent-") as tmp:
            doc, results = run_folder(folder, Path(args.data_dir) if args.data_dir else Path(tmp), use_ray=args.ray,
                                      config=args.config)
        docs.append(doc)
        command = (f"dynmem bench independent --dir {folder}" + (f" --config {args.config}" if args.config else "")
                   + (" --ray" if args.ray else ""))
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            suffix = f"-{Path(args.config).stem}" if args.config else ""
            (out / f"independent-{folder.name}{suffix}.md").write_text(render(doc, results, command), encoding="utf-8")
        if not args.json:
            print(f"{folder.name}: gold served {doc['gold_served']}/{doc['gold_tokens']}, "
                  f"wrong {doc['questions_wrong']}/{doc['probes']}")
    if args.json:
        print(json.dumps(docs if len(docs) > 1 else docs[0]))
    return 0
