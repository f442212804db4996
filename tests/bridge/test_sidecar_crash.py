"""A sidecar killed with ``kill -9`` in the middle of its work loses nothing: the next start
reaps the Ray processes it left behind, finishes every job exactly once, and serves the result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

DYNMEM = [sys.executable, "-m", "bridge.cli"]
LONG_TURN = ("ok quick dump before standup: the flaky checkout test is mostly timing, the banner copy needs another "
             "pass, oh and the on-call pager rotation lives in the ops/rotations.yaml file, Ramesh maintains it, "
             "and the migrations took a while on staging today")


def cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DYNMEM, *args, "--data-dir", str(data)], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[2])


def with_home(data: Path) -> list[psutil.Process]:
    """Processes started for this data directory (Ray's workers inherit the sidecar's command line or env)."""
    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if str(data) in " ".join(p.info["cmdline"] or []) and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            pass
    return found


def test_a_killed_sidecar_loses_no_job_and_applies_each_once(tmp_path: Path) -> None:
    data = tmp_path / "crash-data"
    config = tmp_path / "fast-lease.toml"
    config.write_text("[runtime]\nlease_s = 3.0\n")  # a dead worker's lease runs out quickly
    first = cli(data, "serve", "--detach", "--json", "--config", str(config))
    assert first.returncode == 0, first.stderr
    info = json.loads(first.stdout)
    token = Path(info["token_file"]).read_text().strip()
    h = {"Authorization": f"Bearer {token}"}
    turns = [("the API listens on port 8080", "Noted."), (LONG_TURN, "Thanks."),
             ("the staging host is stage-a.example.net", "OK."),
             ("no, the staging host is stage-b.example.net", "Corrected."), ("thanks", "Sure.")]
    with httpx.Client(base_url=info["url"], headers=h, timeout=30) as c:
        for i, (u, a) in enumerate(turns):
            r = c.post("/v1/observe", json={"project": "p", "session": "s", "user": u, "assistant": a,
                                           "request_id": f"t{i}"})
            assert r.status_code == 200, r.text
        assert c.post("/v1/miss", json={"project": "p", "query": "where is the pager rotation kept?",
                                        "tool": "log_search"}).status_code == 200
    from bridge.process import session_processes

    session = json.loads((data / "sidecar.json").read_text())["ray_session"]
    ray_pids = [p.pid for p in session_processes(session)]  # every process of its Ray, workers included
    os.kill(info["pid"], signal.SIGKILL)  # mid-work: the turns are acknowledged, the jobs are not done
    time.sleep(1)
    assert any(psutil.pid_exists(p) for p in ray_pids)  # kill -9 left Ray processes behind

    again = cli(data, "serve", "--detach", "--json", "--config", str(config))
    assert again.returncode == 0, again.stderr
    info2 = json.loads(again.stdout)
    assert not [p for p in ray_pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    token = Path(info2["token_file"]).read_text().strip()
    deadline = time.time() + 420
    block, counts = "", {}
    with httpx.Client(base_url=info2["url"], headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
        while time.time() < deadline:
            block = c.post("/v1/recall", json={"project": "p", "query": "where is the pager rotation kept?",
                                               "passive": True}).json()["context"]
            host = c.post("/v1/recall", json={"project": "p", "query": "what is the staging host?",
                                              "passive": True}).json()["context"]
            counts = c.get("/v1/jobs", params={"project": "p"}).json()["jobs"]
            live = sum(n for kind in counts.values() for st, n in kind.items() if st in ("pending", "running"))
            if "rotations.yaml" in block and "stage-b" in host and live == 0:
                break
            time.sleep(1)
    assert "rotations.yaml" in block, counts  # the job counts say where it stopped
    assert "stage-b.example.net" in host and "stage-a.example.net" not in host
    assert cli(data, "stop").returncode == 0

    jobs = json.loads(cli(data, "jobs", "list", "--project", "p", "--json").stdout)["counts"]
    assert set(jobs["extract"]) == {"done"} and jobs["extract"]["done"] == len(turns)
    assert set(jobs["repair"]) == {"done"}
    repairs = json.loads(cli(data, "repairs", "list", "--project", "p", "--json").stdout)["repairs"]
    assert len(repairs) == jobs["repair"]["done"]  # one investigation per job, none applied twice
    memories = json.loads(cli(data, "memories", "list", "--project", "p", "--state", "active", "--json").stdout)["memories"]
    texts = [m["text"] for m in memories]
    assert len(texts) == len(set(texts)) and texts
    assert with_home(data) == []  # nothing of either sidecar is left
