"""Replay throughput against a latency-bound model endpoint, and recall latency under replay (issue 12).

The scripted fake OpenAI server (``tests/fakes/openai_server.py``, answering dynmem's prompts
with ``tests/fakes/brain.py``) runs in its own process and answers every request after a
fixed latency (250 ms by default). A history of ``--turns`` turns (the bundled shop-api history,
repeated with new request ids and sessions) is replayed through the real Ray actor graph
with 1, 2, 4, ... requests in flight (``[model] max_concurrency`` per extraction worker x
workers), each into a fresh data directory; the reply cache is off, so every turn costs a
request. Turns/s and requests/s are compared with the ideal line: ``in flight / latency``
requests per second.

The recall part replays ``--recall-turns`` turns at the largest in-flight setting while
another thread recalls (passive) every ``--recall-every-ms``, and recalls the same queries
with nothing running; it reports p50/p95/p99 of both, measured in one run.

The clock of a replay starts once its actors are up (see :func:`warm_up`). Each report also
gives the prompt size per request, read from the fake server's record of the requests (the
figure ``docs/scale.md`` prices), and the load average around each row.

Run from the repository root::

    .venv/bin/python -m eval.perf.replay_throughput --out /tmp/tp                     # a report in /tmp/tp
    .venv/bin/python -m eval.perf.replay_throughput --canonical --nodes 1,3          # into eval/results/

Options: ``--in-flight 1,2,4,8,16 --turns 400 --latency-ms 250 --nodes 1`` (``--nodes 1,3``:
one node, then a head and two worker nodes with ``ray.cluster_utils.Cluster``, one report
each: ``replay-throughput.md`` and ``replay-throughput-3-nodes.md``), ``--recall-turns 2000``
(0 skips the recall part, which runs on the first node count only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "eval" / "results"
NAME = "replay-throughput"


class FakeEndpoint:
    """The fake server as a subprocess (its threads must not share this process's GIL)."""

    def __init__(self, latency_ms: float, record: Path) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "tests"), str(REPO)])}
        self.record = record
        self.proc = subprocess.Popen([sys.executable, "-m", "fakes.openai_server", "--port", "0", "--brain",
                                      "--latency-ms", str(latency_ms), "--record", str(record)],
                                     stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline().strip())
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def requests(self) -> int:
        try:
            with self.record.open(encoding="utf-8") as fh:
                return sum(1 for line in fh if '"/v1/chat/completions"' in line)
        except OSError:
            return 0

    def prompts(self, skip: int = 0) -> list[int]:
        """Characters of prompt (every message's content) of each chat request after the first ``skip`` requests."""
        out: list[int] = []
        try:
            with self.record.open(encoding="utf-8") as fh:
                for line in fh:
                    if '"/v1/chat/completions"' not in line:
                        continue
                    body = json.loads(line).get("body") or {}
                    out.append(sum(len(str(m.get("content", ""))) for m in body.get("messages", [])))
        except OSError:
            return []
        return out[skip:]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def settings_for(base_url: str, in_flight: int, embedder: str) -> Any:
    """k requests in flight: workers x per-worker concurrency (at most 4 per worker), pool fixed at that size."""
    from actors.config import load_settings

    base = load_settings()
    per_worker = min(in_flight, 4)
    workers = -(-in_flight // per_worker)
    model = base.model.model_copy(update={
        "client": "openai", "openai_base_url": base_url, "openai_model": "fake-model", "openai_api_key": "bench",
        "max_concurrency": per_worker, "cache_max_mb": 0.0, "timeout_s": 30.0})
    runtime = base.runtime.model_copy(update={"extraction_workers": workers, "extraction_workers_max": workers})
    emb = base.embedder.model_copy(update={"name": embedder})
    return base.model_copy(update={"model": model, "runtime": runtime, "embedder": emb})


def history(turns: int, folder: Path, tag: str = "h") -> Path:
    """``turns`` lines of the shop-api history repeated (new request ids and sessions per repetition),
    each repetition shifted back in time so that the last one ends where the original does (a
    turn from the future would be refused)."""
    from datetime import datetime, timezone

    from actors.replay import DEMO_HISTORY
    from engine.history import parse_ts

    path = folder / f"history-{tag}-{turns}.jsonl"
    if path.exists():
        return path
    rows = [json.loads(line) for line in Path(str(DEMO_HISTORY)).read_text(encoding="utf-8").splitlines() if line.strip()]
    stamps = [parse_ts(r["ts"]) for r in rows if r.get("ts")]
    span = max(stamps) - min(stamps) + 86_400_000
    reps = -(-turns // len(rows))
    out = []
    for rep in range(reps):
        for i, row in enumerate(rows):
            new = {**row, "request_id": f"{tag}-{row.get('request_id') or i}-rep{rep}",
                   "session": f"{row.get('session', 'default')}-{tag}{rep}"}
            if row.get("ts"):
                at = parse_ts(row["ts"]) - (reps - 1 - rep) * span
                new["ts"] = datetime.fromtimestamp(at / 1000, tz=timezone.utc).isoformat().replace("+00:00", "Z")
            out.append(json.dumps(new, ensure_ascii=False))
    path.write_text("\n".join(out[:turns]) + "\n", encoding="utf-8")
    return path


def replay_once(endpoint: FakeEndpoint, in_flight: int, turns: int, work: Path, embedder: str) -> dict[str, Any]:
    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from actors.replay import replay_file

    settings = settings_for(endpoint.base_url, in_flight, embedder)
    src = history(turns, work, "tp")
    before = endpoint.requests()
    rt = Runtime(work / f"data-{in_flight}-{time.time_ns()}", settings, use_ray=True)
    try:
        warm_up(rt, "shop-api")
        # where the work ran: the data node holds the log and engine, the workers are spread
        worker_nodes = sorted({rt.placement_of(w) for w in rt.extractors})
        cpu0 = _cpu_by_process()
        rep = replay_file(Pipeline(rt), src)
        cpu = cpu_per_turn(cpu0, _cpu_by_process(), rep.turns)
    finally:
        rt.shutdown()
    requests = endpoint.requests() - before
    chars = endpoint.prompts(before)
    return {"turns": rep.turns, "seconds": rep.seconds, "requests": requests, "dead_jobs": rep.dead_jobs,
            "worker_nodes": len(worker_nodes), "worker_nodes_off_data_node": sum(n != rt.data_node for n in worker_nodes),
            "prompt_chars_per_request": round(statistics.mean(chars)) if chars else 0, "cpu_ms_per_turn": cpu}


def _cpu_by_process() -> dict[int, tuple[str, float]]:
    """CPU seconds so far of this process and every descendant (Ray's workers and system
    processes, the fake server), with what each is: a load-independent view of where a replay's
    work goes (Linux /proc; empty elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parent: dict[int, int] = {}
    info: dict[int, tuple[str, float]] = {}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        parent[int(name)] = int(fields[1])
        info[int(name)] = (cmd, (int(fields[11]) + int(fields[12])) / tick)
    mine, todo = {os.getpid()}, [os.getpid()]
    while todo:
        p = todo.pop()
        for child in [c for c, pp in parent.items() if pp == p and c not in mine]:
            mine.add(child)
            todo.append(child)
    out: dict[int, tuple[str, float]] = {}
    for pid in mine & info.keys():
        cmd, cpu = info[pid]
        kind = ("driver" if pid == os.getpid() else "fake server" if "fakes.openai_server" in cmd
                else cmd.split("ray::", 1)[1].split(".")[0].split()[0] if "ray::" in cmd
                else "ray system (gcs, raylet, ...)")
        out[pid] = (kind, cpu)
    return out


def cpu_per_turn(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]],
                 turns: int) -> dict[str, float]:
    """Milliseconds of CPU per turn by kind of process between two :func:`_cpu_by_process` readings."""
    by: dict[str, float] = {}
    for pid, (kind, cpu) in after.items():
        label = kind if kind != "IDLE" else before.get(pid, (kind, 0.0))[0]
        by[label] = by.get(label, 0.0) + cpu - before.get(pid, (kind, 0.0))[1]
    return {k: round(v * 1000 / max(1, turns), 2) for k, v in sorted(by.items(), key=lambda kv: -kv[1]) if v > 0}


def warm_up(rt: Any, project: str) -> None:
    """Start the actors before the clock: the embedder loaded, every extraction worker's client
    built, and the project's log and engine actors up (their stores created empty). A replay
    pays these once (1-5 s on a loaded 2-core machine), whatever its length: they are not
    throughput."""
    rt.index.probe()
    for worker in rt.extractors:
        worker.ping()
    rt.log(project).ping()
    rt.engine(project).ping()


def percentile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s) + 0.5) - 1))]


def recall_under_replay(endpoint: FakeEndpoint, in_flight: int, turns: int, work: Path, every_ms: float,
                        embedder: str) -> dict[str, Any]:
    """p50/p95/p99 of passive recalls with nothing running, then during a replay of ``turns``, in one run."""
    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from actors.replay import replay_file
    from actors.wire import RecallRequest
    from eval.perf.synth import queries

    settings = settings_for(endpoint.base_url, in_flight, embedder)
    # Every recall embeds its query (no query cache), so that neither phase is served from memory.
    settings = settings.model_copy(update={"embedder": settings.embedder.model_copy(update={"query_cache_size": 0})})
    rt = Runtime(work / f"recall-{time.time_ns()}", settings, use_ray=True)
    try:
        seed = Pipeline(rt)
        replay_file(seed, history(178, work, "seed"))  # the project exists and has memories before either phase
        asked = queries(4000, seed=5)
        cursor = [0]

        def sample(stop: threading.Event, out: list[float], limit: int) -> None:
            reader = Pipeline(rt)
            while not stop.is_set() and len(out) < limit:
                q = asked[cursor[0] % len(asked)]
                cursor[0] += 1
                t0 = time.perf_counter()
                reader.recall(RecallRequest(project="shop-api", query=q, passive=True))
                out.append((time.perf_counter() - t0) * 1000)
                stop.wait(every_ms / 1000)

        sample(threading.Event(), [], 20)  # warm-up (model loaded, connections open), not counted
        idle: list[float] = []
        load0 = os.getloadavg()[0]
        sample(threading.Event(), idle, 300)
        busy: list[float] = []
        stop = threading.Event()
        t = threading.Thread(target=sample, args=(stop, busy, 10**9), daemon=True)
        t.start()
        t0 = time.perf_counter()
        rep = replay_file(Pipeline(rt), history(turns, work, "load"))
        replay_s = time.perf_counter() - t0
        stop.set()
        t.join(timeout=120)
    finally:
        rt.shutdown()

    def summary(xs: list[float]) -> dict[str, float]:
        return {"n": len(xs), "p50": round(statistics.median(xs), 1), "p95": round(percentile(xs, 95), 1),
                "p99": round(percentile(xs, 99), 1), "max": round(max(xs), 1)}

    return {"turns": rep.turns, "replay_seconds": round(replay_s, 1), "in_flight": in_flight, "idle": summary(idle),
            "during_replay": summary(busy), "load_avg": [round(load0, 1), round(os.getloadavg()[0], 1)]}


def start_ray(nodes: int) -> Any:
    import ray

    import actors.launch  # noqa: F401 - its import sets the quiet, local-only Ray defaults

    if nodes <= 1:
        ray.init(num_cpus=os.cpu_count() or 2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        return None
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, logging_level="ERROR")
    return cluster


def render(doc: dict[str, Any], command: str) -> str:
    lat = doc["latency_ms"] / 1000
    lines = [f"# Replay throughput with a {doc['latency_ms']:.0f} ms endpoint ({doc['nodes']} node(s))", "",
             f"Command: `{command}`", "",
             f"{doc['turns']} turns of the repeated shop-api history, the openai client against the scripted fake server "
             f"(every request answered after {doc['latency_ms']:.0f} ms, reply cache off), `{doc['embedder']}` embedder, "
             "the real Ray actor graph. Ideal = in flight / latency requests per second; efficiency = measured "
             "requests/s over ideal. The clock starts once the actors are up (embedder loaded, model clients "
             "built, the project's log and engine started) and stops when every job is drained. One run; "
             f"{os.cpu_count()} cores, load average (1 min) before and after each row.", "",
             "| in flight | workers x per worker | seconds | turns/s | requests | requests/s | ideal requests/s | efficiency "
             "| load avg |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in doc["rows"]:
        ideal = r["in_flight"] / lat
        rps = r["requests"] / r["seconds"]
        per = min(r["in_flight"], 4)
        lines.append(f"| {r['in_flight']} | {-(-r['in_flight'] // per)} x {per} | {r['seconds']:.1f} | "
                     f"{r['turns'] / r['seconds']:.1f} | {r['requests']} | {rps:.1f} | {ideal:.1f} | {rps / ideal:.0%} | "
                     + ("-".join(f"{x:g}" for x in r["load_avg"]) if r.get("load_avg") else "") + " |")
    if doc["nodes"] > 1:
        spread = [f"{r['in_flight']}: {r.get('worker_nodes', '?')} ({r.get('worker_nodes_off_data_node', '?')} not the data node)"
                  for r in doc["rows"]]
        lines += ["", "A head and two worker nodes of `ray.cluster_utils.Cluster` on this one machine (each a raylet "
                  "of 1 CPU); the log and engine actors on the data node (the head), extraction workers spread. Nodes "
                  "the extraction workers ran on, by in-flight setting: " + "; ".join(spread) + "."]
    kinds = list(dict.fromkeys(k for r in doc["rows"] for k in r.get("cpu_ms_per_turn", {})))
    if kinds:
        lines += ["", "CPU per turn (ms) by process, read from /proc before and after each replay: which process "
                  "does the work (CPU time too grows with the load of a shared machine, less than wall time).", "",
                  "| in flight | total | " + " | ".join(kinds) + " |", "| --- | --- | " + " | ".join("---" for _ in kinds) + " |"]
        for r in doc["rows"]:
            c = r.get("cpu_ms_per_turn", {})
            lines.append(f"| {r['in_flight']} | {sum(c.values()):.1f} | " + " | ".join(f"{c.get(k, 0):.1f}" for k in kinds) + " |")
    chars = [r.get("prompt_chars_per_request", 0) for r in doc["rows"]]
    if any(chars):
        mean = round(statistics.mean(c for c in chars if c))
        lines += ["", f"Prompt size (from the fake server's record of the requests): {mean:,} characters of messages "
                  f"(system prompt, schema and the turn) per chat request on average, about {round(mean / 4):,} "
                  "tokens at 4 characters per token."]
    rec = doc.get("recall")
    if rec:
        ratio = rec["during_replay"]["p99"] / rec["idle"]["p99"]
        lines += ["", f"## Recall latency during a {rec['turns']}-turn replay ({rec['in_flight']} in flight)", "",
                  "Passive recalls of the shop-api project (the one being replayed), one every "
                  f"{doc['recall_every_ms']:.0f} ms, idle first, then during the replay, in one run.", "",
                  "| phase | recalls | p50 ms | p95 ms | p99 ms | max ms |", "| --- | --- | --- | --- | --- | --- |"]
        for phase in ("idle", "during_replay"):
            s = rec[phase]
            lines.append(f"| {phase.replace('_', ' ')} | {s['n']} | {s['p50']} | {s['p95']} | {s['p99']} | {s['max']} |")
        load = rec.get("load_avg")
        lines += ["", f"p99 during replay / p99 idle = {ratio:.2f} (target <= 3)"
                  + (f"; load average {load[0]:g} before, {load[1]:g} after." if load else ".")]
    return "\n".join(lines) + "\n"


def plot(doc: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lat = doc["latency_ms"] / 1000
    xs = [r["in_flight"] for r in doc["rows"]]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(xs, [x / lat for x in xs], "--", color="grey", label="ideal (in flight / latency)")
    ax.plot(xs, [r["requests"] / r["seconds"] for r in doc["rows"]], "o-", label="measured requests/s")
    ax.plot(xs, [r["turns"] / r["seconds"] for r in doc["rows"]], "s-", label="measured turns/s")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel("requests in flight")
    ax.set_ylabel("per second")
    ax.set_title(f"Replay throughput, {doc['latency_ms']:.0f} ms endpoint, {doc['nodes']} node(s)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--in-flight", default="1,2,4,8,16")
    ap.add_argument("--turns", type=int, default=400)
    ap.add_argument("--latency-ms", type=float, default=250.0)
    ap.add_argument("--nodes", default="1", help="node counts, one report each: 1,3 runs one node, then a head and two worker nodes (the recall part runs on the first count only)")
    ap.add_argument("--embedder", default="hash", help="hash: the endpoint is the bottleneck measured (minilm: realistic)")
    ap.add_argument("--recall-turns", type=int, default=2000, help="0 skips the recall part")
    ap.add_argument("--recall-embedder", default="minilm")
    ap.add_argument("--recall-every-ms", type=float, default=100.0)
    ap.add_argument("--out", help="write the report here")
    ap.add_argument("--canonical", action="store_true", help="write the report into eval/results/")
    args = ap.parse_args(argv)
    out = RESULTS if args.canonical else (Path(args.out) if args.out else None)
    command = "python -m eval.perf.replay_throughput " + " ".join(argv if argv is not None else sys.argv[1:])
    for i, nodes in enumerate(int(x) for x in str(args.nodes).split(",")):
        doc = run(args, nodes, recall=i == 0 and args.recall_turns > 0)
        text = render(doc, command)
        print(text)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            stem = NAME if nodes <= 1 else f"{NAME}-{nodes}-nodes"
            (out / f"{stem}.md").write_text(text, encoding="utf-8")
            (out / f"{stem}.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
            plot(doc, out / f"{stem}.png")
    return 0


def run(args: argparse.Namespace, nodes: int, recall: bool) -> dict[str, Any]:
    """Every in-flight setting on a fresh Ray of ``nodes`` nodes (and the recall part with ``recall``)."""
    import ray

    with tempfile.TemporaryDirectory(prefix="dynmem-tp-") as tmp:
        work = Path(tmp)
        endpoint = FakeEndpoint(args.latency_ms, work / "requests.jsonl")
        cluster = start_ray(nodes)
        try:
            rows = []
            for k in [int(x) for x in args.in_flight.split(",")]:
                load0 = os.getloadavg()[0]
                r = {"in_flight": k, **replay_once(endpoint, k, args.turns, work, args.embedder)}
                r["load_avg"] = [round(load0, 1), round(os.getloadavg()[0], 1)]  # 1-minute load, before and after
                rows.append(r)
                print(json.dumps(r), flush=True)
            doc: dict[str, Any] = {"latency_ms": args.latency_ms, "turns": args.turns, "nodes": nodes,
                                   "embedder": args.embedder, "rows": rows, "recall_every_ms": args.recall_every_ms}
            if recall:
                doc["recall"] = recall_under_replay(endpoint, max(r["in_flight"] for r in rows), args.recall_turns, work,
                                                    args.recall_every_ms, args.recall_embedder)
                print(json.dumps(doc["recall"]), flush=True)
        finally:
            ray.shutdown()
            if cluster is not None:
                cluster.shutdown()
            endpoint.stop()
    return doc


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
