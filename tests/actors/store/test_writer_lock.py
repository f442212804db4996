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
