"""Loads settings once, and is the one module that reads the environment.

Settings: ``configs/default.toml`` (generated from ``engine/settings.py``), then ``--config
FILE``, then environment overrides ``DYNMEM_<SECTION>_<KEY>`` (for example
``DYNMEM_RETRIEVAL_K=8``) plus the fixed names of DESIGN §11: ``DYNMEM_MODEL_CLIENT``,
``DYNMEM_OPENAI_BASE_URL``, ``DYNMEM_OPENAI_MODEL``, ``DYNMEM_OPENAI_API_KEY``,
``DYNMEM_EMBEDDER``. An environment value is text; pydantic coerces it by the field's type
(``DYNMEM_OPENAI_MODEL=1`` is the model named "1", ``DYNMEM_RETRIEVAL_K=8`` the number 8).

Every other variable the code reads is listed in :data:`ENVIRONMENT` and read through
:func:`env`; tests/actors/test_config.py fails on an ``os.environ`` read anywhere else.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from configs import bundled
from engine.errors import DataDirError, InvalidInput, NotFound
from engine.settings import Settings

# Package data (configs/default.toml), found by importlib.resources: also in an installed wheel.
DEFAULT_TOML = bundled("default.toml")
_FIXED = {
    "DYNMEM_MODEL_CLIENT": ("model", "client"),
    "DYNMEM_OPENAI_BASE_URL": ("model", "openai_base_url"),
    "DYNMEM_OPENAI_MODEL": ("model", "openai_model"),
    "DYNMEM_OPENAI_API_KEY": ("model", "openai_api_key"),
    "DYNMEM_EMBEDDER": ("embedder", "name"),
}

#: Every environment variable read besides the settings overrides, and what it does.
ENVIRONMENT: dict[str, str] = {
    "DYNMEM_HOME": "the data directory (after --data-dir)",
    "XDG_DATA_HOME": "parent of the default data directory (<XDG_DATA_HOME>/dynmem)",
    "DYNMEM_STATE_DIR": "where the user's running sidecar announces itself (sidecar.json)",
    "XDG_STATE_HOME": "parent of the default state directory (<XDG_STATE_HOME>/dynmem)",
    "XDG_CONFIG_HOME": "parent of opencode's global config folder (`dynmem plugin install --global`)",
    "DYNMEM_PROJECT": "the default project (else the repository of the current directory)",
    "RAY_ADDRESS": "a Ray cluster to join (after --ray-address and [runtime] ray_address)",
}

#: Process-wide defaults set before Ray or numpy start (an explicit value in the environment wins).
PROCESS_DEFAULTS: dict[str, str] = {
    # Quiet, local-only Ray (FACTS.md: usage stats off, no auth token file).
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    # Ray starts its workers at nice 15 (its default), below every ordinary process: the actors
    # that answer the agent (bridge, log, engine, index) then lose the CPU to anything else the
    # user runs, and a busy machine turns a 10 ms recall into a second. They run at the normal
    # priority; only model work (extraction, judging, repair) is lowered, by
    # [runtime] background_nice (actors/launch.py). Read by the raylet of an embedded Ray only.
    "RAY_worker_niceness": "0",
    # One BLAS thread: query-sized embeddings are latency-bound, and on a busy 2-core machine a
    # thread per core made p95 recall 30x slower (eval/results/perf.notes.md). Ray workers do the same.
    "OPENBLAS_NUM_THREADS": "1",
}


def env(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The value of the documented environment variable ``name`` ('' when unset or empty): one of
    :data:`ENVIRONMENT` or a fixed settings override (``DYNMEM_EMBEDDER``...), read as text.

    Raises:
        KeyError: ``name`` is not listed in :data:`ENVIRONMENT` (document it there first).
    """
    if name not in ENVIRONMENT and name not in _FIXED:
        raise KeyError(f"{name} is not a documented environment variable (actors.config.ENVIRONMENT)")
    source = os.environ if environ is None else environ
    return source.get(name) or ""


def set_process_defaults(*names: str) -> None:
    """Set the named :data:`PROCESS_DEFAULTS` where the environment leaves them unset.

    Call before the library that reads them loads (numpy for BLAS, Ray for its own).
    """
    for name in names:
        os.environ.setdefault(name, PROCESS_DEFAULTS[name])


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out.get(k, {}), v) if isinstance(v, Mapping) else v
    return out


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise InvalidInput(f"config file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"config file {path} is not valid TOML: {exc}") from exc


def load_settings(config_file: Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Build the frozen settings from defaults, an optional file and the environment."""
    environment = os.environ if environ is None else environ
    data = _read_toml(DEFAULT_TOML)
    if config_file is not None:
        data = _merge(data, _read_toml(Path(config_file)))
    if data.get("model", {}).get("openai_api_key"):
        # A key in a file ends up in backups, dotfile repos and bug reports.
        raise InvalidInput("an API key may not be set in a config file; use DYNMEM_OPENAI_API_KEY")
    sections = set(Settings.model_fields)
    for name, value in environment.items():
        if name in _FIXED:
            sec, key = _FIXED[name]
        elif name.startswith("DYNMEM_") and name.count("_") >= 2:
            sec, _, key = name[len("DYNMEM_"):].lower().partition("_")
            if sec not in sections:
                continue
        else:
            continue
        # The text as it is: validation coerces it by the field's type ("8" -> 8 for an int, "1" stays "1" for a str).
        data = _merge(data, {sec: {key: value}})
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(f"bad setting {where}: {first['msg']}") from exc


def data_dir(explicit: str | Path | None = None, environ: Mapping[str, str] | None = None, create: bool = True) -> Path:
    """``--data-dir``, else ``$DYNMEM_HOME``, else ``$XDG_DATA_HOME/dynmem`` (``~/.local/share/dynmem``).

    Raises:
        NotFound: ``create`` is false (a read) and the folder does not exist: a read creates nothing.
    """
    if explicit:
        path = Path(explicit)
    elif env("DYNMEM_HOME", environ):
        path = Path(env("DYNMEM_HOME", environ))
    else:
        base = env("XDG_DATA_HOME", environ) or str(Path.home() / ".local" / "share")
        path = Path(base) / "dynmem"
    path = path.expanduser()
    if not create and not path.is_dir():
        blocker = next((p for p in (path, *path.parents) if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            raise DataDirError(f"cannot use data directory {path}: {blocker} is not a folder")
        raise NotFound(f"no data directory at {path}: nothing has been stored there yet")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataDirError(f"cannot create data directory {path}: {exc.strerror}") from exc
    if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
        raise DataDirError(f"data directory {path} is not readable and writable")
    return path
