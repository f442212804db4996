"""``dynmem bench idle``: what an idle project costs, and that its actors are given back
(issue 17, failure 5).

On a local Ray, ``--projects`` projects each get a few turns of the example history (observed
and drained), so that each has a live LogActor and EngineActor. Measured: the resident memory
(RSS) of each project's two actor processes. Then the projects stay idle for
``runtime.idle_release_s`` (set to ``--idle-s`` for the run) and ``Runtime.release_idle()`` runs,
as the sidecar's worker does on each sweep: the report says how many of those processes are
gone and how much RSS was given back. Finally each project is recalled again: its actors come
back on demand from their stores, and each recall must find the same memories as before.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from eval.cli import report_dir
from eval.perf.measure import actor_pid, machine_facts, rss_mb, wait_gone

QUESTION = "which port does the API listen on?"


def _say(msg: str) -> None:
    print(f"[idle {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def uss_mb(pid: int | None) -> float | None:
    """Unique set size in MiB: the memory that ending the process gives back (None if unknown)."""
    try:
        import psutil

        return round(psutil.Process(pid).memory_full_info().uss / 2**20, 1) if pid else None
    except Exception:  # gone, or not permitted
        return None


def run(workdir: Path, projects: int = 6, idle_s: float = 5.0, turns: int = 20,
        config: str | None = None) -> dict[str, Any]:
    from actors.config import load_settings
    from actors.launch import Runtime, init_ray
    from actors.pipeline import Pipeline
    from actors.replay import DEMO_HISTORY
    from actors.wire import RecallRequest
    from engine.history import parse_history

    settings = load_settings(Path(config) if config else None)
    settings = settings.model_copy(update={"runtime": settings.runtime.model_copy(
        update={"idle_release_s": idle_s, "max_live_projects": max(projects, settings.runtime.max_live_projects)})})
    init_ray(num_cpus=2)
    history, _ = parse_history(DEMO_HISTORY.read_text(encoding="utf-8").splitlines())
    names = [f"idle-{i}" for i in range(projects)]
    rt = Runtime(workdir / "data", settings, use_ray=True)
    result: dict[str, Any] = {"projects": projects, "idle_s": idle_s, "turns_per_project": turns,
                              "machine": machine_facts()}
    try:
        pipe = Pipeline(rt)
        for name in names:
            pipe.observe([t.model_copy(update={"project": name, "request_id": f"{name}-{i}"})
                          for i, t in enumerate(history[:turns])])
            pipe.drain(name)
        before = {n: sorted(m.id for m in pipe.recall(RecallRequest(project=n, query=QUESTION, passive=True)).memories)
                  for n in names}
        pids: dict[str, dict[str, int | None]] = {
            n: {"log": actor_pid(rt.log(n).target), "engine": actor_pid(rt.engine(n).target)} for n in names}
        per_project = []
        for n in names:
            log_mb, eng_mb = rss_mb(pids[n]["log"]), rss_mb(pids[n]["engine"])
            uss = [uss_mb(pids[n]["log"]), uss_mb(pids[n]["engine"])]
            per_project.append({"project": n, "log_rss_mb": log_mb, "engine_rss_mb": eng_mb,
                                "total_mb": round((log_mb or 0.0) + (eng_mb or 0.0), 1),
                                "uss_mb": round(sum(u or 0.0 for u in uss), 1)})
        result["live"] = per_project
        totals = [p["total_mb"] for p in per_project]
        result["rss_per_project_mb"] = {"min": min(totals), "max": max(totals),
                                        "mean": round(sum(totals) / len(totals), 1)}
        uniq = [p["uss_mb"] for p in per_project]
        result["uss_per_project_mb"] = round(sum(uniq) / len(uniq), 1)
        result["live_projects_before"] = len(rt.live_projects())
        _say(f"{projects} projects live, {result['rss_per_project_mb']['mean']} MiB per project (log + engine actor)")

        released_early = rt.release_idle()  # just used: nothing is idle yet
        time.sleep(idle_s + 0.5)
        t0 = time.perf_counter()
        released = rt.release_idle()
        result["release_s"] = round(time.perf_counter() - t0, 2)
        all_pids = [p for n in names for p in pids[n].values() if p]
        left = wait_gone(all_pids, timeout_s=30)
        result["released_before_timeout"] = len(released_early)
        result["released_after_timeout"] = len(released)
        result["actor_processes"] = len(all_pids)
        result["actor_processes_left"] = len(left)
        result["rss_given_back_mb"] = round(sum(p["total_mb"] for p in per_project), 1)
        result["live_projects_after_release"] = len(rt.live_projects())
        _say(f"released {len(released)} idle projects; {len(left)} of {len(all_pids)} actor processes left")

        t0 = time.perf_counter()
        after = {n: sorted(m.id for m in pipe.recall(RecallRequest(project=n, query=QUESTION, passive=True)).memories)
                 for n in names}
        result["comeback_s_per_project"] = round((time.perf_counter() - t0) / projects, 2)
        result["same_answers_after_comeback"] = sum(1 for n in names if before[n] == after[n])
        result["live_projects_after_comeback"] = len(rt.live_projects())
    finally:
        rt.shutdown()
    return result


def render(r: dict[str, Any], command: str) -> str:
    m = r["machine"]
    lines = [
        "# Idle projects: the memory they hold, and that it is given back",
        "",
        f"Command: `{command}`",
        "",
        f"{r['projects']} projects on a local Ray, each with {r['turns_per_project']} turns of the example history "
        f"observed and distilled. Machine: {m.get('nproc')} cores, load average {m.get('loadavg_start', ['?'])[0]} "
        "at the start (shared).",
        "",
        "| project | LogActor RSS MiB | EngineActor RSS MiB | total RSS MiB | total USS MiB |",
        "| --- | --- | --- | --- | --- |",
    ]
    for p in r["live"]:
        lines.append(f"| {p['project']} | {p['log_rss_mb']} | {p['engine_rss_mb']} | {p['total_mb']} | {p['uss_mb']} |")
    s = r["rss_per_project_mb"]
    lines += [
        "",
        f"RSS per live project (its two actor processes): mean {s['mean']} MiB (min {s['min']}, max {s['max']}). "
        "RSS counts shared pages in each process, so the sum over processes overstates what the machine loses; "
        f"the unique set size (USS, memory only that process holds) is {r['uss_per_project_mb']} MiB per project.",
        "",
        f"Released before the idle timeout: {r['released_before_timeout']} projects. After "
        f"{r['idle_s']:g} s idle, `release_idle()` released {r['released_after_timeout']} projects in "
        f"{r['release_s']} s; {r['actor_processes_left']} of their {r['actor_processes']} actor processes were still "
        f"running afterwards; live projects {r['live_projects_before']} -> {r['live_projects_after_release']} "
        f"(about {r['rss_given_back_mb']} MiB of actor RSS given back).",
        "",
        f"Back on demand: one recall per project brought its actors back from the stores in "
        f"{r['comeback_s_per_project']} s per project; {r['same_answers_after_comeback']} of {r['projects']} recalls "
        f"found the same memories as before the release; live projects now {r['live_projects_after_comeback']}.",
    ]
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace) -> int:
    out = report_dir(args)
    with tempfile.TemporaryDirectory(prefix="dynmem-idle-", dir=getattr(args, "data_dir", None)) as tmp:
        res = run(Path(tmp), projects=args.projects, idle_s=args.idle_s, turns=args.turns,
                  config=getattr(args, "config", None))
    import ray

    ray.shutdown()
    command = f"dynmem bench idle --projects {args.projects} --idle-s {args.idle_s:g} --turns {args.turns}"
    if out is not None:
        (out / "idle.json").write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
        (out / "idle.md").write_text(render(res, command), encoding="utf-8")
        _say(f"wrote {out / 'idle.md'}")
    if getattr(args, "json", False):
        print(json.dumps(res))
    else:
        print(render(res, command))
    ok = (res["actor_processes_left"] == 0 and res["released_after_timeout"] == res["projects"]
          and res["released_before_timeout"] == 0 and res["same_answers_after_comeback"] == res["projects"])
    return 0 if ok else 1
