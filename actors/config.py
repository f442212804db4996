"""Loads settings once: ``configs/default.toml``, then ``--config FILE``, then environment.

Environment overrides are ``DYNMEM_<SECTION>_<KEY>`` (for example
``DYNMEM_RETRIEVAL_K=8``) plus the fixed names of DESIGN §11: ``DYNMEM_MODEL_CLIENT``,
``DYNMEM_OPENAI_BASE_URL``, ``DYNMEM_OPENAI_MODEL``, ``DYNMEM_OPENAI_API_KEY``,
``DYNMEM_EMBEDDER``. This is the one function that reads the environment.
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


def _coerce(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def load_settings(config_file: Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Build the frozen settings from defaults, an optional file and the environment."""
    env = os.environ if environ is None else environ
    data = _read_toml(DEFAULT_TOML)
    if config_file is not None:
        data = _merge(data, _read_toml(Path(config_file)))
    if data.get("model", {}).get("openai_api_key"):
        # A key in a file ends up in backups, dotfile repos and bug reports.
        raise InvalidInput("an API key may not be set in a config file; use DYNMEM_OPENAI_API_KEY")
    sections = set(Settings.model_fields)
    for name, value in env.items():
        if name in _FIXED:
            sec, key = _FIXED[name]
        elif name.startswith("DYNMEM_") and name.count("_") >= 2:
            sec, _, key = name[len("DYNMEM_"):].lower().partition("_")
            if sec not in sections:
                continue
        else:
            continue
        data = _merge(data, {sec: {key: _coerce(value) if key != "openai_api_key" else value}})
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
    env = os.environ if environ is None else environ
    if explicit:
        path = Path(explicit)
    elif env.get("DYNMEM_HOME"):
        path = Path(env["DYNMEM_HOME"])
    else:
        base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
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
