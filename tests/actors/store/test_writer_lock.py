"""One writer per data directory: a second writer is refused with a message naming the first."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.store.writer_lock import WriterLock
from actors.wire import ForgetRequest, RecallRequest, RememberRequest
from engine.errors import StoreLocked


def test_a_second_writer_in_the_same_process_is_refused_until_the_first_shuts_down(tmp_path: Path) -> None:
    first = Runtime(tmp_path, load_settings(), use_ray=False)
    try:
        with pytest.raises(StoreLocked) as err:
            Runtime(tmp_path, load_settings(), use_ray=False)
        assert f"pid {__import__('os').getpid()}" in str(err.value) and err.value.code == "store_locked"
    finally:
        first.shutdown()
    Runtime(tmp_path, load_settings(), use_ray=False).shutdown()  # positive control: free again


HOLDER = """
import sys, time
from pathlib import Path
from actors.store.writer_lock import WriterLock
lock = WriterLock(Path(sys.argv[1])).acquire()
print("held", flush=True)
time.sleep(60)
"""


def test_a_writer_in_another_process_is_named_with_its_pid_and_command(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), "--replay-like"], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(StoreLocked) as err:
            Runtime(tmp_path, load_settings(), use_ray=False)
        assert f"pid {proc.pid}" in str(err.value) and "--replay-like" in str(err.value)
    finally:
        proc.kill()
        proc.wait()
    # The kernel released the lock with the killed process: no stale lock after kill -9.
    deadline = time.monotonic() + 10
    while True:
        try:
            WriterLock(tmp_path).acquire().release()
            break
        except StoreLocked:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_a_forget_is_seen_by_the_next_writer_and_never_undone_behind_its_back(tmp_path: Path) -> None:
    a = Runtime(tmp_path, load_settings(), use_ray=False)
    pa = Pipeline(a)
    mid = pa.remember(RememberRequest(project="p", text="The API runs on port 8080.")).memory_ids[0]
    with pytest.raises(StoreLocked):  # the forget of another terminal cannot open the stores behind A
        Runtime(tmp_path, load_settings(), use_ray=False)
    a.shutdown()
    b = Runtime(tmp_path, load_settings(), use_ray=False)
    try:
        pb = Pipeline(b)
        query = RecallRequest(project="p", query="which port does the API run on?", passive=True)
        assert "8080" in pb.recall(query).context  # positive control: B sees what A stored
        pb.forget(ForgetRequest(project="p", memory_id=mid))
        assert "8080" not in pb.recall(query).context
    finally:
        b.shutdown()


# A long-running writer (a replay in another terminal, without a sidecar): it stores the port,
# keeps its stores open, and writes again when told to (a line on stdin), from its own tables.
WRITER = """
import sys
from pathlib import Path
from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.wire import RememberRequest
rt = Runtime(Path(sys.argv[1]), load_settings(), use_ray=False)
pipe = Pipeline(rt)
print(pipe.remember(RememberRequest(project="p", text="The API runs on port 8080.")).memory_ids[0], flush=True)
sys.stdin.readline()
pipe.remember(RememberRequest(project="p", text="The API runs on port 8080."))  # what A relearns from its tables
rt.shutdown()
print("done", flush=True)
"""


def test_the_cli_second_writer_is_refused_reads_use_a_snapshot_and_a_forget_stays_forgotten(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's scenario: a long writer A, a `dynmem forget` B in another terminal. B used to
    retract the memory behind A's back, and A then logged it again from its cached table."""
    import json

    from bridge.cli import main

    monkeypatch.setenv("DYNMEM_EMBEDDER", "hash")
    data = tmp_path / "data"
    a = subprocess.Popen([sys.executable, "-c", WRITER, str(data)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env={**__import__("os").environ, "DYNMEM_EMBEDDER": "hash"})

    def cli(*argv: str) -> tuple[int, dict[str, object]]:
        capsys.readouterr()
        rc = main([*argv, "--data-dir", str(data), "--project", "p", "--json"])
        return rc, json.loads(capsys.readouterr().out)

    try:
        assert a.stdout is not None and a.stdin is not None
        mid = a.stdout.readline().strip()
        assert mid, "the writer did not start"
        rc, doc = cli("forget", mid)
        assert rc == 1 and doc["code"] == "store_locked"
        assert f"pid {a.pid}" in str(doc["error"]) and "dynmem serve" in str(doc["error"])
        # Reads stay possible while A writes: a snapshot, and the memory is (still) there.
        rc, doc = cli("memories", "list")
        assert rc == 0 and [m["id"] for m in doc["memories"]] == [mid]  # type: ignore[index]
        a.stdin.write("go\n")
        a.stdin.flush()
        assert a.stdout.readline().strip() == "done"
        assert a.wait(timeout=60) == 0
    finally:
        if a.poll() is None:
            a.kill()
            a.wait()
    # A is gone: B forgets, and nothing brings the memory back for a fresh process.
    rc, doc = cli("forget", mid)
    assert rc == 0 and mid in doc["retired"]  # type: ignore[operator]
    rc, doc = cli("recall", "which port does the API run on?")
    assert rc == 0 and "8080" not in str(doc["context"])
    rc, doc = cli("memories", "list", "--state", "active")
    assert rc == 0 and all("8080" not in str(m["text"]) for m in doc["memories"])  # type: ignore[union-attr]
