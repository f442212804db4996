"""``dynmem doctor``: checks that the configured pieces answer, each with a one-line verdict.

Checks: the data directory is readable and writable; the embedder loads and embeds; the
model client answers (with ``client = "openai"``: the endpoint is reachable and the model
answers a tiny JSON request, outside the cache); whether a sidecar answers for the data
directory. A failing check never raises: it becomes ``ok = false`` with the error's code
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
from typing import Any

from pydantic import BaseModel, ConfigDict

from engine.errors import DynmemError
from engine.settings import Settings


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


def _embedder(settings: Settings) -> str:
    from actors.embedder import make_embedder

    emb = make_embedder(settings.embedder.name, settings.embedder.batch_size,
                        settings=settings.embedder, model=settings.model)
    vec = emb.embed(["dynmem doctor check"])
    if vec.shape != (1, emb.dim):
        raise RuntimeError(f"expected a 1 x {emb.dim} vector, got {vec.shape}")
    return f"{emb.name} embeds {emb.dim}-d vectors"


def _model(settings: Settings, data_dir: Path) -> str:
    m = settings.model
    if m.client == "rules":
        return "rules client (offline, no endpoint needed)"
    from actors.llm.factory import make_client
    from actors.llm.openai_client import OpenAIClient

    client = make_client(m, data_dir)
    assert isinstance(client, OpenAIClient)
    models = client.endpoint.list_models()
    client.probe()
    listed = "listed" if client.model_for("extract") in models else "not listed by /models, but answered"
    return f"{client.model_for('extract')} at {m.openai_base_url} answers JSON ({listed}; structured={m.structured})"


def _sidecar(data_dir: Path) -> str:
    from bridge.server import running_sidecar

    info = running_sidecar(data_dir)
    if info is None:
        return "no sidecar answers for this data directory (start one with `dynmem serve`)"
    return f"sidecar answers at {info['url']} (pid {info.get('pid')})"


def check(settings: Settings, data_dir: Path) -> list[Check]:
    """Run every check; never raises."""
    return [
        _run("data_dir", lambda: _data_dir(data_dir)),
        _run("embedder", lambda: _embedder(settings)),
        _run("model", lambda: _model(settings, data_dir)),
        _run("sidecar", lambda: _sidecar(data_dir)),
    ]


def cmd_doctor(args: argparse.Namespace) -> int:
    """Print the checks (a table, or one JSON document with --json); exit 1 if any failed."""
    from actors.config import data_dir, load_settings

    settings = load_settings(Path(args.config) if getattr(args, "config", None) else None)
    folder = data_dir(getattr(args, "data_dir", None))
    checks = check(settings, folder)
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
    s.set_defaults(func=cmd_doctor)
    return s
