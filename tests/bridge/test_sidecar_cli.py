"""A real sidecar serves every CLI command, announces itself per user, and stops itself when idle.

One ``dynmem serve --detach`` (its own Ray) with a 6-second idle limit
(``DYNMEM_RUNTIME_IDLE_STOP_MIN=0.1``): while it runs, commands that used to refuse ("stop it
first") work through it, a CLI recall is passive, a read of an unknown project fails without
creating anything; then, with no request, it stops by itself and leaves no process behind.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from bridge.cli import main

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(240)]


def _tree(pid: int) -> list[Any]:
    try:
        proc = psutil.Process(pid)
        return [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _alive(procs: list[Any]) -> list[Any]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv("DYNMEM_RUNTIME_IDLE_STOP_MIN", "0.1")
    monkeypatch.setenv("DYNMEM_HOME", str(folder))
    monkeypatch.delenv("DYNMEM_PROJECT", raising=False)
    seen: list[Any] = []
    yield folder
    from bridge.server import stop_sidecar

    info = folder / "sidecar.json"
    if info.exists():
        try:
            seen = _tree(int(json.loads(info.read_text())["pid"]))
        except (ValueError, KeyError, OSError):
            pass
        stop_sidecar(folder, timeout_s=20)
    for p in _alive(seen):
        p.kill()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    rc = main([*argv, "--json"])
    cap = capsys.readouterr()
    doc = json.loads(cap.out) if cap.out.strip() else None
    if rc != 0 and isinstance(doc, dict) and set(doc) == {"error", "code"}:
        return rc, None, doc["error"]  # with --json, an error is the one JSON document on stdout
    return rc, doc, cap.err


def test_every_command_runs_through_the_sidecar_which_stops_when_idle(
        data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "api").mkdir(parents=True)
    monkeypatch.chdir(repo / "src" / "api")  # the default project is the repository, from a subfolder

    rc, info, err = run(capsys, "serve", "--detach")
    assert rc == 0, err + (data / "sidecar.log").read_text(errors="replace")[-2000:]
    announced = json.loads((Path(os.environ["DYNMEM_STATE_DIR"]) / "sidecar.json").read_text())
    assert announced["pid"] == info["pid"] and announced["data_dir"] == str(data)
    procs = _tree(int(info["pid"]))
    token = Path(info["token_file"]).read_text().strip()

    rc, doc, err = run(capsys, "remember", "The API server listens on port 7070.")
    assert rc == 0, err
    rc, doc, _ = run(capsys, "projects")
    assert [p["project"] for p in doc["projects"]] == [str(repo)] and doc["projects"][0]["current"] is True

    # commands that used to refuse while a sidecar ran
    export = tmp_path / "mem.jsonl"
    rc, doc, err = run(capsys, "export", str(export))
    assert rc == 0 and doc["memories"] == 1, err
    rc, doc, err = run(capsys, "import", str(export), "--project", "other")
    assert rc == 0 and doc["imported"] == 1, err
    rc, doc, err = run(capsys, "jobs", "list")
    assert rc == 0 and isinstance(doc["jobs"], list), err
    rc, doc, err = run(capsys, "repairs", "list")
    assert rc == 0 and doc["repairs"] == [], err

    # a CLI recall is passive: a question the log holds (asked in an earlier session, quoted by
    # the shell) starts no repair; --live does (positive control), and repair never stores the question
    rc, doc, err = run(capsys, "observe", "--user", '"What day do deploys go out?"', "--assistant", "I do not know.")
    assert rc == 0, err
    rc, doc, err = run(capsys, "recall", "What day do deploys go out?")
    assert rc == 0 and doc["abstained"], err
    with httpx.Client(base_url=info["url"], headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        def repair_jobs() -> int:
            counts = client.get("/v1/jobs", params={"project": str(repo)}).json()["jobs"]
            return sum(counts.get("repair", {}).values())

        assert repair_jobs() == 0
        rc, doc, err = run(capsys, "recall", "What day do deploys go out?", "--live")
        assert rc == 0, err
        assert repair_jobs() == 1
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and client.get("/v1/jobs", params={"project": str(repo)}).json()[
                "jobs"].get("repair", {}).get("done", 0) < 1:
            time.sleep(0.5)
        assert client.get("/v1/jobs", params={"project": str(repo)}).json()["jobs"]["repair"].get("done") == 1
    rc, doc, err = run(capsys, "memories", "list")
    assert rc == 0 and not any("?" in m["text"] or "deploys" in m["text"] for m in doc["memories"]), doc

    # an unknown project: error, exit 1, nothing created (positive control: the known one answers)
    before = sorted(p.name for p in (data / "projects").iterdir())
    rc, doc, err = run(capsys, "memories", "list", "--project", "typo")
    assert rc == 1 and "no project named 'typo'" in err and doc is None
    assert sorted(p.name for p in (data / "projects").iterdir()) == before
    rc, doc, err = run(capsys, "memories", "list")
    assert rc == 0 and [m["text"] for m in doc["memories"]] == ["The API server listens on port 7070."]

    # idle: it stops by itself, with its Ray, and withdraws its announcement
    procs = _tree(int(info["pid"])) or procs
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and _alive(procs):
        time.sleep(0.5)
    assert _alive(procs) == [], [(p.pid, p.name()) for p in _alive(procs)]
    assert not (Path(os.environ["DYNMEM_STATE_DIR"]) / "sidecar.json").exists()
    assert "idle for 0.1 min; stopping" in (data / "sidecar.log").read_text(errors="replace")
