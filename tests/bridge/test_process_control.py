"""``dynmem stop`` and the orphan reaper signal only their own processes (issue 17, failure 2).

Each test starts its own child processes (``sleep`` stand-ins) and only ever kills those.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.process import ProcessIdentity, identity_of, session_processes
from bridge.server import SIDECAR_FILE, reap_orphans, running_sidecar, stop_sidecar

SLEEPER = "import signal, sys, time; signal.signal(signal.SIGTERM, lambda *a: sys.exit(0)); time.sleep(120)"


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for p in procs:  # only the processes this test started
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)


def _spawn(children: list[subprocess.Popen[bytes]], *extra: str) -> subprocess.Popen[bytes]:
    p = subprocess.Popen([sys.executable, "-c", SLEEPER, *extra])
    children.append(p)
    deadline = time.monotonic() + 10
    while identity_of(p.pid) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # the SIGTERM handler is installed
    return p


def _write(data: Path, **info: object) -> None:
    (data / SIDECAR_FILE).write_text(json.dumps({"url": "http://127.0.0.1:9", "token_file": "x", **info}))


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stop_never_signals_an_unrelated_process_named_in_a_stale_file(data_dir: Path, children: list[subprocess.Popen[bytes]]) -> None:
    stranger = _spawn(children)
    # the pid of an unrelated process, as after a kill -9 and pid reuse: no identity, or another start time
    _write(data_dir, pid=stranger.pid)
    assert stop_sidecar(data_dir, timeout_s=2) is False
    ident = identity_of(stranger.pid)
    assert ident is not None
    _write(data_dir, pid=stranger.pid, pid_start_ticks=ident.start_ticks - 1, boot_id=ident.boot_id)
    assert stop_sidecar(data_dir, timeout_s=2) is False
    time.sleep(0.3)
    assert stranger.poll() is None, "stop signalled a process that is not the sidecar"
    assert not (data_dir / SIDECAR_FILE).exists()  # the stale file is gone

    # positive control: the same process, recorded with its real identity, is stopped
    _write(data_dir, pid=stranger.pid, pid_start_ticks=ident.start_ticks, boot_id=ident.boot_id)
    assert stop_sidecar(data_dir, timeout_s=10) is True
    assert stranger.wait(timeout=10) == 0  # it got SIGTERM (its handler exits 0)


def test_reaper_kills_only_processes_of_the_recorded_ray_session(data_dir: Path, children: list[subprocess.Popen[bytes]]) -> None:
    session = "session_2026-12-01_02-33-10_123456_4242"
    ours = _spawn(children, f"--session-dir=/tmp/ray/{session}")
    near = _spawn(children, f"--session-dir=/tmp/ray/{session}7")  # another session sharing a prefix
    has_ray_word = _spawn(children, "raylet-lookalike", "ray")  # what the old reaper matched on
    # a dead sidecar whose old-style pid list names an unrelated "ray" process
    _write(data_dir, pid=_dead_pid(), pid_start_ticks=1, boot_id="x", ray_session=session,
           ray_pids=[has_ray_word.pid, near.pid])
    assert running_sidecar(data_dir) is None
    killed = reap_orphans(data_dir)
    assert killed == [ours.pid]
    assert ours.wait(timeout=10) != 0  # SIGKILLed
    assert near.poll() is None and has_ray_word.poll() is None
    assert not (data_dir / SIDECAR_FILE).exists()


def test_reaper_touches_nothing_without_a_recorded_session(data_dir: Path, children: list[subprocess.Popen[bytes]]) -> None:
    stranger = _spawn(children, "ray")
    _write(data_dir, pid=_dead_pid(), ray_pids=[stranger.pid])  # the old file format
    assert reap_orphans(data_dir) == []
    time.sleep(0.2)
    assert stranger.poll() is None
    # positive control: with its session recorded, a process of that session is reaped
    session = "session_2026-12-01_02-40-00_000001_99"
    ours = _spawn(children, f"--session-name={session}")
    _write(data_dir, pid=_dead_pid(), ray_session=session)
    assert reap_orphans(data_dir) == [ours.pid]
    assert stranger.poll() is None


def test_a_live_sidecar_is_not_reaped_and_its_identity_matches(data_dir: Path) -> None:
    me = identity_of(os.getpid())
    assert isinstance(me, ProcessIdentity) and me.matches()
    _write(data_dir, pid=me.pid, pid_start_ticks=me.start_ticks, boot_id=me.boot_id,
           ray_session="session_2026-12-01_02-33-10_123456_1")
    assert reap_orphans(data_dir) == []
    assert (data_dir / SIDECAR_FILE).exists()
    assert session_processes("session_") == []  # a vague name identifies nothing


def test_reaper_finds_workers_that_renamed_themselves_through_their_parent(data_dir: Path) -> None:
    # Ray's workers retitle themselves "ray::Name": only their parent names the session.
    session = "session_2026-12-01_03-00-00_000002_77"
    code = ("import subprocess, sys, time; c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']);"
            " print(c.pid, flush=True); time.sleep(120)")
    parent = subprocess.Popen([sys.executable, "-c", code, f"--session_dir=/tmp/ray/{session}"], stdout=subprocess.PIPE)
    try:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        _write(data_dir, pid=_dead_pid(), ray_session=session)
        assert sorted(reap_orphans(data_dir)) == sorted([parent.pid, worker])
        assert parent.wait(timeout=10) != 0
        deadline = time.monotonic() + 10
        while identity_of(worker) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert identity_of(worker) is None
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait(timeout=10)


def test_reaper_finds_orphaned_workers_by_the_session_log_they_write(data_dir: Path, tmp_path: Path,
                                                                      children: list[subprocess.Popen[bytes]]) -> None:
    # Once the sidecar and its raylet are gone, a worker is an orphan named "ray::A": only its
    # stdout, a log file in the session directory, says whose it is.
    session = "session_2026-12-01_03-10-00_000003_55"
    logs = tmp_path / "ray" / session / "logs"
    logs.mkdir(parents=True)
    other = tmp_path / "ray" / (session + "9") / "logs"
    other.mkdir(parents=True)
    with (logs / "worker-1.out").open("wb") as ours_out, (other / "worker-1.out").open("wb") as theirs_out:
        ours = subprocess.Popen([sys.executable, "-c", SLEEPER], stdout=ours_out)
        theirs = subprocess.Popen([sys.executable, "-c", SLEEPER], stdout=theirs_out)
    children.extend([ours, theirs])
    time.sleep(0.3)
    _write(data_dir, pid=_dead_pid(), ray_session=session)
    assert reap_orphans(data_dir) == [ours.pid]
    assert ours.wait(timeout=10) != 0 and theirs.poll() is None
