"""``dynmem doctor``: checks that the configured pieces answer, each with a one-line verdict.

Checks: the data directory is readable and writable; the embedder loads and embeds; the
model client answers (with ``client = "openai"``: the endpoint is reachable and the model
answers a tiny JSON request, outside the cache); whether a sidecar answers for the data
directory. With an endpoint configured, the embedder and model checks run inside Ray
actors built from settings, as the pipeline runs them (``--in-process`` checks here). A failing check never raises: it becomes ``ok = false`` with the error's code
and message, so one broken piece does not hide the others.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from actors.index_actor import REMOTE_EMBEDDERS
from engine.errors import DynmemError, PackageConflict
from engine.settings import Settings

S = TypeVar("S")  # the service class a probe runs in


class Check(BaseModel):
    """One doctor verdict."""

    model_config = ConfigDict(frozen=True)
    name: str
    ok: bool
    detail: str


def _run(name: str, probe: Callable[[], str]) -> Check:
    t0 = time.monotonic()
    try:
        detail = probe()
    except DynmemError as exc:
        return Check(name=name, ok=False, detail=f"error[{exc.code}]: {exc.message}")
    except Exception as exc:  # a doctor reports, it does not crash
        return Check(name=name, ok=False, detail=f"{type(exc).__name__}: {exc}")
    return Check(name=name, ok=True, detail=f"{detail} ({(time.monotonic() - t0) * 1000:.0f} ms)")


def _data_dir(data_dir: Path) -> str:
    probe = Path(data_dir) / f".doctor-{uuid.uuid4().hex}"
    probe.write_text("ok", encoding="utf-8")
    try:
        if probe.read_text(encoding="utf-8") != "ok":
            raise OSError("read back something else")
    finally:
        probe.unlink()
    return f"{data_dir} is readable and writable"


def _embedder(settings: Settings, actors: _Actors | None) -> str:
    from actors.index_actor import IndexService

    if actors is None:
        return IndexService(settings.embedder, settings.model).probe()
    return actors.ask(IndexService, IndexService.probe, settings.embedder, settings.model)


def _model(settings: Settings, data_dir: Path, actors: _Actors | None) -> str:
    from actors.adjudication_actor import AdjudicationService

    if actors is None:
        return AdjudicationService(settings.model, data_dir).probe()
    return actors.ask(AdjudicationService, AdjudicationService.probe, settings.model, data_dir)


class _Actors:
    """Runs a probe inside a short-lived actor, built from settings as the pipeline builds it."""

    def __init__(self, address: str | None) -> None:
        self.address = address
        self.started = False

    def ask(self, cls: type[S], probe: Callable[[S], str], *args: Any) -> str:
        """Build ``cls(*args)`` in an actor and return what its ``probe`` method says."""
        import ray

        from actors.launch import Ref, init_ray

        if not ray.is_initialized():
            init_ray(self.address)
            self.started = True
        handle: Any = ray.remote(cls).options(num_cpus=0).remote(*args)
        try:
            ref: Ref[S] = Ref(handle, remote=True)
            return Ref.result(ref.submit(probe), timeout_s=120)
        finally:
            ray.kill(handle)

    def close(self) -> None:
        if self.started:
            import ray

            ray.shutdown()


def _packages() -> str:
    from bridge.packages import ADVICE, OWN, package_conflicts

    problems = package_conflicts()
    if problems:
        raise PackageConflict(f"{'; '.join(problems)}; {ADVICE}")
    return f"{', '.join(OWN)} are dynamics-memory's own packages"


def _sidecar(data_dir: Path) -> str:
    from bridge.server import running_sidecar

    info = running_sidecar(data_dir)
    if info is None:
        return "no sidecar answers for this data directory (start one with `dynmem serve`)"
    return f"sidecar answers at {info['url']} (pid {info.get('pid')})"


def check(settings: Settings, data_dir: Path, *, in_actor: bool = False, address: str | None = None) -> list[Check]:
    """Run every check; never raises.

    With ``in_actor`` and a configured endpoint (openai client or embedder), the model and
    embedder checks run inside Ray actors built from settings, the way the pipeline builds
    them, so that a client that cannot be built or reach the endpoint there fails here too.
    The offline defaults need no actor.
    """
    remote = settings.model.client != "rules" or settings.embedder.name in REMOTE_EMBEDDERS
    actors = _Actors(address) if in_actor and remote else None
    try:
        return [
            _run("data_dir", lambda: _data_dir(data_dir)),
            _run("embedder", lambda: _embedder(settings, actors)),
            _run("model", lambda: _model(settings, data_dir, actors)),
            _run("sidecar", lambda: _sidecar(data_dir)),
            _run("packages", _packages),
        ]
    finally:
        if actors is not None:
            actors.close()


def cmd_doctor(args: argparse.Namespace) -> int:
    """Print the checks (a table, or one JSON document with --json); exit 1 if any failed."""
    from actors.config import data_dir, load_settings

    settings = load_settings(Path(args.config) if getattr(args, "config", None) else None)
    folder = data_dir(getattr(args, "data_dir", None))
    in_actor = not getattr(args, "in_process", False)
    checks = check(settings, folder, in_actor=in_actor, address=getattr(args, "address", None))
    ok = all(c.ok for c in checks)
    if getattr(args, "json", False):
        print(json.dumps({"ok": ok, "checks": [c.model_dump() for c in checks]}))
    else:
        for c in checks:
            print(f"{'ok  ' if c.ok else 'FAIL'} {c.name:<9} {c.detail}")
    sys.stdout.flush()
    return 0 if ok else 1


def add_doctor_parser(sub: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``dynmem doctor`` on the subcommand set (``common`` carries --data-dir/--config)."""
    s: argparse.ArgumentParser = sub.add_parser(
        "doctor", parents=[common], help="check the data directory, embedder, model endpoint and sidecar")
    if "--json" not in s._option_string_actions:
        s.add_argument("--json", action="store_true", help="print exactly one JSON document")
    s.add_argument("--in-process", action="store_true",
                   help="check the endpoint in this process instead of inside a Ray actor")
    if "--address" not in s._option_string_actions:
        s.add_argument("--address", help="join this Ray cluster for the actor checks (default: a local Ray)")
    s.set_defaults(func=cmd_doctor)
    return s
