"""``dynmem bench chaos``: random actor kills during replays on Ray, checked against an
uninterrupted run (issue 17).

The bundled 178-turn history is copied into several projects and replayed on a local Ray
while a killer thread kills a random actor of the run's own ``Runtime`` (extraction,
adjudication, investigator, the index, a project's log or engine) every ``--interval`` seconds; rounds
repeat until ``--kills`` kills landed. Reported per run and in total: turns acknowledged,
lost (acknowledged but not in the log), duplicated (logged twice), dead jobs, and memories
differing from the same history replayed in one process without faults. All must be zero.

Only actors this run created are killed, by handle (``ray.kill``); Ray restarts them.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import threading
import time
from pathlib import Path


from pydantic import BaseModel, ConfigDict

from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.replay import DEMO_HISTORY, replay_file
from engine.settings import Settings


class ChaosReport(BaseModel):
    model_config = ConfigDict(frozen=True)
    rounds: int
    kills: int
    killed: dict[str, int]
    turns_acked: int
    lost: int
    duplicated: int
    dead_jobs: int
    differing_memories: int
    seconds: float

    @property
    def clean(self) -> bool:
        return self.lost == self.duplicated == self.dead_jobs == self.differing_memories == 0


def _history(dest: Path, projects: int) -> tuple[Path, list[str]]:
    names = [f"chaos-{i}" for i in range(projects)]
    lines = [json.loads(x) for x in DEMO_HISTORY.read_text(encoding="utf-8").splitlines() if x.strip()]
    with dest.open("w", encoding="utf-8") as fh:
        for i, row in enumerate(lines):
            for name in names:  # interleaved, as a sidecar serving several projects sees them
                fh.write(json.dumps({**row, "project": name, "request_id": f"{name}-{i}"}) + "\n")
    return dest, names


def _memories(pipe: Pipeline, project: str) -> set[tuple[str, str, str]]:
    return {(m.key, m.belief, m.state.value) for m in pipe.memories(project)}


def _killer(rt: Runtime, stop: threading.Event, interval_s: float, budget: list[int], rng: random.Random,
            killed: dict[str, int]) -> None:
    import ray

    while not stop.wait(interval_s) and budget[0] > 0:
        victims = rt.supervised_actors()
        kind, ref = rng.choice(victims)
        ray.kill(ref.target, no_restart=False)
        budget[0] -= 1
        killed[kind] = killed.get(kind, 0) + 1


def run(settings: Settings, workdir: Path, kills: int = 20, projects: int = 3, interval_s: float = 0.8,
        seed: int = 0, max_rounds: int = 10) -> ChaosReport:
    from actors.launch import init_ray

    init_ray(num_cpus=2)
    rng = random.Random(seed)
    history, names = _history(workdir / "history.jsonl", projects)
    base_rt = Runtime(workdir / "baseline", settings, use_ray=False)
    try:
        base_pipe = Pipeline(base_rt)
        replay_file(base_pipe, DEMO_HISTORY)
        baseline = _memories(base_pipe, "shop-api")
    finally:
        base_rt.shutdown()
    expected = len([x for x in DEMO_HISTORY.read_text(encoding="utf-8").splitlines() if x.strip()])
    t0 = time.perf_counter()
    budget = [kills]
    killed: dict[str, int] = {}
    acked = lost = duplicated = dead = differing = rounds = 0
    while budget[0] > 0 and rounds < max_rounds:
        rounds += 1
        rt = Runtime(workdir / f"round-{rounds}", settings, use_ray=True)
        try:
            pipe = Pipeline(rt)
            for name in names:  # the projects' actors exist from the start, so they can be killed too
                rt.log(name)
                rt.engine(name)
            stop = threading.Event()
            killer = threading.Thread(target=_killer, args=(rt, stop, interval_s, budget, rng, killed), daemon=True)
            killer.start()
            try:
                report = replay_file(pipe, history)
            finally:
                stop.set()
                killer.join()
            acked += report.new_turns
            dead += report.dead_jobs
            for name in names:
                logged = int(rt.log(name).last_turn())
                lost += max(0, expected - logged)
                duplicated += max(0, logged - expected)
                got = {(k, b, s) for k, b, s in _memories(pipe, name)}
                differing += len(got ^ baseline)
        finally:
            rt.shutdown()
    return ChaosReport(rounds=rounds, kills=kills - budget[0], killed=killed, turns_acked=acked, lost=lost,
                       duplicated=duplicated, dead_jobs=dead, differing_memories=differing,
                       seconds=round(time.perf_counter() - t0, 1))


def main(args: argparse.Namespace) -> int:
    settings = load_settings(Path(args.config) if getattr(args, "config", None) else None)
    with tempfile.TemporaryDirectory(prefix="dynmem-chaos-", dir=getattr(args, "data_dir", None)) as tmp:
        rep = run(settings, Path(tmp), kills=args.kills, projects=args.projects, interval_s=args.interval,
                  seed=args.seed)
    import ray

    ray.shutdown()
    line = (f"{rep.kills} kills over {rep.rounds} replay(s) in {rep.seconds} s ({rep.killed}): "
            f"{rep.turns_acked} turns acked, {rep.lost} lost, {rep.duplicated} duplicated, {rep.dead_jobs} dead jobs, "
            f"{rep.differing_memories} memories differing from an uninterrupted run")
    from eval.cli import report_dir

    out = report_dir(args)
    if out is not None:
        command = (f"dynmem bench chaos --kills {args.kills} --projects {args.projects} --interval {args.interval:g} "
                   f"--seed {args.seed}")
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(rep.killed.items()))
        (out / "chaos.json").write_text(json.dumps(rep.model_dump(), indent=2) + "\n", encoding="utf-8")
        (out / "chaos.md").write_text(
            "# Chaos: random actor kills during replays on Ray\n\n"
            f"Command: `{command}`\n\n"
            f"The example history copied into {args.projects} projects, replayed on a local Ray while a random actor "
            f"of the run (extraction, adjudication, investigator, index, a project's log or engine) is killed every "
            f"{args.interval:g} s; Ray restarts it.\n\n"
            "| kills | by kind | turns acked | lost | duplicated | dead jobs | memories differing | seconds |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- |\n"
            f"| {rep.kills} | {kinds} | {rep.turns_acked} | {rep.lost} | {rep.duplicated} | {rep.dead_jobs} "
            f"| {rep.differing_memories} | {rep.seconds} |\n", encoding="utf-8")
    if getattr(args, "json", False):
        print(json.dumps(rep.model_dump()))
    else:
        print(line)
    return 0 if rep.clean else 1


