"""Builds the actor graph: on an embedded local Ray by default, on a cluster with an address.

``ray.remote`` is applied here and nowhere else (as Ray's own ``util/queue.py`` does), so
every actor's plain class can be built directly in unit tests. ``Runtime(use_ray=False)``
builds the same graph from plain objects in one process.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from actors.clients import (
    AdjudicationClient, EngineClient, ExtractionClient, IndexClient, InvestigatorClient, LogClient, ServiceClient,
)
from actors.clock import Clock
from actors.config import env, set_process_defaults
from actors.engine_actor import EngineService, _slug
from actors.extraction_actor import ExtractionService
from actors.index_actor import IndexChange, IndexService
from actors.log_actor import LogService
from actors.signals import RepairSignals
from actors.store.writer_lock import WriterLock
from actors.ref import Ref
from engine.errors import InvalidInput, ServiceUnavailable
from engine.settings import Settings

__all__ = ["INDEX_GROUPS", "Ref", "RemoteIndex", "Runtime", "init_ray", "is_plain_data", "reachable"]

# quiet, local-only Ray (FACTS.md), whose workers run at the normal priority (actors/config.py)
set_process_defaults("RAY_USAGE_STATS_ENABLED", "RAY_AUTH_MODE", "RAY_worker_niceness")


#: Concurrency groups of the IndexActor: a recall's query embedding has its own thread and
#: queue, never behind a replay's bulk batch (issue 12); FAISS reads and writes stay in the
#: default group, one at a time. The embedders only read their weights once loaded.
INDEX_GROUPS = {"query": 1, "bulk": 1}


class RemoteIndex:
    """The IndexPort of EngineService, over the typed client of the IndexActor.

    Supervision: the IndexActor keeps its FAISS index in memory, so when Ray restarts it the
    index is empty. Before each call that reads or changes the index, the port compares the
    actor's generation with the one it last saw; if the actor restarted, ``on_restart`` (the
    engine's re-upload of its vectors from memory.sqlite) runs first, so no search ever meets
    an index that forgot this engine's memories.
    """

    def __init__(self, index: IndexClient) -> None:
        self.index = index
        self.on_restart: Callable[[], None] | None = None  # set by the engine that holds this port
        self._generation: str | None = None

    def _fresh(self) -> None:
        if self.on_restart is None:
            return
        gen = self.index.generation()
        if self._generation is None:
            self._generation = gen
        elif gen != self._generation:
            self._generation = gen  # first: the re-upload's own calls must not start it again
            self.on_restart()

    def embed(self, texts: list[str], local_only: list[bool] | None = None) -> np.ndarray:
        return self.index.ref.call_in("bulk", IndexService.embed, texts, local_only)

    def upsert(self, scope: str, ids: list[str], vectors: np.ndarray) -> None:
        self._fresh()
        self.index.upsert(scope, ids, vectors)

    def remove(self, ids: list[str]) -> None:
        self._fresh()
        self.index.remove(ids)

    def search(self, vector: np.ndarray, scopes: list[str], k: int) -> list[tuple[str, float]]:
        if self.on_restart is None:
            return self.index.search(vector, scopes, k)
        # The restart check rides on the search reply (one round trip on the recall path, not two):
        # hits from an index that restarted are thrown away and asked again after the refill.
        gen, hits = self.index.checked_search(vector, scopes, k)
        if self._generation is None:
            self._generation = gen
        elif gen != self._generation:
            self._generation = gen
            self.on_restart()
            hits = self.index.search(vector, scopes, k)
        return hits

    def update_search(self, scope: str, changes: Sequence[IndexChange], queries: np.ndarray | None,
                      scopes: Sequence[Sequence[str]], k: int) -> list[list[tuple[str, float]]]:
        if self.on_restart is None:
            return self.index.update_search(scope, changes, queries, scopes, k)
        # The restart check rides on the reply, as for search. An index that restarted took these
        # changes into an empty index: the refill (the engine's store, then the changes of its
        # batch not yet in the store) rebuilds it, and the queries are asked again.
        gen, hits = self.index.checked_update_search(scope, changes, queries, scopes, k)
        if self._generation is None:
            self._generation = gen
        elif gen != self._generation:
            self._generation = gen
            self.on_restart()
            hits = self.index.update_search(scope, (), queries, scopes, k)
        return hits

    def save_snapshot(self, scope: str, path: str, token: str, wait_s: float = 0.0) -> bool:
        self._fresh()
        return self.index.save_snapshot(scope, path, token, wait_s)

    def load_snapshot(self, scope: str, path: str, token: str) -> bool:
        self._fresh()
        return self.index.load_snapshot(scope, path, token)

    def embed_search_vectors(self, text: str, scopes: list[str], k: int, also: Sequence[str] = ()
                             ) -> tuple[np.ndarray, list[tuple[str, float]], dict[str, np.ndarray]]:
        # One call on Ray, in the index actor's query group (it never waits for a bulk batch):
        # the query's vector, the search, the candidates' vectors and the restart check. Hits
        # from an index that restarted are thrown away and asked again after the refill.
        gen, vec, hits, packed = self.index.checked_embed_search(text, scopes, k, also)
        if self.on_restart is not None:
            if self._generation is None:
                self._generation = gen
            elif gen != self._generation:
                self._generation = gen
                self.on_restart()
                _, hits, packed = self.index.search_vectors(vec, scopes, k, also)
        return vec, hits, packed.as_dict()


def is_plain_data(value: Any) -> bool:
    """Whether ``value`` may be an actor's constructor argument: data, not a live object.

    Plain: ``None``, numbers, strings, bytes, paths, enums, pydantic models of plain fields,
    lists, tuples and dicts of plain values, a :class:`Clock` (it holds at most a number),
    and the typed clients and ports that wrap another actor's handle (``EngineClient``, ``RemoteIndex``).
    Not plain: model clients, endpoints, embedders, stores, anything with a lock or a socket.
    """
    from enum import Enum

    from pydantic import BaseModel

    if value is None or isinstance(value, (bool, int, float, str, bytes, Path, Enum)):
        return True
    if isinstance(value, BaseModel):
        return all(is_plain_data(getattr(value, name)) for name in type(value).model_fields)
    if isinstance(value, (list, tuple)):
        return all(is_plain_data(v) for v in value)
    if isinstance(value, dict):
        return all(is_plain_data(k) and is_plain_data(v) for k, v in value.items())
    if type(value) in (Clock, *Clock.__subclasses__()):
        return all(isinstance(v, (int, float)) for v in vars(value).values())
    if isinstance(value, RemoteIndex):
        return value.index.remote
    if isinstance(value, ServiceClient):
        return value.remote
    return False


def reachable(address: str, timeout_s: float = 2.0) -> bool:
    """Whether a Ray address answers on TCP (FACTS.md: a dead address can hang ray.init)."""
    if address in ("auto", "local"):
        return True
    parsed = urlparse(address if "://" in address else f"ray://{address}")
    host, port = parsed.hostname, parsed.port
    if not host or not port:
        return False
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def init_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Join ``address`` (or ``RAY_ADDRESS``) if given, else start an embedded local Ray."""
    import ray

    if ray.is_initialized():
        return
    address = address or env("RAY_ADDRESS") or None
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": "ERROR"}
    if address:
        if not reachable(address):
            raise ServiceUnavailable(f"no Ray cluster answers at {address}")
        ray.init(address=address, **quiet)
    else:
        # "local": always a new embedded Ray. Without an address Ray attaches to any cluster that
        # `ray start` left on this machine (/tmp/ray/ray_current_cluster), and then refuses num_cpus.
        ray.init(address="local", num_cpus=num_cpus or os.cpu_count() or 2, include_dashboard=False, **quiet)


def data_node_id(settings: Settings) -> str:
    """The Ray node that holds the data directory: ``[runtime] data_node``, else this process's node."""
    import ray

    wanted = settings.runtime.data_node.strip()
    if not wanted:
        return str(ray.get_runtime_context().get_node_id())
    alive = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}  # type: ignore[no-untyped-call]
    if wanted not in alive:
        raise InvalidInput(f"[runtime] data_node {wanted!r} is not a live node of this Ray cluster "
                           f"({len(alive)} live nodes; `ray status` lists them)")
    return wanted


def on_data_node(settings: Settings) -> dict[str, Any]:
    """Ray options that pin an actor to the data node (never elsewhere: soft=False)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=data_node_id(settings), soft=False)}


def pool_size(backlog: int, lo: int, hi: int, per_worker: int) -> int:
    """Workers for ``backlog`` jobs when each keeps ``per_worker`` requests in flight, within [lo, hi]."""
    need = -(-max(0, backlog) // max(1, per_worker))
    return max(lo, min(hi, need))


_LOCATED: dict[tuple[type, int], type] = {}


def node_id(self: Any) -> str:
    """The Ray node an actor runs on (a method of every actor class, added by :func:`_located`)."""
    import ray

    return str(ray.get_runtime_context().get_node_id())


def priority(self: Any) -> int:
    """The actor process's nice value (a method of every actor class, added by :func:`_located`)."""
    return os.getpriority(os.PRIO_PROCESS, 0)


def lower_priority(increment: int) -> int:
    """Make this process yield the CPU to others by ``increment`` nice levels; returns the new nice value.

    A process may always lower its own priority; the call is skipped where the OS has no nice
    values (the priority is then unchanged)."""
    if increment > 0 and hasattr(os, "nice"):
        return os.nice(increment)
    return priority(None)


def _located(cls: type, nice: int = 0) -> type:
    """``cls`` with ``node_id()`` and ``priority()`` methods: where its actor runs and at which
    priority, so that tests and ``dynmem doctor`` assert them rather than assume them (the plain
    class stays untouched). With ``nice`` > 0 the actor's process first lowers its priority: model
    work in the background yields the CPU to the agents' recalls and observes (issue 17)."""
    if (cls, nice) not in _LOCATED:
        members: dict[str, Any] = {"node_id": node_id, "priority": priority}
        if nice > 0:
            base_init: Callable[..., None] = getattr(cls, "__init__")

            def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
                lower_priority(nice)
                base_init(self, *args, **kwargs)

            members["__init__"] = __init__
        _LOCATED[(cls, nice)] = type(cls.__name__, (cls,), members)
    return _LOCATED[(cls, nice)]


class Runtime:
    """The actor graph of one data directory: one IndexActor, an extraction pool, an
    adjudicator, a global engine, and a LogActor + EngineActor per project (created on use)."""

    def __init__(self, data_dir: Path, settings: Settings, *, use_ray: bool = True, address: str | None = None,
                 clock: Clock | None = None, client_factory: Callable[[], Any] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.settings = settings
        self.use_ray = use_ray
        self.clock = clock or Clock()
        if client_factory is not None and use_ray:
            # A live client holds locks and an HTTP pool: it cannot cross a process boundary.
            raise InvalidInput("a client_factory works in process only; on Ray each actor builds its client "
                               "from settings")
        self._client_factory = client_factory
        #: Names this run: lease tokens start with it, and a log store gives back the leases of
        #: any other run (a process that is gone: the writer lock admits one run at a time).
        self.run_id = uuid.uuid4().hex[:16]
        self._logs: dict[str, LogClient] = {}
        self._engines: dict[str, EngineClient] = {}
        self._last_used: OrderedDict[str, int] = OrderedDict()  # project -> last use (ms), LRU first
        self._actors: list[Any] = []
        #: (actor class, constructor arguments) of every actor started, for checks and tests.
        self.spawned: list[tuple[type, tuple[Any, ...]]] = []
        self._lock = threading.RLock()  # one actor per project, even with concurrent callers
        self.closed = False  # set by shutdown(): work queued for this runtime is dropped, not failed
        self.signals = RepairSignals(closed=lambda: self.closed)  # abstained recalls' repair signals
        # One writer per store: taken before any store is opened, released by shutdown().
        self.writer_lock = WriterLock(self.data_dir).acquire()
        try:
            self._build(address)
        except BaseException:
            self.writer_lock.release()
            raise

    def _build(self, address: str | None) -> None:
        settings = self.settings
        if self.use_ray:
            init_ray(address or settings.runtime.ray_address or None)
        from actors.adjudication_actor import AdjudicationService
        from actors.investigator_actor import InvestigatorService

        self.data_node = self._data_node() if self.use_ray else ""
        self.index = IndexClient(self._spawn(IndexService, settings.embedder, settings.model, groups=INDEX_GROUPS))
        self.extractors: list[ExtractionClient] = []
        self._grow_extractors(self.pool_bounds()[0])
        self.adjudicator = AdjudicationClient(self._service(AdjudicationService))
        self.investigator = InvestigatorClient(self._service(InvestigatorService))
        self.global_engine = EngineClient(self._spawn(EngineService, None, self.data_dir, settings, self._index_port(),
                                                      self.clock))

    # ---- placement (issue 12) ----------------------------------------------------------
    def _data_node(self) -> str:
        return data_node_id(self.settings)

    def _placement(self, stateless: bool) -> dict[str, Any]:
        """Where an actor runs: an actor that owns files (a log, an engine, the index its engines fill)
        is pinned to the data node, never elsewhere (soft=False: if that node is gone it waits,
        rather than open empty stores on another disk); stateless model work is spread."""
        if stateless:
            return {"scheduling_strategy": "SPREAD"}
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=self.data_node, soft=False)}

    def placement_of(self, client: ServiceClient[Any]) -> str:
        """The node id an actor runs on (asked of the actor itself; "" in process)."""
        if not client.remote:
            return ""
        return client.ref.call(node_id)

    # ---- the elastic extraction pool ----------------------------------------------------
    def pool_bounds(self) -> tuple[int, int, int]:
        """(min workers, max workers, requests each worker keeps in flight).

        The pool is elastic for a model endpoint, whose requests wait on the network; the offline
        ``rules`` client is CPU-bound, so more workers than ``extraction_workers`` would only
        compete for the same cores: its pool stays at that size."""
        rt = self.settings.runtime
        lo = max(1, rt.extraction_workers)
        if self.settings.model.client != "openai":
            return lo, lo, 1
        return lo, max(lo, rt.extraction_workers_max), self.settings.model.max_concurrency

    def scale_extractors(self, backlog: int) -> int:
        """Size the extraction pool for ``backlog`` jobs: enough workers that every job of the backlog
        has a request slot (each worker serves ``[model] max_concurrency`` requests at once), within
        [min, max]; back to the minimum when there is no backlog. Call between batches (a retired
        worker must have no call in flight). Returns the pool size."""
        lo, hi, per_worker = self.pool_bounds()
        want = pool_size(backlog, lo, hi, per_worker)
        with self._lock:
            if want > len(self.extractors):
                self._grow_extractors(want)
            elif backlog == 0 and len(self.extractors) > lo:
                for ref in self.extractors[lo:]:
                    if self.use_ray:
                        import ray

                        ray.kill(ref.target, no_restart=True)
                        self._actors = [h for h in self._actors if h is not ref.target]
                del self.extractors[lo:]
            return len(self.extractors)

    def _grow_extractors(self, n: int) -> None:
        per_worker = self.pool_bounds()[2]
        # A model worker runs twice as many calls as it has request slots: while one thread
        # waits for its reply, another builds (redacts, serialises) the next request and then
        # waits for a slot, and a reply is checked (parsed, grounded) after its slot is free. The
        # endpoint's semaphore keeps ``[model] max_concurrency`` requests in flight, so a slot
        # never idles while its thread does CPU work (issue 12: that gap was ~10 % of a
        # replay's time at 16 in flight). The CPU-bound rules client keeps one call at a time.
        threads = per_worker * 2 if self.settings.model.client == "openai" else per_worker
        while len(self.extractors) < n:
            self.extractors.append(ExtractionClient(self._service(ExtractionService, concurrency=threads,
                                                                  num_cpus=self.settings.runtime.extraction_num_cpus)))

    def _service(self, cls: Any, concurrency: int = 1, num_cpus: float = 0.0) -> Ref[Any]:
        """A model-client service: built from ``[model]`` inside its actor (or over a test's client)."""
        if self._client_factory is not None:
            return Ref(cls.with_client(self._client_factory()), remote=False)
        return self._spawn(cls, self.settings.model, self.data_dir, stateless=True, concurrency=concurrency,
                           num_cpus=num_cpus)

    def _index_port(self) -> Any:
        return RemoteIndex(self.index) if self.use_ray else self.index.target

    def _spawn(self, cls: type, *args: Any, stateless: bool = False, concurrency: int = 1, num_cpus: float = 0.0,
               groups: dict[str, int] | None = None) -> Ref[Any]:
        self.spawned.append((cls, args))
        if not self.use_ray:
            return Ref(cls(*args), remote=False)
        bad = [a for a in args if not is_plain_data(a)]
        if bad:
            raise InvalidInput(f"{cls.__name__} would be built from live objects {bad!r}; actors take plain data")
        import ray

        # I/O-bound actors ask for no CPU so that none waits for a slot on a 2-core machine.
        # Supervision: a dead actor is restarted by Ray with the same arguments, which rebuilds
        # it from its stores (Log/Engine: SQLite rows; extraction, judging, repair: stateless),
        # on the same node for an actor that owns files (its placement is part of its options).
        # Calls are not retried by Ray (max_task_retries 0): the caller decides, because a
        # retried append or ingest must go through the idempotency keys (pipeline.pump).
        # Concurrency groups are an actor class option (Ray refuses them in .options()).
        # Any: Ray's ActorHandle typing cannot follow a class chosen at run time
        remote: Any = ray.remote  # its overloads do not list concurrency_groups, which it accepts
        # Model work (stateless) runs at a lower priority than the actors that answer the agent.
        located = _located(cls, self.settings.runtime.background_nice if stateless else 0)
        actor_cls: Any = remote(concurrency_groups=groups)(located) if groups else remote(located)
        handle: Any = actor_cls.options(num_cpus=num_cpus, max_concurrency=concurrency, max_restarts=-1,
                                        max_task_retries=0, **self._placement(stateless)).remote(*args)
        self._actors.append(handle)
        return Ref(handle, remote=True)

    def project_dir(self, project: str) -> Path:
        return self.data_dir / "projects" / _slug(project)

    def log(self, project: str) -> LogClient:
        with self._lock:
            self._touch(project)
            return self._log(project)

    def _log(self, project: str) -> LogClient:
        if project not in self._logs:
            self._logs[project] = LogClient(self._spawn(LogService, self.project_dir(project), self.clock, project,
                                                        self.run_id))
        return self._logs[project]

    def engine(self, project: str) -> EngineClient:
        with self._lock:
            self._touch(project)
            return self._engine(project)

    def live_engine(self, project: str) -> EngineClient | None:
        """The engine of a project already live, without waiting: None when it is not running yet
        or another thread holds the runtime (starting or releasing actors). For callers on an event
        loop, which must not block; they take the path of :meth:`engine` on a thread instead."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            client = self._engines.get(project)
            if client is None or project not in self._last_used:
                return None
            self._touch(project)  # live already: never releases another project
            return client
        finally:
            self._lock.release()

    def live_log(self, project: str) -> LogClient | None:
        """The log of a project already live, without waiting (as :meth:`live_engine`)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            client = self._logs.get(project)
            if client is None or project not in self._last_used:
                return None
            self._touch(project)
            return client
        finally:
            self._lock.release()

    def _touch(self, project: str) -> None:
        """Mark ``project`` used now; a project that becomes live may release the least recently used
        past the cap (a call on a live project never does: no job counts on the recall path)."""
        becomes_live = project not in self._last_used
        self._last_used[project] = self.clock.now_ms()
        self._last_used.move_to_end(project)
        if becomes_live:
            self._enforce_cap(keep=project)

    def _enforce_cap(self, keep: str = "") -> None:
        """Release least recently used projects while more than ``max_live_projects`` are live.

        A project used within ``evict_grace_s``, or with jobs pending or running, is passed over:
        a caller may still hold its clients (an observe in flight, a batch being distilled), and
        must never find its stores closed. The cap is then exceeded until the next call or sweep
        (caller holds the lock)."""
        cap = max(1, self.settings.runtime.max_live_projects)
        grace_ms = int(self.settings.runtime.evict_grace_s * 1000)
        now = self.clock.now_ms()
        for project in list(self._last_used):  # least recently used first
            if len(self._last_used) <= cap:
                return
            if project == keep or now - self._last_used[project] < grace_ms or self._has_live_jobs(project):
                continue
            self._release(project)

    def live_projects(self) -> list[str]:
        """Projects whose log or engine actor is running, least recently used first."""
        with self._lock:
            return [p for p in self._last_used if p in self._logs or p in self._engines]

    def release_idle(self) -> list[str]:
        """Release the actors of projects unused for ``runtime.idle_release_s``; they come back on
        demand from their stores (issue 17, failure 5). Returns the projects released."""
        limit_ms = int(self.settings.runtime.idle_release_s * 1000)
        with self._lock:
            now = self.clock.now_ms()
            idle = [p for p, seen in self._last_used.items() if now - seen >= limit_ms and not self._has_live_jobs(p)]
            for project in idle:
                self._release(project)
            before = set(self._last_used)
            self._enforce_cap()  # projects passed over by the cap while in use go now
            idle += sorted(before - set(self._last_used))
            if not self._last_used:  # nothing live: the extraction pool goes back to its minimum
                self.scale_extractors(0)
            return idle

    def _has_live_jobs(self, project: str) -> bool:
        """Whether a project still has work (pending or running jobs): its actors stay until it is done."""
        tables: tuple[dict[str, LogClient] | dict[str, EngineClient], ...] = (self._logs, self._engines)
        for table in tables:
            client = table.get(project)
            if client is None:
                continue
            counts = client.job_counts()
            if any(c.get("pending", 0) + c.get("running", 0) for c in counts.values()):
                return True
        return False

    def _release(self, project: str) -> None:
        """Close a project's stores and stop its actors (caller holds the lock)."""
        self._last_used.pop(project, None)
        tables: tuple[dict[str, EngineClient] | dict[str, LogClient], ...] = (self._engines, self._logs)
        for table in tables:
            client = table.pop(project, None)
            if client is None:
                continue
            try:
                client.close()
            except Exception:  # closing is best effort: the stores are WAL and durable
                pass
            if self.use_ray:
                import ray

                ray.kill(client.target, no_restart=True)
                self._actors = [h for h in self._actors if h is not client.target]

    def _engine(self, project: str) -> EngineClient:
        if project not in self._engines:
            # The global engine's client, in process too: its Ref serialises calls like the actor would.
            self._engines[project] = EngineClient(self._spawn(EngineService, project, self.data_dir, self.settings,
                                                              self._index_port(), self.clock, self.global_engine))
        return self._engines[project]

    def has_project(self, project: str) -> bool:
        """Whether the project has stores (reads of an unknown project must not create one)."""
        folder = self.project_dir(project)
        return project in self._engines or project in self._logs or (folder / "log.sqlite").exists() \
            or (folder / "memory.sqlite").exists()

    def projects_on_disk(self) -> list[str]:
        """Projects with stores under the data directory (named in their project.json)."""
        import json

        names = set(self._engines)
        for marker in (self.data_dir / "projects").glob("*/project.json"):
            try:
                names.add(json.loads(marker.read_text(encoding="utf-8"))["project"])
            except (OSError, ValueError, KeyError):
                continue
        return sorted(names)

    def supervised_actors(self) -> list[tuple[str, ServiceClient[Any]]]:
        """The actors Ray restarts from their arguments and stores, by kind (for fault injection).

        A restarted IndexActor is refilled by the engines from their stores (RemoteIndex).
        """
        with self._lock:
            out: list[tuple[str, ServiceClient[Any]]] = [("extraction", r) for r in self.extractors]
            out += [("adjudication", self.adjudicator), ("investigator", self.investigator), ("index", self.index)]
            out += [("log", r) for r in self._logs.values()]
            out += [("engine", r) for r in self._engines.values()]
            return out

    def shutdown(self) -> None:
        """Close every store and stop the actors (Ray itself is left to its owner). A second call does
        nothing: the actors are gone, and a call to one would only wait for Ray to give up on it."""
        if self.closed:
            return
        self.closed = True
        self.signals.close()
        closable: list[EngineClient | LogClient] = [*self._engines.values(), *self._logs.values(), self.global_engine]
        for client in closable:
            try:
                client.close()
            except Exception:  # best effort at shutdown; the stores are WAL and durable
                pass
        if self.use_ray:
            import ray

            for handle in self._actors:
                ray.kill(handle)
        self._actors.clear()
        self._engines.clear()
        self._logs.clear()
        self.writer_lock.release()
