"""``dynmem bench perf --projects N``: N projects of the largest size in one data directory.

The issue's opt-in "1,000,000 across 10 projects" is ``--sizes ...,100000 --projects 10``. The
default run (``--projects 1``) never reaches this module.

Project 0 is the single-project store of the same size in the same run (``perf-store``, seed 0);
project k > 0 is ``perf-store-k``, the same synthetic generator with seed k (other texts, other
ids). Each project is built in a data directory of its own (kept under ``--stores`` as
``project-K-SIZE`` with a manifest, reused like the single-project stores), then the project
folders are copied into one data directory. Each part opens a fresh copy of it:

- in process (``Runtime(use_ray=False)``): the cold open of project 0 from a new Runtime, then of
  the others one by one, every engine in the one process; warm recall of project 0 while all N
  are open, timed exactly as the single-project phase (``run.time_recall_parts``); live recalls
  that visit the N projects in turn; the RSS of this process;
- Ray: the graph, then the engine actor of project 0 alone (the cold open of one project), then
  the others one by one while more than ``MIN_FREE_GIB`` of memory is left; warm live recall of
  project 0 with all of them open, and in turn over all of them; the RSS of every engine actor,
  of the index actor (it holds the vectors of every project) and of the global engine actor.

Every measure is also given as a ratio to the single-project row of the same size from the
same run (``compare``).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from eval.perf import synth
from eval.perf.measure import actor_pid, rss_mb, summarize_ms, time_each
from eval.perf.run import PROJECT, WARMUP, copy_store, import_timed, say, time_recall_parts

#: Below this much available memory no further engine actor is opened (the machine has 24 GiB;
#: each 100k engine actor holds about 330 MiB, eval/results/perf-scale/perf.md).
MIN_FREE_GIB = 2.0
TURN_MODE = "live, the projects in turn"


def project_names(n: int) -> list[str]:
    """Project 0 is the single-project store's project; the others are numbered from 1."""
    return [PROJECT if k == 0 else f"{PROJECT}-{k}" for k in range(n)]


def _manifest(settings: Any, project: str, seed: int) -> dict[str, Any]:
    return {"project": project, "seed": seed, "templates": len(synth.TEMPLATES), "embedder": settings.embedder.name,
            "first_text": next(synth.memory_texts(1, seed))[0]}


def _build_one(root: Path, settings: Any, project: str, seed: int, size: int) -> tuple[Path, dict[str, Any]]:
    """Import ``size`` synthetic memories of ``project`` (generator seed ``seed``) into a new data directory."""
    folder = root / f"build-{seed}"
    shutil.rmtree(folder, ignore_errors=True)
    row = import_timed(folder, settings, project, synth.make_memories(project, size, seed=seed), size)
    return folder, {"project": project, "size": size, **row}


def build_data_dir(root: Path, settings: Any, names: Sequence[str], size: int, first: Path,
                   keep: Path | None = None) -> tuple[Path, list[dict[str, Any]]]:
    """One data directory holding ``names``, each with ``size`` memories; the build rows.

    ``first`` is the single-project store of ``size`` (project 0, already built or reused by
    ``run.build_stores``); the others are built here, or copied from ``keep`` when a kept
    store's manifest matches.
    """
    sources: list[Path] = [first]
    rows: list[dict[str, Any]] = [{"project": names[0], "size": size, "added": 0, "seconds": None,
                                   "memories_per_s": None, "loadavg": None, "reused": True,
                                   "note": "the single-project store of this run"}]
    for seed, name in enumerate(names[1:], start=1):
        kept = keep / f"project-{seed}-{size}" if keep is not None else None
        info = kept / "perf-build.json" if kept is not None else None
        manifest = _manifest(settings, name, seed)
        if kept is not None and info is not None and info.exists():
            meta = json.loads(info.read_text(encoding="utf-8"))
            if meta.get("manifest") == manifest:
                sources.append(kept)
                rows.append({**meta["row"], "reused": True})
                say(f"reused the {size}-memory store of {name} kept in {kept}")
                continue
        folder, row = _build_one(root, settings, name, seed, size)
        rows.append(row)
        if kept is not None and info is not None:
            copy_store(folder, kept)
            info.write_text(json.dumps({"manifest": manifest, "row": row}), encoding="utf-8")
            shutil.rmtree(folder, ignore_errors=True)
            folder = kept
        sources.append(folder)
        say(f"built {name}: {size} memories in {row['seconds']:.1f} s")
    dest = root / f"projects-{len(names)}x{size}"
    copy_store(sources[0], dest)  # project 0 with the global store beside it
    for src in sources[1:]:
        (folder_src,) = [p for p in (src / "projects").iterdir() if p.is_dir()]
        shutil.copytree(folder_src, dest / "projects" / folder_src.name)
    for src in sources[1:]:
        if keep is None or not src.is_relative_to(keep):
            shutil.rmtree(src, ignore_errors=True)
    return dest, rows


def disk_facts(data_dir: Path, memories: int) -> dict[str, Any]:
    """memory.sqlite (with its WAL) and snapshot bytes per memory, and the whole directory in MiB."""
    files = [f for f in data_dir.rglob("*") if f.is_file()]
    sqlite = sum(f.stat().st_size for f in files if f.name.startswith("memory.sqlite"))
    snaps = sum(f.stat().st_size for f in files if f.name == "lexical.npz" or f.name.startswith("vectors.faiss"))
    return {"memories": memories, "disk_bytes_per_memory": round(sqlite / memories),
            "snapshot_bytes_per_memory": round(snaps / memories),
            "data_dir_mib": round(sum(f.stat().st_size for f in files) / 2**20, 1)}


def _available_gib() -> float | None:
    try:
        import psutil

        return round(float(psutil.virtual_memory().available) / 2**30, 2)
    except ImportError:
        return None


def recall_in_turn(pipe: Any, names: Sequence[str], qs: Sequence[str]) -> dict[str, Any]:
    """Live recalls that visit ``names`` in turn (query i to project i mod N), the first WARMUP untimed.

    Returns a recall row with the engine's own p50 (``latency_ms`` of each answer) and the three
    slowest recalls: which project, which query, and how much of it the engine itself took.
    """
    from actors.wire import RecallRequest

    inner: list[float] = []

    def one(iq: tuple[int, str]) -> None:
        i, q = iq
        inner.append(pipe.recall(RecallRequest(project=names[i % len(names)], query=q)).latency_ms)

    turns = list(enumerate(qs))
    warm = turns[:WARMUP]
    lat = time_each(one, turns[len(warm):], warm)
    inner = inner[len(warm):]
    slowest = sorted(range(len(lat)), key=lambda j: -lat[j])[:3]
    return {"mode": TURN_MODE, "project": f"all {len(names)}", **summarize_ms(lat),
            "engine_internal_p50_ms": round(float(sorted(inner)[len(inner) // 2]), 1) if inner else None,
            "slowest": [{"query": len(warm) + j, "project": names[(len(warm) + j) % len(names)],
                         "ms": round(lat[j], 1), "engine_ms": round(float(inner[j]), 1)} for j in slowest]}


def inprocess_part(root: Path, settings: Any, src: Path, names: Sequence[str], qs: Sequence[str],
                   qs_turn: Sequence[str]) -> dict[str, Any]:
    """Open every project in one process; recall in project 0 and in turn over all (see the module doc)."""
    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from engine.scopes import project_scope

    warm, measured = list(qs[:WARMUP]), list(qs[WARMUP:])
    work = copy_store(src, root / "projects-inproc")
    rss_before = rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    rt = Runtime(work, settings, use_ray=False)
    try:
        pipe = Pipeline(rt)
        engine = rt.engine(names[0]).target
        open_one_s, open_one_cpu_s = time.perf_counter() - t0, time.process_time() - c0
        index = rt.index.target
        index.wait_for_builds()
        opens = [round(open_one_s, 2)]
        for name in names[1:]:
            t1 = time.perf_counter()
            rt.engine(name).ping()
            opens.append(round(time.perf_counter() - t1, 2))
        index.wait_for_builds()
        open_all_s = time.perf_counter() - t0
        indexed = [index.size(project_scope(name)) for name in names]
        timed = time_recall_parts(pipe, engine, index, names[0], settings.retrieval.shortlist, warm, measured)
        in_turn = recall_in_turn(pipe, names, qs_turn)
        rss_after = rss_mb()
    finally:
        rt.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    parts = timed["parts"]
    rows = [{"mode": mode, "project": names[0], **summarize_ms(parts[key])}
            for mode, key in (("live", "live"), ("passive", "passive"),
                              ("passive, cached query vector", "after_embed"))]
    rows.append(in_turn)
    say(f"{len(names)} projects in process: open one {open_one_s:.2f} s, all {open_all_s:.2f} s, live p50 "
        f"{rows[0]['p50_ms']:.2f} ms in {names[0]}, {rows[-1]['p50_ms']:.2f} ms in turn; RSS {rss_after} MiB")
    return {"open_one_s": round(open_one_s, 2), "open_one_cpu_s": round(open_one_cpu_s, 2), "open_each_s": opens,
            "open_all_s": round(open_all_s, 2), "indexed": indexed, "recall": rows,
            "split_p50_ms": {k: summarize_ms(parts[k])["p50_ms"] for k in ("embed", "faiss", "lexical")},
            "after_embed_cpu_p50_ms": summarize_ms(timed["cpu_after_embed"])["p50_ms"],
            "rss_before_mb": rss_before, "rss_mb": rss_after}


def ray_part(root: Path, settings: Any, src: Path, names: Sequence[str], qs: Sequence[str],
             qs_turn: Sequence[str]) -> dict[str, Any]:
    """Every project's engine actor open at once (memory allowing); recall and RSS (Ray must be initialised)."""
    import numpy as np

    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from actors.wire import RecallRequest

    warm, measured = list(qs[:WARMUP]), list(qs[WARMUP:])
    work = copy_store(src, root / "projects-ray")
    t0 = time.perf_counter()
    rt = Runtime(work, settings, use_ray=True)
    try:
        pipe = Pipeline(rt)
        rt.index.ping()
        rt.global_engine.ping()
        workers: list[Any] = [*rt.extractors, rt.adjudicator, rt.investigator]
        for worker in workers:
            worker.ping()
        graph_s = time.perf_counter() - t0
        opened: list[str] = []
        opens: list[float] = []
        skipped: list[str] = []
        t1 = time.perf_counter()
        for name in names:
            free = _available_gib()
            if opened and free is not None and free < MIN_FREE_GIB:
                skipped.append(name)
                continue
            t2 = time.perf_counter()
            rt.engine(name).ping()
            opens.append(round(time.perf_counter() - t2, 2))
            opened.append(name)
        open_all_s = time.perf_counter() - t1
        rt.index.wait_for_builds()
        ready_s = time.perf_counter() - t0
        inner: list[float] = []

        def live(q: str) -> None:
            inner.append(pipe.recall(RecallRequest(project=opened[0], query=q)).latency_ms)

        lat = time_each(live, measured, warm)
        inner = inner[len(warm):]
        in_turn = recall_in_turn(pipe, opened, qs_turn)
        engines = {name: rss_mb(actor_pid(rt.engine(name).target)) for name in opened}
        index_rss = rss_mb(actor_pid(rt.index.target))
        global_rss = rss_mb(actor_pid(rt.global_engine.target))
        free_after = _available_gib()
    finally:
        rt.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    rows: list[dict[str, Any]] = [{"mode": "live", "project": opened[0], **summarize_ms(lat),
             "engine_internal_p50_ms": round(float(np.percentile(inner, 50)), 1) if inner else None},
            in_turn]
    known = [v for v in engines.values() if v is not None]
    say(f"{len(opened)} projects on Ray: engine of {opened[0]} opened in {opens[0]:.2f} s, all in {open_all_s:.2f} s; "
        f"live p50 {rows[0]['p50_ms']:.2f} ms; engines {sum(known):.0f} MiB, index {index_rss} MiB; "
        f"{free_after} GiB available")
    return {"graph_s": round(graph_s, 2), "open_each_s": opens, "open_one_s": opens[0], "open_all_s": round(open_all_s, 2),
            "ready_s": round(ready_s, 2), "opened": opened, "skipped_for_memory": skipped, "recall": rows,
            "engine_rss_mb": engines, "index_rss_mb": index_rss, "global_engine_rss_mb": global_rss,
            "actors_rss_mb": round(sum(known) + (index_rss or 0) + (global_rss or 0), 1),
            "available_gib_after": free_after}


def compare(doc: Mapping[str, Any], many: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each measure with N projects beside the single-project row of the same size from the same run."""
    size = many["size"]
    out: list[dict[str, Any]] = []

    def add(measure: str, single: Any, value: Any) -> None:
        if single is None or value is None:
            return
        ratio = round(value / single, 2) if single else None
        out.append({"measure": measure, "single": single, "many": value, "ratio": ratio})

    single_rows = {r["mode"]: r for r in doc["recall"].get("inprocess", []) if r["size"] == size}
    inproc = many.get("inprocess") or {}
    for r in inproc.get("recall", []):
        base = single_rows.get(r["mode"])
        for q in ("p50", "p95", "p99"):
            add(f"in process, {r['mode']}, recall {q} (ms)", base and base[f"{q}_ms"], r[f"{q}_ms"])
    base_turn = single_rows.get("live")
    for r in inproc.get("recall", []):
        if r["mode"] == TURN_MODE and base_turn:
            add(f"in process, {TURN_MODE} / one project live, p50 (ms)", base_turn["p50_ms"], r["p50_ms"])
    split = {r["size"]: r for r in doc.get("split", [])}.get(size, {})
    if inproc:
        add("in process, cold open of one project (s)", split.get("open_s"), inproc["open_one_s"])
        add("in process, cold open of one project, CPU (s)", split.get("open_cpu_s"), inproc["open_one_cpu_s"])
        add(f"in process, cold open of all {len(many['projects'])} (s) / one project", split.get("open_s"),
            inproc["open_all_s"])
    ray_single = {r["size"]: r for r in doc["recall"].get("ray", [])}.get(size)
    ray = many.get("ray") or {}
    for r in ray.get("recall", []):
        if ray_single is None:
            break
        for q in ("p50", "p95", "p99"):
            add(f"Ray actors, {r['mode']}, recall {q} (ms)", ray_single[f"{q}_ms"], r[f"{q}_ms"])
    mem = {r["size"]: r for r in doc.get("memory", [])}.get(size, {})
    if ray:
        add("Ray, engine open of one project (s)", (ray_single or {}).get("engine_open_s"), ray["open_one_s"])
        add(f"Ray, engine open of all {len(ray['opened'])} (s) / one project", (ray_single or {}).get("engine_open_s"),
            ray["open_all_s"])
        add("Ray, engine actor RSS of project 0 (MiB)", mem.get("engine_rss_mb"),
            ray["engine_rss_mb"].get(many["projects"][0]))
        add("Ray, index actor RSS (MiB)", mem.get("index_rss_mb"), ray["index_rss_mb"])
        add("Ray, global engine actor RSS (MiB)", mem.get("global_engine_rss_mb"), ray["global_engine_rss_mb"])
    disk = many.get("disk") or {}
    add("memory.sqlite bytes per memory", split.get("disk_bytes_per_memory"), disk.get("disk_bytes_per_memory"))
    add("snapshot bytes per memory", split.get("snapshot_bytes_per_memory"), disk.get("snapshot_bytes_per_memory"))
    return out


def measure_inprocess(root: Path, settings: Any, src: Path, names: Sequence[str], qs: Sequence[str]) -> dict[str, Any]:
    """The in-process part, with queries for the in-turn recalls that project 0 never saw."""
    return inprocess_part(root, settings, src, names, qs, synth.queries(len(qs), seed=2))


def measure_ray(root: Path, settings: Any, src: Path, names: Sequence[str], qs: Sequence[str]) -> dict[str, Any]:
    """The Ray part, with queries for the in-turn recalls that project 0 never saw."""
    return ray_part(root, settings, src, names, qs, synth.queries(len(qs), seed=2))


# ---- report -----------------------------------------------------------------------------------
def _num(x: Any, nd: int = 2) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float):
        return f"{x:,.{nd}f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def render_section(many: Mapping[str, Any], png_name: str | None) -> list[str]:
    """The markdown section of the N-project part."""
    n, size = len(many["projects"]), many["size"]
    lines = [f"## {n} projects of {size:,} memories in one data directory ({n * size:,} memories)", "",
             f"Project 0 (`{many['projects'][0]}`) is the {size:,}-memory store of the single-project rows above; "
             f"the {n - 1} others are drawn by the same generator with seeds 1-{n - 1} (other texts and ids). All "
             "projects sit in one data directory, opened from a fresh copy by each path. Recall of project 0 is "
             "timed as in the single-project rows, with every other project's engine open beside it; `in turn` "
             "sends query i to project i mod N (queries of another seed). Ratios are to the single-project row of "
             "the same size from this run.", ""]
    if png_name:
        lines += [f"![{n} projects]({png_name})", ""]
    lines += ["| project | memories | built in (s) | memories/s | load average at the end |",
              "| --- | --- | --- | --- | --- |"]
    for r in many["build"]:
        note = f" ({r['note']})" if r.get("note") else " (kept store of an earlier run, reused)" if r.get("reused") else ""
        lines.append(f"| {r['project']} | {r['size']:,} | {_num(r.get('seconds'))} | {_num(r.get('memories_per_s'), 1)} "
                     f"| {r.get('loadavg') or ''}{note} |")
    d = many["disk"]
    lines += ["", f"Disk: the data directory holds {_num(d['data_dir_mib'], 1)} MiB for {d['memories']:,} memories; "
              f"memory.sqlite (with its WAL) {d['disk_bytes_per_memory']:,} bytes per memory, the BM25 and FAISS "
              f"snapshots {d['snapshot_bytes_per_memory']:,} bytes per memory.", ""]
    inproc, ray = many.get("inprocess"), many.get("ray")
    lines += ["| path | open of project 0 (s) | each other project (s, min / median / max) | all (s) | "
              "resident memory (MiB) |", "| --- | --- | --- | --- | --- |"]
    for label, part in (("in process (one Runtime, every engine in this process)", inproc),
                        ("Ray actors (engine open, after the graph started)", ray)):
        if not part:
            continue
        rss = (f"{_num(part['rss_mb'], 1)} (this process; {_num(part['rss_before_mb'], 1)} before)" if label.startswith("in process")
               else f"{_num(part['actors_rss_mb'], 1)} (engine, index and global engine actors)")
        others = sorted(part["open_each_s"][1:])
        spread = (f"{others[0]:.2f} / {others[len(others) // 2]:.2f} / {others[-1]:.2f}" if others else "n/a")
        lines.append(f"| {label} | {part['open_one_s']:.2f} | {spread} | {part['open_all_s']:.2f} | {rss} |")
    lines.append("")
    if ray:
        lines += [f"On Ray the graph (index, global engine, model workers) answered after {ray['graph_s']:.2f} s and "
                  f"every opened engine was serving (HNSW included) {ray['ready_s']:.2f} s after the new Runtime; "
                  f"engines opened: {len(ray['opened'])} of {n}"
                  + (f" (not opened, under {MIN_FREE_GIB} GiB available: {', '.join(ray['skipped_for_memory'])})"
                     if ray["skipped_for_memory"] else "")
                  + f"; {_num(ray['available_gib_after'])} GiB of memory available with all of them open.", "",
                  "| actor | RSS (MiB) |", "| --- | --- |"]
        lines += [f"| engine, {name} | {_num(v, 1)} |" for name, v in ray["engine_rss_mb"].items()]
        lines += [f"| index (vectors of every project) | {_num(ray['index_rss_mb'], 1)} |",
                  f"| global engine | {_num(ray['global_engine_rss_mb'], 1)} |",
                  f"| all of them | {_num(ray['actors_rss_mb'], 1)} |", ""]
    lines += [f"Recall latency with {n} projects open (warm, ms):", "",
              "| path | project | n | p50 | p95 | p99 | mean |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for label, part in (("in process", inproc), ("Ray actors", ray)):
        for r in (part or {}).get("recall", []):
            lines.append(f"| {label}, {r['mode']} | {r['project']} | {r['n']} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} "
                         f"| {r['p99_ms']:.2f} | {r['mean_ms']:.2f} |")
    slow = [f"{label}: " + ", ".join(f"{x['project']} (query {x['query']}) {x['ms']} ms, {x['engine_ms']} in the engine"
                                     for x in r["slowest"])
            for label, part in (("in process", inproc), ("Ray actors", ray))
            for r in (part or {}).get("recall", []) if r.get("slowest")]
    if slow:
        lines += ["", "Slowest of the recalls in turn (the engine's own time is the `latency_ms` of its answer): "
                  + "; ".join(slow) + "."]
    lines += ["", f"Beside one project of {size:,} (same run):", "",
              f"| measure | 1 project | {n} projects | ratio |", "| --- | --- | --- | --- |"]
    lines += [f"| {c['measure']} | {_num(c['single'])} | {_num(c['many'])} | {_num(c['ratio'])} |"
              for c in many.get("compare", [])]
    lines.append("")
    return lines


def plot(many: Mapping[str, Any], path: Path) -> Path:
    """Recall percentiles beside one project, actor RSS, and open time per project."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(many["projects"])
    fig, (ax, ax2, ax3) = plt.subplots(1, 3, figsize=(17, 4.6))
    rows = [c for c in many.get("compare", []) if "recall p" in c["measure"]]
    if rows:
        labels = [c["measure"].replace(", recall", "\n").replace(" (ms)", "") for c in rows]
        xs = range(len(rows))
        ax.bar([x - 0.2 for x in xs], [c["single"] for c in rows], width=0.4, label="1 project")
        ax.bar([x + 0.2 for x in xs], [c["many"] for c in rows], width=0.4, label=f"{n} projects open")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, rotation=70, fontsize=6)
        ax.set_yscale("log")
        ax.set_ylabel("ms (log scale)")
        ax.legend(fontsize=8)
    ax.set_title(f"Recall in project 0: one project vs {n} in the data directory", fontsize=10)
    ray = many.get("ray")
    if ray:
        names = list(ray["engine_rss_mb"])
        vals = [ray["engine_rss_mb"][k] or 0 for k in names] + [ray["index_rss_mb"] or 0,
                                                              ray["global_engine_rss_mb"] or 0]
        ax2.bar([*(k.replace(f"{names[0]}-", "p") if k != names[0] else "p0" for k in names), "index", "global"], vals)
        ax2.set_ylabel("RSS (MiB)")
        ax2.tick_params(axis="x", labelsize=7)
    else:
        ax2.text(0.5, 0.5, "no Ray part in this run", ha="center", va="center", transform=ax2.transAxes)
    ax2.set_title("Actor resident memory, every project open (Ray)", fontsize=10)
    for label, part, style in (("in process", many.get("inprocess"), "o-"), ("Ray engine actor", ray, "s--")):
        if part:
            ax3.plot(range(len(part["open_each_s"])), part["open_each_s"], style, label=label)
    ax3.set_xlabel("project (opened in this order; 0 from a new Runtime in process)")
    ax3.set_ylabel("cold open (s)")
    ax3.set_ylim(bottom=0)
    ax3.legend(fontsize=8)
    ax3.set_title("Cold open of each project", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
