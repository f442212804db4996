"""The sidecar: ``BridgeServer`` runs uvicorn + FastAPI inside an async Ray actor (the
BridgeActor), with a background worker that drains extraction and adjudication jobs.

``serve()`` is ``dynmem serve``: it starts Ray, the BridgeActor, writes ``sidecar.json``
and, on SIGTERM/SIGINT (``dynmem stop``), closes the stores and shuts Ray down so that no
process is left behind.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from actors.launch import Runtime, init_ray, on_data_node
from actors.pipeline import Pipeline
from bridge.admission import wait_while
from bridge.auth import REVIEW_TOKEN_FILE, TOKEN_FILE
from bridge.process import ProcessIdentity, identity_of, kill_session, signal_if_same
from engine.errors import ServiceUnavailable
from engine.settings import Settings

SIDECAR_FILE = "sidecar.json"
log = logging.getLogger("dynmem.sidecar")
#: Seconds between two checks of the idle time (the stop happens within this after the limit).
IDLE_CHECK_S = 5.0


def runtime_dir(environ: dict[str, str] | None = None) -> Path:
    """Where the user's running sidecar announces itself, whatever its data directory:
    ``$DYNMEM_STATE_DIR``, else ``$XDG_STATE_HOME/dynmem`` (``~/.local/state/dynmem``).

    The opencode plugin reads ``<runtime_dir>/sidecar.json`` first, so that one sidecar per
    user serves every opencode, even when ``DYNMEM_HOME`` differs between environments.
    Tests point it at a temporary folder so that parallel runs never see each other.
    """
    from actors.config import env

    if env("DYNMEM_STATE_DIR", environ):
        return Path(env("DYNMEM_STATE_DIR", environ)).expanduser()
    base = env("XDG_STATE_HOME", environ) or str(Path.home() / ".local" / "state")
    return Path(base) / "dynmem"


def user_sidecar() -> dict[str, Any] | None:
    """The sidecar.json announced in the runtime dir, if that sidecar answers."""
    return running_sidecar(runtime_dir())


def _announce(info: dict[str, Any]) -> bool:
    """Name this sidecar in the runtime dir unless another live one is named there already."""
    folder = runtime_dir()
    other = running_sidecar(folder)
    if other is not None and other.get("pid") != info.get("pid"):
        return False
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = folder / f"{SIDECAR_FILE}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(info), encoding="utf-8")
        os.chmod(tmp, 0o600)
        tmp.replace(folder / SIDECAR_FILE)
    except OSError as exc:  # the data dir's own sidecar.json still works
        log.warning("cannot announce the sidecar in %s: %s", folder, exc)
        return False
    return True


def _unannounce(pid: int) -> None:
    path = runtime_dir() / SIDECAR_FILE
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == pid:
            path.unlink()
    except (OSError, ValueError):
        pass


class Worker(threading.Thread):
    """Drains each project's jobs in the background.

    ``wake(project)`` (after an observe, a miss or a live recall) makes a project *hot*: it is
    polled every second until it has been idle for ``HOT_S``. Cold projects are swept every
    ``SWEEP_S`` only, for retries whose backoff ran out and leases left by a dead worker, so
    that a sidecar serving many idle projects does not write to their stores every second.
    """

    HOT_S = 60.0
    SWEEP_S = 30.0
    #: While recalls or observes are in flight, the worker waits (at most this long) before each
    #: batch and takes small batches: extraction yields the CPU and the actors to the agents'
    #: calls, and still moves on under a steady load (issue 17, failure 8).
    YIELD_MAX_S = 0.5
    BUSY_BATCH = 4

    def __init__(self, pipe: Pipeline, projects: list[str], foreground_busy: Any = None) -> None:
        super().__init__(name="dynmem-worker", daemon=True)
        self.pipe = pipe
        self.foreground_busy = foreground_busy or (lambda: False)
        self.projects = set(projects)
        self.hot: dict[str, float] = {p: time.monotonic() for p in projects}  # a start sweeps everything
        self.event = threading.Event()
        self.stopping = False
        self.lock = threading.Lock()
        self._last_sweep = time.monotonic()
        self.in_batch = False  # a batch of jobs is being done right now
        self.last_work = time.monotonic()  # when a batch last did something

    def wake(self, project: str) -> None:
        with self.lock:
            self.projects.add(project)
            self.hot[project] = time.monotonic()
        self.event.set()

    def _due(self) -> list[str]:
        now = time.monotonic()
        with self.lock:
            sweep = now - self._last_sweep >= self.SWEEP_S
            if sweep:
                self._last_sweep = now
        if sweep:
            # Idle projects give their actors back; the sweep then covers live and hot projects
            # only (a released project had no pending job, and a new turn makes it hot again).
            self.pipe.rt.release_idle()
            with self.lock:
                return sorted(set(self.pipe.rt.live_projects()) | set(self.hot))
        with self.lock:
            for p, seen in list(self.hot.items()):
                if now - seen > self.HOT_S:
                    del self.hot[p]
            return sorted(self.hot)

    def run(self) -> None:
        while not self.stopping:
            self.event.wait(timeout=1.0)
            self.event.clear()
            for project in self._due():
                try:
                    while not self.stopping:
                        waited = wait_while(self.foreground_busy, self.YIELD_MAX_S)
                        busy = waited >= self.YIELD_MAX_S
                        with self.lock:  # decided with the idle check (``BridgeServer.stop_if_idle``)
                            if self.stopping:
                                break
                            self.in_batch = True
                        done, failed = self.pipe.pump(project, batch=self.BUSY_BATCH if busy else None)
                        judged = self.pipe.adjudicate(project, n=self.BUSY_BATCH if busy else 32,
                                                      pause=lambda: wait_while(self.foreground_busy, self.YIELD_MAX_S))
                        if done == 0:
                            judged += self.pipe.repair(project)
                        if done == failed == judged == 0:
                            break
                        with self.lock:
                            self.hot[project] = self.last_work = time.monotonic()
                except Exception:  # keep serving; the job stays leased and is retried after its lease
                    log.exception("worker: project %s", project)
                finally:
                    with self.lock:
                        self.in_batch = False


class BridgeServer:
    """Plain class of the BridgeActor: the runtime, the app, uvicorn and the worker."""

    def __init__(self, data_dir: str, settings: Settings, host: str = "127.0.0.1", port: int = 0,
                 use_ray: bool = True) -> None:
        self.data_dir = Path(data_dir)
        self.host, self.port = host, port
        self.runtime = Runtime(self.data_dir, settings, use_ray=use_ray)
        self.pipe = Pipeline(self.runtime)
        self.worker = Worker(self.pipe, self.runtime.projects_on_disk())
        self.server: Any = None
        self.app: Any = None
        self.thread: threading.Thread | None = None
        self.last_request = time.monotonic()

    async def start(self) -> str:
        import uvicorn

        from bridge.app import create_app

        app = create_app(self.pipe, self.data_dir, on_observe=self.worker.wake, on_request=self._seen)
        self.app = app
        self.worker.foreground_busy = app.state.foreground_busy
        # uvicorn serves on its own thread and event loop (uvloop and httptools when installed),
        # not on the actor's loop: there ``asyncio.run`` makes the server the loop's root task,
        # so anyio keeps its worker threads for the sync routes. On the actor's loop anyio took
        # each request's task as the root and stopped its workers with it: two new threads per
        # request (py-spy on the sidecar, issue 15).
        config = uvicorn.Config(app, host=self.host, port=self.port, log_level="warning", access_log=False,
                                lifespan="off")
        self.server = uvicorn.Server(config)
        failure: list[BaseException] = []

        def serve() -> None:
            import anyio.to_thread

            async def main() -> None:
                # Sync routes run in anyio's thread pool (40 by default): room for every admitted and
                # waiting call, so that admission (bridge/admission.py) decides, not a hidden queue.
                anyio.to_thread.current_default_thread_limiter().total_tokens = 128
                await self.server.serve()

            try:
                uvicorn_run(main, config)
            except BaseException as exc:  # reported by start(), below
                failure.append(exc)

        self.thread = threading.Thread(target=serve, name="dynmem-http", daemon=True)
        self.thread.start()
        for _ in range(500):
            if self.server.started:
                break
            if not self.thread.is_alive():
                if failure:
                    raise ServiceUnavailable(f"the HTTP server did not start: {failure[0]}") from failure[0]
                raise ServiceUnavailable("the HTTP server did not start")
            await asyncio.sleep(0.02)
        else:
            raise ServiceUnavailable("the HTTP server did not start")
        self.worker.start()
        self.worker.event.set()
        sock = self.server.servers[0].sockets[0].getsockname()
        return f"http://{self.host}:{sock[1]}"

    def _seen(self) -> None:  # any request counts as use (idle stop)
        self.last_request = time.monotonic()

    def idle_s(self) -> float:
        """Seconds without a request and without background work (0 while a batch of jobs is being done).

        A project stays *hot* (polled every second) for a while after its last work, but polling finds
        nothing to do then: only work done, or being done, keeps the sidecar from being idle."""
        with self.worker.lock:
            return self._idle_locked()

    def _idle_locked(self) -> float:
        if self.worker.in_batch:
            return 0.0
        return time.monotonic() - max(self.last_request, self.worker.last_work)

    def stop_if_idle(self, limit_s: float) -> bool:
        """Whether the sidecar has been idle for ``limit_s``; if so, the worker starts no other batch (decided
        under the worker's lock, so no batch can start between the check and the stop)."""
        with self.worker.lock:
            if self._idle_locked() < limit_s:
                return False
            self.worker.stopping = True
            return True

    async def stop(self) -> None:
        self.worker.stopping = True
        self.worker.event.set()
        if self.server is not None:
            self.server.should_exit = True
            if self.thread is not None:
                await asyncio.get_running_loop().run_in_executor(None, self.thread.join, 5)
        if self.app is not None:  # write (and acknowledge) the observes waiting before the stores close
            await asyncio.get_running_loop().run_in_executor(None, self.app.state.observer.stop, 10)
        await asyncio.get_running_loop().run_in_executor(None, self.worker.join, 5)
        self.runtime.shutdown()


def uvicorn_run(main: Any, config: Any) -> None:
    """Run ``main()`` in a new event loop on this thread, of the kind uvicorn picks (uvloop if installed)."""
    factory = config.get_loop_factory() if hasattr(config, "get_loop_factory") else None
    if factory is None:
        asyncio.run(main())
        return
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(main())


def _health(url: str, timeout_s: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/v1/health", timeout=timeout_s) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def running_sidecar(data_dir: Path) -> dict[str, Any] | None:
    """The sidecar.json of a sidecar that answers, else None."""
    path = Path(data_dir) / SIDECAR_FILE
    try:
        info: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or not _sidecar_alive(info):
        return None  # killed without cleaning up: its leftover actors may still answer, but nobody owns them
    return info if isinstance(info.get("url"), str) and _health(info["url"]) else None


def _recorded_identity(info: dict[str, Any]) -> ProcessIdentity | None:
    """The sidecar identity written in ``sidecar.json``; None for an older file without one."""
    try:
        return ProcessIdentity(pid=int(info["pid"]), start_ticks=int(info["pid_start_ticks"]),
                               boot_id=str(info["boot_id"]))
    except (KeyError, TypeError, ValueError):
        return None


def _sidecar_alive(info: dict[str, Any]) -> bool:
    """Whether the very process that wrote ``info`` still runs (not merely a process with its pid)."""
    ident = _recorded_identity(info)
    return ident is not None and ident.matches()


def reap_orphans(data_dir: Path) -> list[int]:
    """After a sidecar was killed (``kill -9``), stop the Ray processes it left behind.

    The sidecar records the name of the Ray session it started; when ``sidecar.json`` names
    a sidecar that no longer runs (its pid is gone, or now belongs to another process), the
    processes of that session, and only those, are killed and the file is removed.
    """
    path = Path(data_dir) / SIDECAR_FILE
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(info, dict) or _sidecar_alive(info):
        return []
    session = info.get("ray_session")
    killed = kill_session(session) if isinstance(session, str) else []
    path.unlink(missing_ok=True)
    return killed


def ray_session_name() -> str:
    """The session name of the Ray this process started (``session_<date>_<pid>``)."""
    import ray

    # Ray has no public accessor for its session name; the node object is the documented-in-code one.
    node = getattr(ray._private.worker, "_global_node", None)
    return str(getattr(node, "session_name", "") or "")


def serve(data_dir: Path, settings: Settings, host: str = "127.0.0.1", port: int = 0,
          address: str | None = None, ready: Any = print) -> int:
    """Run the sidecar in the foreground until SIGTERM or SIGINT."""
    existing = running_sidecar(data_dir)
    if existing:
        ready(f"a sidecar already answers at {existing['url']} (pid {existing.get('pid')})")
        return 0
    reap_orphans(data_dir)
    import ray

    init_ray(address)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    # Any: Ray's typing sees the methods, not their ``.remote`` wrappers, on an actor handle
    # The bridge opens the data directory (its Runtime): it runs on the node that holds it (issue 12).
    actor: Any = ray.remote(BridgeServer).options(num_cpus=0, max_concurrency=64, **on_data_node(settings)).remote(
        str(data_dir), settings, host, port)
    sidecar = Path(data_dir) / SIDECAR_FILE
    try:
        url = ray.get(actor.start.remote(), timeout=120)
        tmp = sidecar.with_suffix(".tmp")
        tmp.write_text(json.dumps({"url": url, "pid": os.getpid(), "token_file": str(Path(data_dir) / TOKEN_FILE),
                                   "review_token_file": str(Path(data_dir) / REVIEW_TOKEN_FILE),
                                   "data_dir": str(data_dir),
                                   # who this is, so that stop and the reaper never signal a reused pid
                                   **_own_identity(),
                                   # the local Ray started here, reaped by the next start after a kill -9
                                   "ray_session": "" if address else ray_session_name()}),
                       encoding="utf-8")
        os.chmod(tmp, 0o600)
        tmp.replace(sidecar)
        info = json.loads(sidecar.read_text(encoding="utf-8"))
        if not _announce(info):
            other = user_sidecar()
            print(f"note: another dynmem sidecar (pid {other and other.get('pid')}) serves "
                  f"{other and other.get('data_dir')}; the opencode plugin keeps using that one", file=sys.stderr)
        idle_limit_s = settings.runtime.idle_stop_min * 60
        ready(f"dynmem sidecar listening on {url}" + (f" (stops after {settings.runtime.idle_stop_min:g} min idle)"
                                                       if idle_limit_s > 0 else ""))
        next_check = time.monotonic() + IDLE_CHECK_S
        while not stop.wait(0.5):
            if idle_limit_s > 0 and time.monotonic() >= next_check:
                next_check = time.monotonic() + IDLE_CHECK_S
                if ray.get(actor.stop_if_idle.remote(idle_limit_s), timeout=30):
                    print(f"dynmem sidecar: idle for {settings.runtime.idle_stop_min:g} min; stopping", flush=True)
                    break
    finally:
        _unannounce(os.getpid())
        try:
            if sidecar.exists() and json.loads(sidecar.read_text()).get("pid") == os.getpid():
                sidecar.unlink()
        except (OSError, ValueError):
            pass
        try:
            ray.get(actor.stop.remote(), timeout=20)
        except Exception:  # shutting down anyway
            pass
        ray.kill(actor)
        ray.shutdown()
    return 0


def serve_detached(data_dir: Path, argv: list[str], timeout_s: float = 90.0) -> dict[str, Any]:
    """Start ``dynmem serve`` in the background and return its sidecar.json once it answers."""
    existing = running_sidecar(data_dir)
    if existing:
        return existing
    reap_orphans(data_dir)
    logf = open(Path(data_dir) / "sidecar.log", "ab")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen([sys.executable, "-m", "bridge.cli", *argv], stdin=subprocess.DEVNULL, stdout=logf,
                            stderr=logf, start_new_session=True, close_fds=True)
    logf.close()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        info = running_sidecar(data_dir)
        if info:
            return info
        if proc.poll() is not None:
            raise ServiceUnavailable(f"the sidecar exited with status {proc.returncode}; see {Path(data_dir) / 'sidecar.log'}")
        time.sleep(0.2)
    raise ServiceUnavailable(f"the sidecar did not answer within {timeout_s:.0f} s; see {Path(data_dir) / 'sidecar.log'}")


def _own_identity() -> dict[str, Any]:
    ident = identity_of(os.getpid())
    return {"pid_start_ticks": ident.start_ticks, "boot_id": ident.boot_id} if ident else {}


def stop_sidecar(data_dir: Path, timeout_s: float = 30.0) -> bool:
    """Stop the sidecar of ``data_dir`` (SIGTERM, then SIGKILL); False if none was running.

    Only the process that wrote ``sidecar.json`` is signalled (same pid, same start time);
    a file naming a dead or reused pid is stale: the Ray session it left is reaped and the
    file removed, and no other process is touched.
    """
    path = Path(data_dir) / SIDECAR_FILE
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    ident = _recorded_identity(info) if isinstance(info, dict) else None
    if ident is None or not signal_if_same(ident, signal.SIGTERM):
        reap_orphans(data_dir)  # dead, reused pid or unknown identity: stop only what it left
        path.unlink(missing_ok=True)
        return False
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not ident.matches():
            path.unlink(missing_ok=True)
            return True
        time.sleep(0.1)
    signal_if_same(ident, signal.SIGKILL)
    path.unlink(missing_ok=True)
    return True
