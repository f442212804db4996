"""``dynmem bench perf``: recall latency by store size, observe acknowledgement latency, replay
throughput and memory use (DESIGN §10), measured in one serial run on this machine.

Phases, in this order so that no two measurements share the CPU:

1. build: synthetic memories (``eval.perf.synth``) are imported into one growing store with
   ``Pipeline.import_memories`` (each servable memory is embedded by the bundled MiniLM, the
   same work a real store did once); after each size the store is copied aside, so every
   later measurement opens a pristine copy of exactly that size;
2. in process (``Runtime(use_ray=False)``): warm recall latency over ``--queries`` distinct
   queries, live (the agent's path: shadow credit is committed) and passive (read only), the
   time split of a passive recall (query embedding, FAISS, lexical, the rest), and observe
   acknowledgement latency;
3. HTTP (smallest size): a real ``dynmem serve --detach`` sidecar, live recalls and observes
   over one kept-alive HTTP connection, then ``dynmem stop`` and a check that none of its processes is left;
4. Ray (``Runtime(use_ray=True)``): warm live recall latency (driver -> engine actor -> index
   actor), the resident memory of the engine and index actor processes at each size (and of
   an empty store), observe acknowledgement latency;
5. replay (Ray): the bundled example history and a longer one made by repeating it with new
   request ids, sessions and shifted timestamps, end to end (observe + drain);
6. opt-in, ``--projects N`` (N > 1): one data directory holding N projects of the largest size
   (``eval.perf.projects``), measured in process and on Ray beside the single-project rows.

Latencies are compared as ratios within the run (the machine is shared and noisy).
``--parallel`` is ignored: perf runs serially to keep measurements clean.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from eval.cli import report_dir
from eval.perf.measure import actor_pid, descendants, machine_facts, rss_mb, summarize_ms, time_each, wait_gone

REPO = Path(__file__).resolve().parents[2]
PROJECT = "perf-store"
OBSERVE_PROJECT = "perf-observe"
PARTS = ("inprocess", "http", "ray", "replay", "import")
DEFAULT_SIZES = "1000,10000"
WARMUP = 20
IMPORT_CHUNK = 2000


def say(msg: str) -> None:
    print(f"[perf {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(x) for x in str(text).split(",") if x.strip()})
    except ValueError as exc:
        raise SystemExit(f"--sizes must be comma-separated integers, got {text!r}") from exc
    if not sizes or sizes[0] < 1:
        raise SystemExit("--sizes needs at least one size >= 1")
    return sizes


def _parts(text: str | None) -> list[str]:
    parts = [p.strip() for p in (text or ",".join(PARTS)).split(",") if p.strip()]
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise SystemExit(f"unknown --parts {unknown}; choose from {', '.join(PARTS)}")
    return [p for p in PARTS if p in parts]


def _projects(args: argparse.Namespace, parts: Sequence[str]) -> int:
    """``--projects N``: 1 (the default) measures one project; N > 1 adds the N-project data directory."""
    value = getattr(args, "projects", None)
    n = 1 if value is None else int(value)
    if n < 1:
        raise SystemExit(f"--projects must be >= 1, got {n}")
    if n > 1 and not {"inprocess", "ray"} & set(parts):
        raise SystemExit("--projects N > 1 measures the inprocess and ray parts; choose at least one in --parts")
    return n


def _command(args: argparse.Namespace) -> str:
    parts = [".venv/bin/dynmem", "bench", "perf", "--sizes", ",".join(map(str, _sizes(getattr(args, "sizes", DEFAULT_SIZES))))]
    if getattr(args, "queries", 200) != 200:
        parts += ["--queries", str(args.queries)]
    if getattr(args, "replay_turns", 2000) != 2000:
        parts += ["--replay-turns", str(args.replay_turns)]
    if getattr(args, "parts", None) and _parts(args.parts) != list(PARTS):
        parts += ["--parts", ",".join(_parts(args.parts))]
    if getattr(args, "projects", None) not in (None, 1):
        parts += ["--projects", str(args.projects)]
    for flag, value in (("--config", args.config), ("--out", args.out), ("--data-dir", args.data_dir),
                        ("--stores", getattr(args, "stores", None))):
        if value:
            parts += [flag, str(value)]
    return shlex.join(parts)


def chunks(seq: Sequence[Any], n: int) -> list[Sequence[Any]]:
    return [seq[i:i + n] for i in range(0, len(seq), n)]


def copy_store(src: Path, dst: Path) -> Path:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("sidecar.*", "cache"))
    return dst


def _observe_turns(n: int, tag: str) -> list[Any]:
    """``n`` realistic single turns (from the example history) with fresh request ids."""
    from actors.replay import DEMO_HISTORY
    from engine.history import parse_history

    turns, _ = parse_history(DEMO_HISTORY.read_text(encoding="utf-8").splitlines())
    out = []
    for i in range(n):
        t = turns[i % len(turns)]
        out.append(t.model_copy(update={"project": OBSERVE_PROJECT, "request_id": f"{tag}-{i}", "ts_ms": None,
                                        "session": f"{tag}-s{i // 50}"}))
    return out


def _ratios(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """p50 and p95 of every size over the smallest size of the same series."""
    if not rows:
        return {}
    base = rows[0]
    out: dict[str, float] = {}
    for r in rows[1:]:
        for q in ("p50", "p95"):
            if base[f"{q}_ms"] > 0:
                out[f"{q} {r['size']} / {base['size']}"] = round(r[f"{q}_ms"] / base[f"{q}_ms"], 2)
    return out


# ---- phases ---------------------------------------------------------------------------------
def _manifest(settings: Any) -> dict[str, Any]:
    """What a kept store was built from: reused only when all of it matches."""
    from eval.perf import synth

    return {"project": PROJECT, "templates": len(synth.TEMPLATES), "embedder": settings.embedder.name,
            "first_text": next(synth.memory_texts(1))[0]}


def import_timed(folder: Path, settings: Any, project: str, mems: Sequence[Any], expect_active: int) -> dict[str, Any]:
    """Import ``mems`` into ``project`` of the data directory ``folder`` in process (chunks of ``IMPORT_CHUNK``,
    each embedded by the configured embedder) and time it; fails unless ``expect_active`` memories are active."""
    from actors.launch import Runtime
    from actors.pipeline import Pipeline

    rt = Runtime(folder, settings, use_ray=False)
    try:
        pipe = Pipeline(rt)
        t0 = time.perf_counter()
        for chunk in chunks(mems, IMPORT_CHUNK):
            pipe.import_memories(project, list(chunk))
        dt = time.perf_counter() - t0
        n_live = pipe.stats(project).memories_by_state.get("active", 0)
    finally:
        rt.shutdown()
    if n_live != expect_active:
        raise RuntimeError(f"expected {expect_active} active memories in {project} after import, found {n_live}")
    return {"added": len(mems), "seconds": round(dt, 2), "memories_per_s": round(len(mems) / dt, 1) if dt > 0 else None,
            "loadavg": [round(x, 2) for x in os.getloadavg()]}



def build_stores(root: Path, settings: Any, sizes: Sequence[int],
                 keep: Path | None = None) -> tuple[dict[int, Path], list[dict[str, Any]]]:
    """Grow one store through ``sizes`` and copy it aside at each size.

    With ``keep``, each size is also copied to ``keep/store-SIZE`` with a manifest, and a later
    run reuses it (its build row says so) instead of embedding the same memories again.
    """
    from eval.perf.synth import make_memories

    growing = root / "build"
    snaps: dict[int, Path] = {}
    rows: list[dict[str, Any]] = []
    manifest = _manifest(settings)
    prev = 0
    for size in sizes:
        kept = keep / f"store-{size}" if keep is not None else None
        info = kept / "perf-build.json" if kept is not None else None
        if kept is not None and info is not None and info.exists():
            meta = json.loads(info.read_text(encoding="utf-8"))
            if meta.get("manifest") == manifest:
                snaps[size] = copy_store(kept, root / f"store-{size}")
                copy_store(kept, growing)
                rows.append({**meta["row"], "reused": True})
                say(f"reused the {size}-memory store kept in {kept}")
                prev = size
                continue
        row = {"size": size, **import_timed(growing, settings, PROJECT, make_memories(PROJECT, size, start=prev), size)}
        snaps[size] = copy_store(growing, root / f"store-{size}")
        rows.append(row)
        if kept is not None and info is not None:
            copy_store(growing, kept)
            info.write_text(json.dumps({"manifest": manifest, "row": row}), encoding="utf-8")
        say(f"built {size} memories (+{row['added']} in {row['seconds']:.1f} s)")
        prev = size
    shutil.rmtree(growing, ignore_errors=True)
    return snaps, rows


def time_recall_parts(pipe: Any, engine: Any, index: Any, project: str, shortlist: int, warm: Sequence[str],
                      measured: Sequence[str]) -> dict[str, Any]:
    """Time the parts of an in-process recall in ``project``, one query at a time (after ``warm``, untimed).

    Every part is timed back to back, so that load from elsewhere on a shared machine hits all of
    them alike: embed, FAISS, lexical, passive recall of a new query (its embedding not cached),
    live recall of the same query (embedding cached), passive recall again (cached: everything
    after the query embedding). Returns ``parts`` (name -> ms per measured query),
    ``cpu_after_embed`` (this process's CPU ms for the last recall: on a shared machine it moves
    much less with the load average than wall time does) and ``abstained`` (live recalls that
    abstained).
    """
    from actors.wire import RecallRequest
    from engine.scopes import readable_scopes

    scopes = sorted(readable_scopes(project))
    parts: dict[str, list[float]] = {"embed": [], "faiss": [], "lexical": [], "passive": [], "live": [],
                                     "after_embed": []}
    cpu_after_embed: list[float] = []
    abstained = 0
    for i, q in enumerate([*warm, *measured]):
        t = [time.perf_counter()]
        vec = index.embedder.embed([q])[0]
        t.append(time.perf_counter())
        index.search(vec, scopes, shortlist)
        t.append(time.perf_counter())
        engine.table.lexical.search(q, shortlist)
        t.append(time.perf_counter())
        pipe.recall(RecallRequest(project=project, query=q, passive=True))
        t.append(time.perf_counter())
        res = pipe.recall(RecallRequest(project=project, query=q))
        c = time.process_time()
        t.append(time.perf_counter())
        pipe.recall(RecallRequest(project=project, query=q, passive=True))
        t.append(time.perf_counter())
        c = time.process_time() - c
        if i < len(warm):
            continue
        cpu_after_embed.append(c * 1000.0)
        abstained += res.abstained
        for name, a, b in zip(parts, t, t[1:], strict=False):
            parts[name].append((b - a) * 1000.0)
    return {"parts": parts, "cpu_after_embed": cpu_after_embed, "abstained": abstained}


def inprocess_phase(root: Path, settings: Any, snaps: Mapping[int, Path], qs: Sequence[str],
                    n_observe: int) -> dict[str, Any]:
    """Warm recall latency (live and passive), the time split of a passive recall, observe acks."""
    from actors.launch import Runtime
    from actors.pipeline import Pipeline

    warm, measured = list(qs[:WARMUP]), list(qs[WARMUP:])
    recall_rows: list[dict[str, Any]] = []
    split_rows: list[dict[str, Any]] = []
    for size, snap in snaps.items():
        work = copy_store(snap, root / f"inproc-{size}")
        disk_per_memory = round(sum(f.stat().st_size for f in work.rglob("memory.sqlite*")) / size)
        snapshot_per_memory = round(sum(f.stat().st_size for pattern in ("lexical.npz", "vectors.faiss*")
                                        for f in work.rglob(pattern)) / size)
        t0, c0 = time.perf_counter(), time.process_time()
        rt = Runtime(work, settings, use_ray=False)
        try:
            pipe = Pipeline(rt)
            engine = rt.engine(PROJECT).target
            open_s, open_cpu_s = time.perf_counter() - t0, time.process_time() - c0
            index = rt.index.target
            # Above 50k vectors the store opens on exact search and builds HNSW on a thread; time
            # recalls on the index a running service settles on, and report how long that took.
            index.wait_for_builds()
            ready_s = time.perf_counter() - t0
            timed = time_recall_parts(pipe, engine, index, PROJECT, settings.retrieval.shortlist, warm, measured)
            parts, cpu_after_embed, abstained_live = timed["parts"], timed["cpu_after_embed"], timed["abstained"]
            lat_live, lat_passive = parts["live"], parts["passive"]
            rest = [p - e - f - lx for p, e, f, lx in zip(parts["passive"], parts["embed"], parts["faiss"],
                                                          parts["lexical"], strict=True)]
            indexed = index.size(f"project:{PROJECT}")
        finally:
            rt.shutdown()
            shutil.rmtree(work, ignore_errors=True)
        for mode, lat in (("live", lat_live), ("passive", lat_passive)):
            recall_rows.append({"size": size, "mode": mode, **summarize_ms(lat)})
        recall_rows.append({"size": size, "mode": "passive, cached query vector", **summarize_ms(parts["after_embed"])})
        p = {name: summarize_ms(parts[name])["p50_ms"] for name in ("embed", "faiss", "lexical", "after_embed")}
        total = summarize_ms(lat_passive)["p50_ms"]
        split_rows.append({"size": size, "indexed": indexed, "open_s": round(open_s, 2), "ready_s": round(ready_s, 2),
                           "open_cpu_s": round(open_cpu_s, 2),
                           "after_embed_cpu_p50_ms": summarize_ms(cpu_after_embed)["p50_ms"],
                           "passive_p50_ms": total,
                           "embed_p50_ms": p["embed"], "faiss_p50_ms": p["faiss"], "lexical_p50_ms": p["lexical"],
                           "rest_p50_ms": summarize_ms(rest)["p50_ms"], "after_embed_p50_ms": p["after_embed"],
                           "live_abstained": abstained_live, "disk_bytes_per_memory": disk_per_memory,
                           "snapshot_bytes_per_memory": snapshot_per_memory})
        say(f"in process, {size}: live p50 {summarize_ms(lat_live)['p50_ms']:.1f} ms, "
             f"passive p50 {total:.1f} ms (embed {p['embed']:.1f}, faiss {p['faiss']:.2f}, lexical {p['lexical']:.2f})")
    obs_dir = root / "observe-inproc"
    rt = Runtime(obs_dir, settings, use_ray=False)
    try:
        pipe = Pipeline(rt)
        turns = _observe_turns(n_observe + WARMUP, "inproc")
        lat_obs = time_each(lambda t: pipe.observe([t]), turns[WARMUP:], turns[:WARMUP])
    finally:
        rt.shutdown()
        shutil.rmtree(obs_dir, ignore_errors=True)
    say(f"in process observe ack p50 {summarize_ms(lat_obs)['p50_ms']:.1f} ms")
    return {"recall": recall_rows, "split": split_rows, "observe": summarize_ms(lat_obs)}


def import_phase(root: Path, snap: Path, size: int, config: str | None) -> dict[str, Any]:
    """`dynmem export` of a built store (each memory with its vector) and `dynmem import` of that file
    into an empty data directory, as the user runs them (subprocesses). The import ends when the
    command does: memories and vectors committed, and the snapshots of the new store written."""
    src = copy_store(snap, root / "export-src")
    out = root / "export.jsonl"
    dst = root / "import-dst"
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    extra = ["--config", config] if config else []
    t0 = time.perf_counter()
    exp = subprocess.run([*_dynmem_cmd(), "export", str(out), "--project", PROJECT, "--data-dir", str(src), *extra,
                          "--json"], capture_output=True, text=True, timeout=3600)
    export_s = time.perf_counter() - t0
    if exp.returncode != 0:
        raise RuntimeError(f"dynmem export failed: {exp.stderr[-2000:]}")
    t0 = time.perf_counter()
    imp = subprocess.run([*_dynmem_cmd(), "import", str(out), "--project", PROJECT, "--data-dir", str(dst), *extra,
                          "--json"], capture_output=True, text=True, timeout=3600)
    import_s = time.perf_counter() - t0
    if imp.returncode != 0:
        raise RuntimeError(f"dynmem import failed: {imp.stderr[-2000:]}")
    done = json.loads(imp.stdout.strip().splitlines()[-1])
    row = {"size": size, "export_s": round(export_s, 1), "import_s": round(import_s, 1),
           "imported": done["imported"], "reused_vectors": done["reused_vectors"],
           "memories_per_s": round(done["imported"] / import_s, 1) if import_s > 0 else None,
           "file_mb": round(out.stat().st_size / 2**20, 1), "loadavg": [round(x, 2) for x in os.getloadavg()]}
    shutil.rmtree(src, ignore_errors=True)
    shutil.rmtree(dst, ignore_errors=True)
    out.unlink(missing_ok=True)
    say(f"import of {size}: export {export_s:.1f} s, import {import_s:.1f} s ({row['reused_vectors']} vectors reused)")
    return row


def _dynmem_cmd() -> list[str]:
    script = Path(sys.executable).parent / "dynmem"
    return [str(script)] if script.exists() else [sys.executable, "-m", "bridge.cli"]


def _wait_until_idle(root_pid: int, name: str, poke: Any = None, timeout_s: float = 300.0) -> float:
    """Wait until the sidecar's ``name`` actor process is idle (under 0.1 s of CPU in each of two 2 s windows).

    A project of more than 50,000 memories opens on exact search and switches to HNSW on a thread
    of the index actor; the sidecar has no call that says when, so its CPU time is watched.
    ``poke`` (a recall) is called before each window: a finished build is swapped in, and a
    follow-up build started, only when the index actor is next called. Returns the seconds waited.
    """
    import psutil

    t0 = time.perf_counter()
    quiet = 0
    while time.perf_counter() - t0 < timeout_s and quiet < 2:
        procs = []
        for p in descendants(root_pid):
            try:
                if name in " ".join(psutil.Process(p).cmdline()):
                    procs.append(psutil.Process(p))
            except psutil.Error:
                continue
        if not procs:
            break
        if poke is not None:
            poke()
        try:
            before = sum(sum(p.cpu_times()[:2]) for p in procs)
            time.sleep(2.0)
            used = sum(sum(p.cpu_times()[:2]) for p in procs) - before
        except psutil.Error:
            continue
        quiet = quiet + 1 if used < 0.1 else 0  # a build thread gets more than this even on a loaded machine
    return round(time.perf_counter() - t0, 1)


class _KeepAlive:
    """POSTs over one persistent HTTP/1.1 connection, as the opencode plugin's ``fetch`` sends them
    (Node's fetch keeps connections alive); a connection the sidecar closed is opened again."""

    def __init__(self, url: str, token: str) -> None:
        import http.client
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port
        self._conn = self._connect()
        self._headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def _connect(self) -> Any:
        import http.client

        return http.client.HTTPConnection(self._host, self._port, timeout=60)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        import http.client

        data = json.dumps(body).encode()
        for attempt in (0, 1):
            try:
                self._conn.request("POST", path, body=data, headers=self._headers)
                reply = self._conn.getresponse()
                payload = reply.read()
            except (http.client.HTTPException, ConnectionError):
                self._conn.close()
                self._conn = self._connect()
                if attempt:
                    raise
                continue
            if reply.status != 200:
                raise RuntimeError(f"POST {path}: HTTP {reply.status}: {payload[:300]!r}")
            return json.loads(payload)
        raise AssertionError("unreachable")


def http_phase(root: Path, snap: Path, size: int, config: str | None, qs: Sequence[str],
               n_observe: int) -> dict[str, Any]:
    """Live recall and observe latency through a real detached sidecar, then stop it and look for orphans."""
    import psutil

    work = copy_store(snap, root / "http")
    extra = ["--config", config] if config else []
    t0 = time.perf_counter()
    started = subprocess.run([*_dynmem_cmd(), "serve", "--detach", "--data-dir", str(work), *extra, "--json"],
                             capture_output=True, text=True, timeout=180)
    start_s = time.perf_counter() - t0
    info_path = work / "sidecar.json"
    if started.returncode != 0 or not info_path.exists():
        raise RuntimeError(f"dynmem serve --detach failed ({started.returncode}): {started.stderr[-2000:]}")
    info = json.loads(info_path.read_text(encoding="utf-8"))
    pid = int(info["pid"])
    tree = [pid, *descendants(pid)]
    result: dict[str, Any] = {"size": size, "start_s": round(start_s, 2)}
    try:
        url = str(info["url"]).rstrip("/")
        token = Path(info["token_file"]).read_text(encoding="utf-8").strip()

        post = _KeepAlive(url, token).post

        warm, measured = list(qs[:WARMUP]), list(qs[WARMUP:])
        post("/v1/recall", {"project": PROJECT, "query": warm[0]})  # opens the project's engine
        result["index_settle_s"] = _wait_until_idle(
            pid, "IndexService", poke=lambda: post("/v1/recall", {"project": PROJECT, "query": warm[0], "passive": True}))
        lat = time_each(lambda q: post("/v1/recall", {"project": PROJECT, "query": q}), measured, warm)
        result.update(summarize_ms(lat))
        turns = _observe_turns(n_observe + WARMUP, "http")

        def observe(t: Any) -> None:
            post("/v1/observe", {"project": t.project, "session": t.session, "user": t.user,
                                 "assistant": t.assistant, "request_id": t.request_id})

        result["observe"] = summarize_ms(time_each(observe, turns[WARMUP:], turns[:WARMUP]))
        tree = sorted(set(tree) | set(descendants(pid)))
        result["sidecar_processes"] = len(tree)
        result["sidecar_rss_mb"] = round(sum(rss_mb(p) or 0.0 for p in tree), 1)
    finally:
        t1 = time.perf_counter()
        stop = subprocess.run([*_dynmem_cmd(), "stop", "--data-dir", str(work)], capture_output=True, text=True,
                              timeout=120)
        left = wait_gone(tree, timeout_s=30)
        result["stop_s"] = round(time.perf_counter() - t1, 2)
        result["stop_rc"] = stop.returncode
        result["orphans_after_stop"] = len(left)
        for p in left:  # processes this run started: end them one by one, by pid
            try:
                psutil.Process(p).kill()
            except psutil.NoSuchProcess:
                pass
        shutil.rmtree(work, ignore_errors=True)
    say(f"http, {size}: live recall p50 {result.get('p50_ms', 0):.1f} ms, observe p50 "
         f"{result.get('observe', {}).get('p50_ms', 0):.1f} ms, orphans after stop: {result['orphans_after_stop']}")
    return result


def _actor_rss(rt: Any) -> dict[str, float | None]:
    return {"engine_rss_mb": rss_mb(actor_pid(rt.engine(PROJECT).target)),
            "index_rss_mb": rss_mb(actor_pid(rt.index.target)),
            "global_engine_rss_mb": rss_mb(actor_pid(rt.global_engine.target))}


def ray_phase(root: Path, settings: Any, snaps: Mapping[int, Path], qs: Sequence[str], n_observe: int) -> dict[str, Any]:
    """Warm live recall through the actors, actor RSS by size, observe acks (Ray must be initialised)."""
    import numpy as np

    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from actors.wire import RecallRequest

    warm, measured = list(qs[:WARMUP]), list(qs[WARMUP:])
    rows: list[dict[str, Any]] = []
    memory: list[dict[str, Any]] = []
    empty = root / "ray-empty"
    rt = Runtime(empty, settings, use_ray=True)
    try:
        pipe = Pipeline(rt)
        rt.engine(PROJECT).ping()
        rt.index.embed(["warm up the embedder"])
        pipe.recall(RecallRequest(project=PROJECT, query="which port does the api listen on?"))
        memory.append({"size": 0, **_actor_rss(rt)})
    finally:
        rt.shutdown()
        shutil.rmtree(empty, ignore_errors=True)
    for size, snap in snaps.items():
        work = copy_store(snap, root / f"ray-{size}")
        t0 = time.perf_counter()
        rt = Runtime(work, settings, use_ray=True)
        try:
            pipe = Pipeline(rt)
            # The graph first (index, global engine, model workers: about seven processes starting at
            # once), then the project's engine alone: the cold open of the store itself.
            rt.index.ping()
            rt.global_engine.ping()
            for worker in (*rt.extractors, rt.adjudicator, rt.investigator):
                worker.ping()
            t1 = time.perf_counter()
            rt.engine(PROJECT).ping()
            open_s = time.perf_counter() - t0
            engine_open_s = time.perf_counter() - t1
            rt.index.wait_for_builds()  # HNSW above 50k vectors, built on the index actor's thread
            ready_s = time.perf_counter() - t0
            inner: list[float] = []

            def live(q: str) -> None:
                inner.append(pipe.recall(RecallRequest(project=PROJECT, query=q)).latency_ms)

            lat = time_each(live, measured, warm)
            inner = inner[len(warm):]
            memory.append({"size": size, **_actor_rss(rt)})
        finally:
            rt.shutdown()
            shutil.rmtree(work, ignore_errors=True)
        row = {"size": size, "mode": "live", "open_s": round(open_s, 2), "engine_open_s": round(engine_open_s, 2),
               "ready_s": round(ready_s, 2), **summarize_ms(lat),
               "engine_internal_p50_ms": round(float(np.percentile(inner, 50)), 1) if inner else None}  # whole ms
        rows.append(row)
        say(f"ray, {size}: live p50 {row['p50_ms']:.1f} ms (engine-internal p50 {row['engine_internal_p50_ms']} ms), "
             f"engine {memory[-1]['engine_rss_mb']} MiB, index {memory[-1]['index_rss_mb']} MiB")
    obs_dir = root / "observe-ray"
    rt = Runtime(obs_dir, settings, use_ray=True)
    try:
        pipe = Pipeline(rt)
        turns = _observe_turns(n_observe + WARMUP, "ray")
        lat_obs = time_each(lambda t: pipe.observe([t]), turns[WARMUP:], turns[:WARMUP])
    finally:
        rt.shutdown()
        shutil.rmtree(obs_dir, ignore_errors=True)
    say(f"ray observe ack p50 {summarize_ms(lat_obs)['p50_ms']:.1f} ms")
    return {"recall": rows, "memory": memory, "observe": summarize_ms(lat_obs)}


def replay_phase(root: Path, settings: Any, replay_turns: int) -> list[dict[str, Any]]:
    """Replay the example history and a longer repeated one on Ray, end to end."""
    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from actors.replay import DEMO_HISTORY, replay_file
    from eval.perf.synth import repeated_history

    files: list[tuple[str, Path]] = [("example (shop-api-history.jsonl)", DEMO_HISTORY)]
    if replay_turns > 0:
        long = root / f"history-{replay_turns}.jsonl"
        repeated_history(DEMO_HISTORY, long, replay_turns)
        files.append((f"example repeated to {replay_turns} turns", long))
    rows = []
    for i, (label, path) in enumerate(files):
        folder = root / f"replay-{i}"
        rt = Runtime(folder, settings, use_ray=True)
        try:
            pipe = Pipeline(rt)
            rt.index.embed(["warm up the embedder"])
            rep = replay_file(pipe, path)
        except Exception as exc:  # keep the other measurements; the failure is shown in the report
            rows.append({"history": label, "turns": None, "new_turns": None, "seconds": None, "turns_per_s": None,
                         "memories": None, "dead_jobs": None, "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
            say(f"replay {label} failed: {rows[-1]['error']}")
            continue
        finally:
            rt.shutdown()
            shutil.rmtree(folder, ignore_errors=True)
        mems = sum(n for states in rep.projects.values() for n in states.values())
        rows.append({"history": label, "turns": rep.turns, "new_turns": rep.new_turns, "seconds": rep.seconds,
                     "turns_per_s": round(rep.turns / rep.seconds, 1) if rep.seconds > 0 else None,
                     "memories": mems, "dead_jobs": rep.dead_jobs})
        say(f"replay {label}: {rep.turns} turns in {rep.seconds:.1f} s ({rows[-1]['turns_per_s']} turns/s)")
    return rows


# ---- report -----------------------------------------------------------------------------------
def _fmt(x: Any, nd: int = 1) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def _embedder_words(name: Any) -> str:
    if name in (None, "minilm", "minilm-l6-v2"):
        return "the bundled MiniLM, as a real store was once"
    if name == "hash":
        return ("the `hash` embedder (`DYNMEM_EMBEDDER=hash`): the real import, store and index path with a cheap "
                "embedder, so that a 100k store can be built on a loaded machine; query embedding times here are "
                "NOT MiniLM's")
    return f"the `{name}` embedder"


def render(doc: Mapping[str, Any], command: str, png_name: str, projects_png: str | None = None) -> str:
    m = doc["machine"]
    lines = [
        "# Performance: recall latency by store size, observe acknowledgement, replay throughput, memory",
        "",
        "Reproduce (from the repository root):",
        "",
        "```",
        command,
        "```",
        "",
        f"Machine: {m['nproc']} cores, {m['cpu']} ({m.get('simd', 'unknown')} vector unit), {m.get('memory_gib', '?')} GiB, {m['platform']}; Python {m['python']}, "
        f"numpy {m['numpy']}, faiss {m['faiss']}, ray {m.get('ray', 'n/a')}. Load average at start "
        f"{m.get('loadavg_start')}, at end {m.get('loadavg_end')} (the machine is shared: compare ratios within this "
        f"run, not absolute numbers across runs). Wall time {doc['wall_seconds']:.0f} s. Runs serially "
        "(`--parallel` is ignored so that no two measurements share the CPU).",
        "",
        f"Stores: synthetic developer facts from {doc['store']['templates']} sentence templates filled with services, "
        "components, tools, paths and numbers (`eval/perf/synth.py`), all active, imported with "
        f"`Pipeline.import_memories` (every memory is embedded by {_embedder_words(doc.get('embedder'))}). Each "
        "size is measured on a fresh copy of the store, opened cold, then warmed with "
        f"{doc['store']['warmup']} queries; {doc['store']['queries']} distinct queries are timed (developer questions "
        "about the same services, one in ten unrelated). Live recall is the agent's path (shadow credit committed to "
        "memory.sqlite); passive recall changes nothing. In process, each query is recalled passively first (a new "
        "query: its vector is computed), then live and passively again (a repeated query: its vector comes from the "
        "index actor's LRU cache); through Ray and HTTP every timed query is new to the actors.",
        "",
        f"![latency by size]({png_name})",
        "",
    ]
    if doc.get("build"):
        lines += [f"## Building the stores (import + embedding by {doc.get('embedder') or 'minilm'})", "",
                  "| size | added | seconds | memories/s | load average at the end |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {r['size']:,} | {r['added']:,} | {r['seconds']} | {_fmt(r['memories_per_s'])} | "
                  f"{r.get('loadavg', 'n/a')}{' (kept store of an earlier run, reused)' if r.get('reused') else ''} |"
                  for r in doc["build"]]
        lines.append("")
    if doc.get("import"):
        r = doc["import"]
        lines += ["## Export and import of the largest store (`dynmem export` / `dynmem import`)", "",
                  "The export carries each memory's vector with the id of its vector space; the import, into an "
                  "empty data directory with the same embedder, reuses them (no forward pass) and ends when the "
                  "command returns (committed, HNSW built, snapshots written).", "",
                  "| memories | export (s) | export file (MiB) | import (s) | memories/s | vectors reused | "
                  "load average at the end |", "| --- | --- | --- | --- | --- | --- | --- |",
                  f"| {r['imported']:,} | {r['export_s']} | {r['file_mb']} | {r['import_s']} | "
                  f"{_fmt(r['memories_per_s'])} | {r['reused_vectors']:,} | {r['loadavg']} |", ""]
    rec = doc["recall"]
    if rec:
        lines += ["## Recall latency (warm, ms)", "", "| path | size | n | p50 | p95 | p99 | mean |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for path in ("inprocess", "ray", "http"):
            for r in rec.get(path, []):
                label = {"inprocess": "in process", "ray": "Ray actors", "http": "HTTP sidecar"}[path]
                lines.append(f"| {label}, {r['mode']} | {r['size']:,} | {r['n']} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} "
                             f"| {r['p99_ms']:.2f} | {r['mean_ms']:.2f} |")
        lines += ["", "Ratios within this run (same path, size over smallest size):", ""]
        for name, ratios in doc["ratios"].items():
            if ratios:
                lines.append(f"- {name}: " + ", ".join(f"{k} = {v}" for k, v in ratios.items()))
        lines.append("")
    if doc.get("split"):
        lines += ["## Where a passive in-process recall spends its time (p50, ms)", "",
                  "For each query the parts are timed back to back with the passive recall (so load from elsewhere "
                  "hits them alike); `rest` is the p50 over queries of the recall minus its three parts (candidate "
                  "assembly, scoring, gate, suppression, rendering). `open` is the cold open of the copied store "
                  "(load memories and vectors, fill FAISS and BM25).", "",
                  "`after embedding` is a passive recall of a query whose vector is cached (the LRU of the index "
                  "actor): FAISS, lexical and the rest. `disk` is memory.sqlite (with its WAL) per memory; "
                  "`snapshots` are the BM25 and FAISS snapshots the last clean close left beside it "
                  "(`lexical.npz`, `vectors.faiss*`), which an open reads instead of rebuilding when they match "
                  "the store's content token. `CPU` columns are this process's CPU time (`time.process_time`) "
                  "for the same open and for the recall after embedding: on a shared machine they move much less "
                  "with the load average than the wall times.", "",
                  "| size | open (s) | open, CPU (s) | HNSW ready (s) | recall p50 | query embedding | FAISS | lexical (BM25) "
                  "| rest | after embedding | after embedding, CPU | disk (bytes/memory) | snapshots (bytes/memory) |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in doc["split"]:
            lines.append(f"| {r['size']:,} | {r['open_s']} | {_fmt(r.get('open_cpu_s'), 2)} | {_fmt(r.get('ready_s'), 2)} | "
                         f"{r['passive_p50_ms']:.2f} | {r['embed_p50_ms']:.2f} | "
                         f"{r['faiss_p50_ms']:.3f} | {r['lexical_p50_ms']:.3f} | {r['rest_p50_ms']:.2f} | "
                         f"{_fmt(r.get('after_embed_p50_ms'), 2)} | {_fmt(r.get('after_embed_cpu_p50_ms'), 2)} | "
                         f"{_fmt(r.get('disk_bytes_per_memory'))} | "
                         f"{_fmt(r.get('snapshot_bytes_per_memory'))} |")
        lines.append("")
    if doc.get("observe"):
        lines += ["## Observe acknowledgement latency (ms)", "",
                  "Time until `observe` of one turn returns: the turn is in log.sqlite (WAL, synchronous=FULL) and "
                  "its extract job is queued; extraction is not part of it.", "",
                  "| path | n | p50 | p95 | p99 |", "| --- | --- | --- | --- | --- |"]
        for path, r in doc["observe"].items():
            lines.append(f"| {path} | {r['n']} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} | {r['p99_ms']:.2f} |")
        lines.append("")
    if doc.get("replay"):
        lines += ["## Replay throughput on Ray (observe + drain, end to end)", "",
                  "| history | turns | seconds | turns/s | memories after | dead jobs |", "| --- | --- | --- | --- | --- | --- |"]
        for r in doc["replay"]:
            if r.get("error"):
                lines.append(f"| {r['history']} | failed: {r['error'].splitlines()[0][:120]} | | | | |")
                continue
            lines.append(f"| {r['history']} | {r['turns']:,} | {r['seconds']:.1f} | {_fmt(r['turns_per_s'])} | "
                         f"{r['memories']} | {r['dead_jobs']} |")
        lines.append("")
    if doc.get("memory"):
        lines += ["## Resident memory of the actor processes (MiB, after the warm recalls)", "",
                  "Size 0 is an empty store (the index actor then holds only the MiniLM weights).", "",
                  "`open` is the time from a new Runtime to the project engine's first answer (memories loaded, "
                  "vectors sent to the index actor); `engine open` is the part after the rest of the graph "
                  "answered (index, global engine and model workers started): the cold open of the project's "
                  "store in its actor. `HNSW ready` adds the background switch to HNSW above 50,000 "
                  "vectors (recalls are served by exact search meanwhile).", "",
                  "| size | engine actor (project) | index actor | global engine actor | open (s) | engine open (s) "
                  "| HNSW ready (s) |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        opened = {r["size"]: r for r in doc["recall"].get("ray", [])}
        for r in doc["memory"]:
            o = opened.get(r["size"], {})
            lines.append(f"| {r['size']:,} | {_fmt(r['engine_rss_mb'])} | {_fmt(r['index_rss_mb'])} | "
                         f"{_fmt(r['global_engine_rss_mb'])} | {_fmt(o.get('open_s'), 2)} | "
                         f"{_fmt(o.get('engine_open_s'), 2)} | {_fmt(o.get('ready_s'), 2)} |")
        lines.append("")
    if doc.get("http"):
        lines += ["## Sidecar", ""]
        for h in doc.get("http_runs") or [doc["http"]]:
            lines += [f"With {h['size']:,} memories: `dynmem serve --detach` answered after {h['start_s']} s; after the "
                      f"first recall its index actor was busy for {h.get('index_settle_s', 'n/a')} s more (HNSW above "
                      "50,000 vectors), and the timed recalls began once it was idle "
                      f"({h.get('sidecar_processes', '?')} processes, {h.get('sidecar_rss_mb', '?')} MiB RSS in all); "
                      f"`dynmem stop` returned {h['stop_rc']} and every process was gone after {h['stop_s']} s; "
                      f"processes left: {h['orphans_after_stop']}.", ""]
        lines += ["Requests go over one kept-alive HTTP/1.1 connection (as the opencode plugin's `fetch` sends them), "
                  "with the bearer token.", ""]
    if doc.get("ray_leftover_processes") is not None:
        lines += [f"Processes left after `ray.shutdown()` of this run's local Ray: {doc['ray_leftover_processes']}.", ""]
    if doc.get("projects"):
        from eval.perf.projects import render_section

        lines += render_section(doc["projects"], projects_png)
    lines += doc.get("notes", [])
    return "\n".join(lines) + "\n"


def plot(doc: Mapping[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax3, ax2) = plt.subplots(1, 3, figsize=(17, 4.6))
    styles = {("inprocess", "live"): "o-", ("inprocess", "passive"): "s--",
              ("inprocess", "passive, cached query vector"): "x:", ("ray", "live"): "^-", ("http", "live"): "D"}
    for (path_name, mode), style in styles.items():
        rows = [r for r in doc["recall"].get(path_name, []) if r["mode"] == mode]
        if not rows:
            continue
        xs = [r["size"] for r in rows]
        label = {"inprocess": "in process", "ray": "Ray actors", "http": "HTTP sidecar"}[path_name] + f", {mode}"
        ax.plot(xs, [r["p50_ms"] for r in rows], style, label=f"{label} p50")
        ax.plot(xs, [r["p95_ms"] for r in rows], style, alpha=0.3, color=ax.lines[-1].get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories in the store")
    ax.set_ylabel("recall latency (ms, log scale; faint: p95)")
    ax.set_title("Warm recall latency by store size", fontsize=10)
    ax.legend(fontsize=7)
    split = doc.get("split") or []
    if split:
        labels = [f"{r['size']:,}" for r in split]
        bottom = [0.0] * len(split)
        for key, name in (("embed_p50_ms", "query embedding"), ("faiss_p50_ms", "FAISS"),
                          ("lexical_p50_ms", "lexical"), ("rest_p50_ms", "rest")):
            vals = [max(0.0, float(r[key])) for r in split]
            ax3.bar(labels, vals, bottom=bottom, label=name)
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        ax3.set_xlabel("memories in the store")
        ax3.set_ylabel("p50 ms")
        ax3.legend(fontsize=8)
    ax3.set_title("Parts of a passive in-process recall (p50)", fontsize=10)
    mem = doc.get("memory") or []
    if mem:
        xs = [max(r["size"], 1) for r in mem]
        for key, label in (("engine_rss_mb", "engine actor"), ("index_rss_mb", "index actor")):
            ax2.plot(xs, [r[key] or 0 for r in mem], "o-", label=label)
        ax2.set_xscale("log")
        ax2.set_xlabel("memories in the store (0 plotted at 1)")
        ax2.set_ylabel("RSS (MiB)")
        ax2.set_ylim(bottom=0)
        ax2.legend(fontsize=8)
    else:
        ax2.text(0.5, 0.5, "no Ray measurements in this run", ha="center", va="center", transform=ax2.transAxes)
    ax2.set_title("Actor process memory by store size", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---- entry point ----------------------------------------------------------------------------
def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    from actors.config import load_settings
    from eval.perf import synth

    settings = load_settings(Path(args.config) if args.config else None)
    sizes = _sizes(getattr(args, "sizes", DEFAULT_SIZES))
    parts = _parts(getattr(args, "parts", None))
    n_q = max(1, int(getattr(args, "queries", 200)))
    n_obs = n_q
    replay_turns = int(getattr(args, "replay_turns", 2000))
    n_projects = _projects(args, parts)
    qs = synth.queries(n_q + WARMUP)
    doc: dict[str, Any] = {
        "machine": machine_facts(), "sizes": sizes, "parts": parts, "embedder": settings.embedder.name,
        "store": {"templates": len(synth.TEMPLATES), "queries": n_q, "warmup": WARMUP, "project": PROJECT},
        "build": [], "recall": {}, "split": [], "observe": {}, "ratios": {}, "replay": [], "memory": [],
        "http": None, "ray_leftover_processes": None, "projects": None, "notes": [],
    }
    if getattr(args, "parallel", 1) and args.parallel > 1:
        doc["notes"].append(f"`--parallel {args.parallel}` was ignored: perf runs serially.")
    keep = Path(args.stores) if getattr(args, "stores", None) else None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    snaps, doc["build"] = (build_stores(root, settings, sizes, keep)
                           if {"inprocess", "http", "ray", "import"} & set(parts) else ({}, []))
    many_dir: Path | None = None
    if n_projects > 1:
        from eval.perf import projects

        names = projects.project_names(n_projects)
        many_dir, many_build = projects.build_data_dir(root, settings, names, sizes[-1], snaps[sizes[-1]], keep)
        doc["projects"] = {"size": sizes[-1], "projects": names, "build": many_build,
                           "disk": projects.disk_facts(many_dir, n_projects * sizes[-1])}
    if "import" in parts:
        doc["import"] = import_phase(root, snaps[sizes[-1]], sizes[-1], args.config)
    if "inprocess" in parts:
        res = inprocess_phase(root, settings, snaps, qs, n_obs)
        doc["recall"]["inprocess"] = res["recall"]
        doc["split"] = res["split"]
        doc["observe"]["in process"] = res["observe"]
        for mode in ("live", "passive", "passive, cached query vector"):
            doc["ratios"][f"in process, {mode}"] = _ratios([r for r in res["recall"] if r["mode"] == mode])
        if many_dir is not None:
            doc["projects"]["inprocess"] = projects.measure_inprocess(root, settings, many_dir, names, qs)
    if "http" in parts:
        # The smallest and the largest store: the sidecar at the size the acceptance names.
        doc["http_runs"] = [http_phase(root, snaps[size], size, args.config, qs, n_obs)
                            for size in sorted({sizes[0], sizes[-1]})]
        h = doc["http_runs"][0]
        doc["http"] = h
        doc["recall"]["http"] = [{"size": r["size"], "mode": "live", **{k: r[k] for k in
                                  ("n", "p50_ms", "p95_ms", "p99_ms", "mean_ms", "max_ms")}} for r in doc["http_runs"]]
        doc["observe"]["HTTP sidecar"] = h["observe"]
        if len(doc["http_runs"]) > 1:
            doc["observe"][f"HTTP sidecar ({sizes[-1]:,} memories in the project)"] = doc["http_runs"][-1]["observe"]
    if "ray" in parts or "replay" in parts:
        import ray

        from actors.launch import init_ray

        started = not ray.is_initialized()
        if started:
            init_ray(settings.runtime.ray_address or None)
        before = set(descendants(os.getpid()))
        try:
            if "ray" in parts:
                res = ray_phase(root, settings, snaps, qs, n_obs)
                doc["recall"]["ray"] = res["recall"]
                doc["memory"] = res["memory"]
                doc["observe"]["Ray actors"] = res["observe"]
                doc["ratios"]["Ray actors, live"] = _ratios(res["recall"])
                if many_dir is not None:
                    doc["projects"]["ray"] = projects.measure_ray(root, settings, many_dir, names, qs)
            if "replay" in parts:
                doc["replay"] = replay_phase(root, settings, replay_turns)
        finally:
            if started:
                mine = sorted(set(descendants(os.getpid())) | before)
                ray.shutdown()
                doc["ray_leftover_processes"] = len(wait_gone(mine, timeout_s=20))
    inproc = {r["size"]: r for r in doc["recall"].get("inprocess", []) if r["mode"] == "live"}
    cross: dict[str, float] = {}
    for path in ("ray", "http"):
        for r in doc["recall"].get(path, []):
            base = inproc.get(r["size"])
            if base and base["p50_ms"] > 0:
                cross[f"{path} / in process, live p50 at {r['size']}"] = round(r["p50_ms"] / base["p50_ms"], 2)
    doc["ratios"]["across paths"] = cross
    if doc["projects"] is not None:
        doc["projects"]["compare"] = projects.compare(doc, doc["projects"])
    if max(sizes) < 100_000:
        doc["notes"].append(
            "100,000 memories are left out of the default sizes: importing them means embedding 100k sentences with "
            "MiniLM (about 15 minutes here at 120 sentences/s, more when the machine is busy). Run "
            "`.venv/bin/dynmem bench perf --sizes 1000,10000,100000` for it; above 50,000 vectors a scope switches "
            "from exact search to HNSW (`actors/index.py`).")
    return doc


def main(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    parent = Path(args.data_dir) if getattr(args, "data_dir", None) else None
    if parent:
        parent.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="dynmem-perf-", dir=parent))
    try:
        doc = run(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    doc["wall_seconds"] = round(time.perf_counter() - t0, 1)
    try:
        doc["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    doc["command"] = _command(args)
    from actors.config import env

    if env("DYNMEM_EMBEDDER"):
        doc["command"] = f"DYNMEM_EMBEDDER={shlex.quote(env('DYNMEM_EMBEDDER'))} {doc['command']}"
    out = report_dir(args)
    png_name = "perf.png"
    projects_png: str | None = None
    if out is not None:
        png_name = plot(doc, out / "perf.png").name
        if doc.get("projects"):
            from eval.perf.projects import plot as plot_projects

            projects_png = plot_projects(doc["projects"], out / "perf-projects.png").name
        notes = out / "perf.notes.md"  # hand-written analysis, appended on every run
        text = render(doc, doc["command"], png_name, projects_png)
        (out / "perf.md").write_text(text + ("\n" + notes.read_text(encoding="utf-8") if notes.exists() else ""),
                                     encoding="utf-8")
        (out / "perf.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    if args.json:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
        return 0
    print(render(doc, doc["command"], png_name))
    print(f"report: {out / 'perf.md'}" if out is not None else "(no report written: --out DIR, or --canonical for eval/results/)")
    return 0


def _cli(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - `python -m eval.perf.run`
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("--sizes", default=DEFAULT_SIZES)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--replay-turns", type=int, default=2000)
    p.add_argument("--parts")
    p.add_argument("--parallel", type=int, default=1)
    p.add_argument("--out")
    p.add_argument("--json", action="store_true")
    p.add_argument("--config")
    p.add_argument("--data-dir")
    p.add_argument("--stores")
    p.add_argument("--projects", type=int, default=1)
    return main(p.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_cli())

