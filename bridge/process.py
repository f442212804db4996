"""Process identity for safe process control (``dynmem stop`` and the orphan reaper).

A pid alone names nothing for long: ``sidecar.json`` survives a ``kill -9`` and the kernel
reuses pids. So the sidecar records who it is (pid, the kernel's start time of that pid,
the boot it started in) and the name of the Ray session it started. Before any signal:

- ``stop`` signals the recorded pid only if a process with that pid *and that start time*
  runs in the same boot (``ProcessIdentity.matches``);
- the reaper kills only processes whose command line names the recorded Ray session
  (``session_2026-12-01_02-33-10_123456_4242``: unique per ``ray.init``), and never the
  process that runs the reaper or its parent. A file without a session (an older format, or a
  sidecar that joined someone else's cluster) makes the reaper touch nothing.

Linux ``/proc`` only; elsewhere every identity check fails, so nothing is ever signalled.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

PROC = Path("/proc")


class ProcessIdentity(BaseModel):
    """Who a process is: its pid, the kernel's start time of that pid, and the boot."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    pid: int = Field(description="process id")
    start_ticks: int = Field(description="start time in clock ticks after boot (/proc/PID/stat field 22)")
    boot_id: str = Field(description="/proc/sys/kernel/random/boot_id of the boot it ran in")

    def matches(self) -> bool:
        """Whether this very process still runs (same pid, same start time, same boot, not a zombie)."""
        now = identity_of(self.pid)
        return now is not None and now == self


def _stat_fields(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (field 3 onwards), or None."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    _, sep, rest = stat.rpartition(")")  # the command name may hold spaces and parentheses
    return rest.split() if sep else None


def boot_id() -> str:
    try:
        return (PROC / "sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def identity_of(pid: int) -> ProcessIdentity | None:
    """The identity of a running, non-zombie ``pid``; None if there is no such process."""
    if pid <= 0:
        return None
    fields = _stat_fields(pid)
    if not fields or len(fields) < 20 or fields[0] == "Z":
        return None
    boot = boot_id()
    if not boot:
        return None
    return ProcessIdentity(pid=pid, start_ticks=int(fields[19]), boot_id=boot)


def cmdline(pid: int) -> list[str]:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def session_processes(session: str) -> list[ProcessIdentity]:
    """Running processes of the Ray session ``session``: those whose command line names it
    (raylet, GCS, log monitor...), those holding a file of its directory open (Ray's workers
    rename themselves ``ray::Name`` but write their logs there), and every process below them.

    A session name is matched as a whole path component or option value, so that
    ``session_x_1`` never matches ``session_x_12``.
    """
    if not session.startswith("session_") or len(session) < len("session_") + 8:
        return []  # too vague to identify anything: touch nothing
    mine = {os.getpid(), os.getppid()}
    parents: dict[int, int] = {}
    roots: list[int] = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        fields = _stat_fields(pid)
        if fields and len(fields) > 1:
            parents[pid] = int(fields[1])
        if pid not in mine and (any(_names_session(part, session) for part in cmdline(pid))
                                or _holds_session_file(pid, session)):
            roots.append(pid)
    chosen = set(roots)
    grew = True
    while grew:  # descendants of the session's processes
        grew = False
        for pid, ppid in parents.items():
            if ppid in chosen and pid not in chosen and pid not in mine:
                chosen.add(pid)
                grew = True
    found = [identity_of(pid) for pid in sorted(chosen)]
    return [i for i in found if i is not None]


def _holds_session_file(pid: int, session: str) -> bool:
    """Whether ``pid`` has a file of the session's directory open (its log files: Ray's
    workers keep ``.../session_x/logs/worker-*.out`` as stdout, even once orphaned)."""
    try:
        fds = list((PROC / str(pid) / "fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if f"/{session}/" in target:
            return True
    return False


def _names_session(arg: str, session: str) -> bool:
    at = arg.find(session)
    while at >= 0:
        end = at + len(session)
        before_ok = at == 0 or arg[at - 1] in "/=' \""
        after_ok = end == len(arg) or arg[end] in "/' \""
        if before_ok and after_ok:
            return True
        at = arg.find(session, at + 1)
    return False


def signal_if_same(ident: ProcessIdentity, sig: int) -> bool:
    """Send ``sig`` to ``ident.pid`` only if it is still that process; True if sent."""
    try:
        # A pidfd pins the process: checked after opening, the pid cannot be reused before the signal.
        fd = os.pidfd_open(ident.pid)
    except OSError:
        return False
    try:
        if not ident.matches():
            return False
        signal.pidfd_send_signal(fd, sig)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def kill_session(session: str) -> list[int]:
    """SIGKILL every process of the Ray session ``session``; the pids killed."""
    return [p.pid for p in session_processes(session) if signal_if_same(p, signal.SIGKILL)]
