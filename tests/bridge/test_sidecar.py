"""The real sidecar: ``dynmem serve --detach`` in a subprocess with its own Ray, then ``dynmem stop``.

Marked ``e2e`` (the autouse fixture then allows Ray). The sidecar starts its own Ray in
its own process; only the processes of that sidecar (found through its pid) are checked
and, on failure, cleaned up: a Ray instance shared by other tests of the session is left alone.
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

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(180)]

PORT_QUERY = "which port does the dev server run on?"


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


def _mentioning(text: str) -> list[Any]:
    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if any(text in part for part in (p.info["cmdline"] or [])) and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.NoSuchProcess:
            pass
    return found


@pytest.fixture
def sidecar_dir(tmp_path: Path) -> Iterator[Path]:
    data = tmp_path / "sidecar-data"
    data.mkdir()
    seen: list[Any] = []
    yield data
    # Safety net for a failed test: stop this sidecar and nothing else.
    from bridge.server import stop_sidecar

    info = data / "sidecar.json"
    if info.exists():
        try:
            seen = _tree(int(json.loads(info.read_text())["pid"]))
        except (ValueError, KeyError, OSError):
            pass
        stop_sidecar(data, timeout_s=20)
    for p in _alive(seen):
        p.kill()


def _poll_recall(client: httpx.Client, project: str, needle: str, timeout_s: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    doc: dict[str, Any] = {}
    while time.monotonic() < deadline:
        r = client.post("/v1/recall", json={"project": project, "query": PORT_QUERY, "passive": True})
        assert r.status_code == 200, r.text
        doc = r.json()
        if needle in doc["context"]:
            return doc
        time.sleep(0.3)
    raise AssertionError(f"the background worker never distilled {needle!r} for {project}: {doc}")


def test_sidecar_serves_projects_and_stops_without_leftovers(sidecar_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t0 = time.monotonic()
    rc = main(["serve", "--detach", "--json", "--data-dir", str(sidecar_dir)])
    out = capsys.readouterr().out
    assert rc == 0, (sidecar_dir / "sidecar.log").read_text(errors="replace")[-2000:]
    printed = json.loads(out)

    info = json.loads((sidecar_dir / "sidecar.json").read_text())
    assert {"url", "pid", "token_file"} <= set(info)
    assert info["url"] == printed["url"] and info["url"].startswith("http://127.0.0.1:")
    token = Path(info["token_file"]).read_text().strip()
    assert httpx.get(info["url"] + "/v1/health", timeout=5).json()["ok"] is True
    assert httpx.get(info["url"] + "/v1/stats", params={"project": "x"}, timeout=5).status_code == 401

    procs = _tree(int(info["pid"]))
    assert procs, "the sidecar pid is not running"
    names = " ".join(p.name() for p in procs)
    assert "raylet" in names or "gcs_server" in names, names  # its own Ray, under its own pid

    # a second --detach finds the running sidecar instead of starting another
    assert main(["serve", "--detach", "--json", "--data-dir", str(sidecar_dir)]) == 0
    assert json.loads(capsys.readouterr().out)["pid"] == info["pid"]

    alpha, beta = "/home/dev/alpha", "/home/dev/beta"
    with httpx.Client(base_url=info["url"], headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        for project, port in ((alpha, "8080"), (beta, "9090")):
            r = client.post("/v1/observe", json={"project": project, "session": "s1",
                                                 "user": f"the dev server runs on port {port}",
                                                 "assistant": f"Noted: port {port}.", "request_id": f"{project}-1"})
            assert r.status_code == 200 and r.json()["created"] is True, r.text
        ra = _poll_recall(client, alpha, "8080")
        rb = _poll_recall(client, beta, "9090")
        assert "9090" not in ra["context"] and "8080" not in rb["context"]
        assert {m["scope"] for m in ra["memories"]} == {f"project:{alpha}"}
        assert {m["scope"] for m in rb["memories"]} == {f"project:{beta}"}

    procs = _tree(int(info["pid"]))  # the whole tree now, with Ray's workers
    rc = main(["stop", "--json", "--data-dir", str(sidecar_dir)])
    assert rc == 0 and json.loads(capsys.readouterr().out) == {"stopped": True}
    assert not (sidecar_dir / "sidecar.json").exists()

    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (_alive(procs) or _mentioning(str(sidecar_dir))):
        time.sleep(0.2)
    assert _alive(procs) == [], [(p.pid, p.name()) for p in _alive(procs)]
    assert _mentioning(str(sidecar_dir)) == []
    with pytest.raises(httpx.TransportError):
        httpx.get(info["url"] + "/v1/health", timeout=2)

    # stopping again is harmless
    assert main(["stop", "--json", "--data-dir", str(sidecar_dir)]) == 0
    assert json.loads(capsys.readouterr().out) == {"stopped": False}
    assert time.monotonic() - t0 < 90
