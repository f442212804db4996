"""``dynmem bench load``: recall and observe latency through a real sidecar under concurrent
clients while extraction runs (issue 17, failure 8).

A real ``dynmem serve --detach`` sidecar is started on a fresh data directory. The bundled
example history is observed first (``--seed-turns`` turns), so that recall has memories and
the sidecar's background worker has extraction work queued when the measurement starts.
Then ``--clients`` concurrent HTTP clients (one asyncio task each, one connection each, spread
over ``--client-processes`` processes so that one client process's own starvation does not
become the measurement) run for ``--seconds``: each client loops over ``observe`` (a new turn of the example history,
fresh request id) and ``recall`` (a question about the project), ``--observe-share`` of
the calls being observes, with no think time. A client that is told to back off (429 or 503
with ``Retry-After``) waits that long and goes on; that reply is counted, not timed.

Reported per operation: p50, p95, p99, mean and max latency of the successful calls, and
the count of every status. After the run the sidecar is stopped and the log store is read
directly: every observe that was acknowledged (200) must be in the log once (``lost`` and
``duplicated`` must be 0). The machine's load average at the start and end is reported, as
the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from eval.cli import report_dir
from eval.perf.measure import descendants, machine_facts, summarize_ms, wait_gone

REPO = Path(__file__).resolve().parents[2]
PROJECT = "load-api"
QUESTIONS = ("which port does the API listen on?", "what database do we use?", "where is the staging host?",
             "how do we run the tests?", "which python version do we target?", "who maintains the pager rotation?",
             "what is the payment provider?", "which branch do we deploy from?")


def _say(msg: str) -> None:
    print(f"[load {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bridge.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def _turns() -> list[dict[str, Any]]:
    from actors.replay import DEMO_HISTORY

    rows = [json.loads(x) for x in DEMO_HISTORY.read_text(encoding="utf-8").splitlines() if x.strip()]
    return [{"user": r.get("user", ""), "assistant": r.get("assistant", "")} for r in rows]


class Tally:
    """Latencies of successful calls and the count of every status, per operation."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = {"observe": [], "recall": []}
        self.server_ms: dict[str, list[float]] = {"observe": [], "recall": []}  # admit + serve (Server-Timing)
        self.status: dict[str, Counter[str]] = {"observe": Counter(), "recall": Counter()}
        self.codes: Counter[str] = Counter()  # error code of each non-200 reply
        self.acked: list[str] = []  # request ids of acknowledged observes
        self.retry_after: list[float] = []
        self.lag_ms: list[float] = []  # the client process's event-loop lag


def _server_ms(header: str) -> float | None:
    """The sidecar's own time for a call (admission wait + serving) from its Server-Timing header."""
    total, seen = 0.0, False
    for part in header.split(","):
        for field in part.split(";")[1:]:
            if field.strip().startswith("dur="):
                try:
                    total += float(field.strip()[4:])
                    seen = True
                except ValueError:
                    return None
    return total if seen else None


async def _client(i: int, http: Any, deadline: float, share: float, turns: list[dict[str, Any]], tally: Tally,
                  rng: random.Random) -> None:
    n = 0
    while time.monotonic() < deadline:
        n += 1
        if rng.random() < share:
            op = "observe"
            rid = f"c{i}-{n}"
            t = turns[(i * 7 + n) % len(turns)]
            body: dict[str, Any] = {"project": PROJECT, "session": f"client-{i}", "user": t["user"],
                                    "assistant": t["assistant"], "request_id": rid}
        else:
            op, rid = "recall", ""
            body = {"project": PROJECT, "query": rng.choice(QUESTIONS)}
        t0 = time.perf_counter()
        try:
            r = await http.post(f"/v1/{op}", json=body)
        except Exception as exc:  # a transport error is a result too
            tally.status[op][type(exc).__name__] += 1
            continue
        ms = (time.perf_counter() - t0) * 1000.0
        tally.status[op][str(r.status_code)] += 1
        if r.status_code == 200:
            tally.ms[op].append(ms)
            timing = _server_ms(r.headers.get("server-timing", ""))
            if timing is not None:
                tally.server_ms[op].append(timing)
            if op == "observe":
                tally.acked.append(rid)
            continue
        try:
            tally.codes[f"{r.status_code} {r.json().get('code')}"] += 1
        except ValueError:
            tally.codes[f"{r.status_code} (no JSON)"] += 1
        wait = r.headers.get("retry-after")
        if wait is not None:
            try:
                tally.retry_after.append(float(wait))
                await asyncio.sleep(min(float(wait), 5.0))
            except ValueError:
                pass


async def _drive(url: str, token: str, ids: list[int], start_at: float, seconds: float, share: float,
                 seed: int) -> Tally:
    import httpx

    turns = _turns()
    tally = Tally()
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=len(ids), max_keepalive_connections=len(ids))
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60.0, limits=limits) as http:
        await asyncio.sleep(max(0.0, start_at - time.time()))  # every process starts together
        deadline = time.monotonic() + seconds
        lag = asyncio.get_running_loop().create_task(_loop_lag(deadline, tally))
        await asyncio.gather(*(_client(i, http, deadline, share, turns, tally, random.Random(seed * 1000 + i))
                               for i in ids))
        await lag
    return tally


async def _loop_lag(deadline: float, tally: Tally) -> None:
    """How late this client process's event loop wakes up (its own CPU starvation, not the sidecar's)."""
    while time.monotonic() < deadline:
        t0 = time.perf_counter()
        await asyncio.sleep(0.05)
        tally.lag_ms.append((time.perf_counter() - t0 - 0.05) * 1000.0)


def _drive_process(url: str, token: str, ids: list[int], start_at: float, seconds: float, share: float,
                   seed: int) -> dict[str, Any]:
    """One client process (run in a process pool): its clients' results as plain data."""
    t = asyncio.run(_drive(url, token, ids, start_at, seconds, share, seed))
    return {"ms": t.ms, "server_ms": t.server_ms, "status": {k: dict(v) for k, v in t.status.items()},
            "codes": dict(t.codes), "acked": t.acked, "retry_after": t.retry_after, "lag_ms": t.lag_ms}


def _drive_all(url: str, token: str, clients: int, procs: int, seconds: float, share: float, seed: int) -> Tally:
    """The clients, spread over ``procs`` processes so that no single client process is the bottleneck."""
    from concurrent.futures import ProcessPoolExecutor

    groups = [list(range(clients))[i::procs] for i in range(procs)]
    groups = [g for g in groups if g]
    start_at = time.time() + 3.0
    total = Tally()
    with ProcessPoolExecutor(max_workers=len(groups)) as pool:
        futs = [pool.submit(_drive_process, url, token, g, start_at, seconds, share, seed) for g in groups]
        for f in futs:
            part = f.result()
            for op in ("observe", "recall"):
                total.ms[op] += part["ms"][op]
                total.server_ms[op] += part["server_ms"][op]
                total.status[op].update(part["status"][op])
            total.codes.update(part["codes"])
            total.acked += part["acked"]
            total.retry_after += part["retry_after"]
            total.lag_ms += part["lag_ms"]
    return total


def _seed(url: str, token: str, n: int) -> int:
    """Observe the first ``n`` turns of the example history (so recall has something to find)."""
    import httpx

    turns = _turns()[:n]
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60.0) as c:
        for i, t in enumerate(turns):
            r = c.post("/v1/observe", json={"project": PROJECT, "session": "seed", "request_id": f"seed-{i}", **t})
            if r.status_code != 200:
                raise RuntimeError(f"seeding failed at turn {i}: {r.status_code} {r.text[:200]}")
    return len(turns)


def _jobs(url: str, token: str) -> dict[str, dict[str, int]]:
    import httpx

    r = httpx.get(f"{url}/v1/jobs", params={"project": PROJECT}, headers={"Authorization": f"Bearer {token}"},
                  timeout=60.0)
    return dict(r.json().get("jobs", {})) if r.status_code == 200 else {}


def _check_log(data: Path, acked: list[str]) -> dict[str, int]:
    """Every acknowledged request id is in the log exactly once (read after the sidecar stopped)."""
    import sqlite3

    from actors.engine_actor import _slug
    from engine.gate import stored_id

    path = data / "projects" / _slug(PROJECT) / "log.sqlite"
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = Counter(r[0] for r in conn.execute("SELECT request_id FROM units"))
    finally:
        conn.close()
    want = [stored_id(r) for r in acked]
    return {"acked": len(want), "lost": sum(1 for r in want if rows[r] == 0),
            "duplicated": sum(1 for r in want if rows[r] > 1), "logged": sum(rows.values())}


def run(workdir: Path, clients: int = 50, seconds: float = 60.0, share: float = 0.5, seed_turns: int = 178,
        seed: int = 0, config: str | None = None, procs: int = 5) -> dict[str, Any]:
    data = workdir / "data"
    data.mkdir(parents=True)
    extra = ["--config", config] if config else []
    facts = machine_facts()
    started = _cli("serve", "--detach", "--data-dir", str(data), *extra, "--json")
    if started.returncode != 0:
        raise RuntimeError(f"dynmem serve --detach failed ({started.returncode}): {started.stderr[-2000:]}")
    info = json.loads(started.stdout)
    pid = int(info["pid"])
    url = str(info["url"]).rstrip("/")
    token = Path(info["token_file"]).read_text(encoding="utf-8").strip()
    tree = [pid, *descendants(pid)]
    result: dict[str, Any] = {"clients": clients, "seconds": seconds, "observe_share": share, "seed_turns": seed_turns,
                              "client_processes": procs}
    try:
        _say(f"sidecar at {url}; observing {seed_turns} seed turns")
        result["seeded"] = _seed(url, token, seed_turns)
        before = _jobs(url, token)
        result["jobs_before"] = before
        _say(f"jobs before the run: {before}; {clients} clients for {seconds:g} s")
        load_start = os.getloadavg()
        t0 = time.perf_counter()
        tally = _drive_all(url, token, clients, max(1, min(procs, clients)), seconds, share, seed)
        result["wall_s"] = round(time.perf_counter() - t0, 1)
        load_end = os.getloadavg()
        result["loadavg_start"] = [round(x, 2) for x in load_start]
        result["loadavg_end"] = [round(x, 2) for x in load_end]
        result["jobs_after"] = _jobs(url, token)
        for op in ("observe", "recall"):
            result[op] = {**summarize_ms(tally.ms[op]), "status": dict(tally.status[op]),
                          "per_s": round(len(tally.ms[op]) / max(seconds, 1e-9), 1),
                          "server": summarize_ms(tally.server_ms[op])}
        result["error_codes"] = dict(tally.codes)
        result["client_loop_lag"] = summarize_ms(tally.lag_ms)
        result["retry_after_s"] = sorted(set(tally.retry_after))
        tree = sorted(set(tree) | set(descendants(pid)))
        acked = tally.acked
    finally:
        stop = _cli("stop", "--data-dir", str(data), timeout=120)
        left = wait_gone(tree, timeout_s=30)
        result["stop_rc"] = stop.returncode
        result["orphans_after_stop"] = len(left)
    result["log_check"] = _check_log(data, acked)
    result["machine"] = facts
    return result


def render(r: dict[str, Any], command: str) -> str:
    lines = [
        "# Load: recall and observe under concurrent clients while extraction runs",
        "",
        f"Command: `{command}`",
        "",
        f"{r['clients']} HTTP clients for {r['seconds']:g} s against one `dynmem serve` sidecar, "
        f"{r['observe_share']:.0%} observes and the rest recalls, no think time, after {r['seeded']} seed turns "
        f"(their extraction jobs run during the measurement). Machine: {r['machine'].get('nproc')} cores "
        f"({r['machine'].get('cpu')}), load average {r['loadavg_start'][0]:.2f} at the start and "
        f"{r['loadavg_end'][0]:.2f} at the end (1-minute; the machine is shared with other work).",
        "",
        "| operation | ok calls | per s | p50 ms | p95 ms | p99 ms | max ms | statuses |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for op in ("recall", "observe"):
        s = r[op]
        statuses = ", ".join(f"{k}: {v}" for k, v in sorted(s["status"].items()))
        lines.append(f"| {op} | {s['n']} | {s['per_s']} | {s['p50_ms']:.1f} | {s['p95_ms']:.1f} | {s['p99_ms']:.1f} "
                     f"| {s['max_ms']:.1f} | {statuses} |")
    lines += ["", "The same calls as the sidecar timed them (its `Server-Timing` header: admission wait + serving; "
              "the difference is time in the HTTP stack, the network and the client's own process):", "",
              "| operation | p50 ms | p95 ms | p99 ms | max ms |", "| --- | --- | --- | --- | --- |"]
    for op in ("recall", "observe"):
        v = r[op]["server"]
        lines.append(f"| {op} | {v['p50_ms']:.1f} | {v['p95_ms']:.1f} | {v['p99_ms']:.1f} | {v['max_ms']:.1f} |")
    lc = r["log_check"]
    lines += [
        "",
        f"Rejected calls by error code: {r['error_codes'] or 'none'}; Retry-After values seen: "
        f"{r['retry_after_s'] or 'none'} s.",
        "",
        f"Acknowledged observes: {lc['acked']}; lost (acknowledged, not in the log): {lc['lost']}; "
        f"logged twice: {lc['duplicated']}; turns in the log: {lc['logged']}.",
        "",
        f"Jobs before the run: `{json.dumps(r['jobs_before'])}`; after: `{json.dumps(r['jobs_after'])}`.",
        "",
        f"Client processes: {r['client_processes']}; their event loops woke late by p50 "
        f"{r['client_loop_lag']['p50_ms']:.1f} ms, p99 {r['client_loop_lag']['p99_ms']:.1f} ms, max "
        f"{r['client_loop_lag']['max_ms']:.1f} ms (CPU starvation of the clients themselves).",
        "",
        f"`dynmem stop` exit {r['stop_rc']}, processes left after stop: {r['orphans_after_stop']}.",
        "",
        "Latencies are of the calls that succeeded; a client told to back off (429/503 with Retry-After) "
        "waits as told and goes on, and that call is counted above, not timed. Single run: on a shared "
        "2-core machine expect ±30% between runs.",
    ]
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace) -> int:
    out = report_dir(args)
    with tempfile.TemporaryDirectory(prefix="dynmem-load-", dir=getattr(args, "data_dir", None)) as tmp:
        res = run(Path(tmp), clients=args.clients, seconds=args.seconds, share=args.observe_share,
                  seed_turns=args.seed_turns, seed=args.seed, config=getattr(args, "config", None),
                  procs=args.client_processes)
        shutil.rmtree(Path(tmp) / "data", ignore_errors=True)
    command = (f"dynmem bench load --clients {args.clients} --seconds {args.seconds:g} "
               f"--observe-share {args.observe_share:g} --seed-turns {args.seed_turns} "
               f"--client-processes {args.client_processes}")
    if out is not None:
        (out / "load.json").write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
        (out / "load.md").write_text(render(res, command), encoding="utf-8")
        _say(f"wrote {out / 'load.md'}")
    if getattr(args, "json", False):
        print(json.dumps(res))
    else:
        print(render(res, command))
    lc = res["log_check"]
    return 0 if lc["lost"] == lc["duplicated"] == 0 else 1
