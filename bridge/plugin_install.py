"""``dynmem plugin install|uninstall``: put the opencode plugin where opencode loads it.

- The target is validated: ``--project DIR`` must be an existing directory; the plugin goes to
  the repository holding it (``bridge.project.repository_root``), the same root the plugin
  names its project after. Nothing is created for a mistyped path.
- Install records how to start the sidecar (the ``dynmem`` executable of this installation)
  and the data directory in the installed copy, so the plugin needs neither ``PATH`` nor
  ``DYNMEM_HOME`` to be set in opencode's environment.
- Installing again is idempotent (same bytes). A project install and a global install may
  coexist: the plugin registers itself once per opencode process and directory, so the
  block is injected once (the copy loaded first serves; the report names the other copy).
- opencode npm-installs ``@opencode-ai/plugin`` (about 64 MB, from the registry) into every
  config folder that holds plugins, unless ``node_modules/`` exists and
  ``package-lock.json`` lists every dependency of ``package.json`` (../shared/OPENCODE.md).
  The plugin imports nothing, so install writes those two files and an empty
  ``node_modules/`` when the folder has none; an existing ``package.json`` is left alone.
- Uninstall removes only a file that is this plugin (it carries ``MARKER``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from engine.errors import InvalidInput, NotFound

__all__ = ["MARKER", "SOURCE", "install", "rendered", "target_folder", "uninstall"]

SOURCE = Path(__file__).resolve().parent / "opencode" / "dynmem.js"
MARKER = "// dynmem:installed"
PLACEHOLDER = "const INSTALLED = {}; // dynmem:installed (filled in by `dynmem plugin install`)"
PLUGIN_PACKAGE = "@opencode-ai/plugin"
PLUGIN_VERSION = "1.18.33"  # the plugin API this file is written against (../shared/OPENCODE.md)


def _global_config(environ: dict[str, str] | None = None) -> Path:
    from actors.config import env

    return Path(env("XDG_CONFIG_HOME", environ) or Path.home() / ".config") / "opencode"


def target_folder(project: str | None, global_: bool) -> Path:
    """The opencode config folder to install into (``.../.opencode`` or the global one)."""
    from bridge.project import repository_root

    if global_ and project:
        raise InvalidInput("plugin: give --project DIR or --global, not both")
    if global_:
        return _global_config()
    if not project:
        raise InvalidInput("plugin needs --project DIR or --global")
    folder = Path(project).expanduser()
    if not folder.is_dir():
        raise NotFound(f"plugin: {folder} is not an existing directory (nothing was created)")
    return repository_root(folder) / ".opencode"


def dynmem_executable() -> str:
    """The ``dynmem`` console script of this installation (next to the running Python)."""
    here = Path(sys.executable).parent / "dynmem"
    if here.exists():
        return str(here)
    argv0 = Path(sys.argv[0])
    if argv0.name == "dynmem" and argv0.exists():
        return str(argv0.resolve())
    import shutil

    found = shutil.which("dynmem")
    if not found:
        raise NotFound("plugin: cannot find the dynmem executable to record (install the package first)")
    return found


def rendered(bin_path: str, data_dir: Path) -> str:
    """The plugin source with this installation's executable and data directory filled in."""
    from bridge.plugin_redact import render_into

    source = render_into(SOURCE.read_text(encoding="utf-8"))  # this installation's secret detectors
    if PLACEHOLDER not in source:
        raise InvalidInput(f"plugin: {SOURCE} has no install placeholder")
    installed = {"bin": bin_path, "dataDir": str(data_dir)}
    return source.replace(PLACEHOLDER, f"const INSTALLED = {json.dumps(installed)}; {MARKER}", 1)


def _skip_runtime_npm_install(folder: Path) -> bool:
    """Let opencode skip its npm install of the plugin types in ``folder``; False if it had a package.json."""
    pkg_file = folder / "package.json"
    if pkg_file.exists() or (folder / "node_modules").exists():
        return False
    deps = {PLUGIN_PACKAGE: PLUGIN_VERSION}
    pkg_file.write_text(json.dumps({"dependencies": deps}, indent=2) + "\n", encoding="utf-8")
    lock = {"name": folder.name, "lockfileVersion": 3, "requires": True, "packages": {"": {"dependencies": deps}}}
    (folder / "package-lock.json").write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")
    (folder / "node_modules").mkdir()
    return True


def _is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(encoding="utf-8", errors="replace") or path.read_bytes() == SOURCE.read_bytes()
    except OSError:
        return False


def install(project: str | None, global_: bool, data_dir: Path) -> dict[str, Any]:
    """Install (or refresh) the plugin; returns what was done."""
    base = target_folder(project, global_)
    dest = base / "plugin" / "dynmem.js"
    if dest.exists() and not _is_ours(dest):
        raise InvalidInput(f"plugin: {dest} exists and is not the dynmem plugin; not overwritten")
    text = rendered(dynmem_executable(), data_dir)
    dest.parent.mkdir(parents=True, exist_ok=True)
    changed = not dest.exists() or dest.read_text(encoding="utf-8") != text
    if changed:
        tmp = dest.with_suffix(".js.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(dest)
    npm_skipped = _skip_runtime_npm_install(base)
    other = _global_config() / "plugin" / "dynmem.js" if not global_ else None
    return {"installed": str(dest), "changed": changed, "project_root": None if global_ else str(base.parent),
            "npm_install_skipped": npm_skipped,
            "also_installed_globally": bool(other and other.exists() and _is_ours(other))}


def uninstall(project: str | None, global_: bool) -> dict[str, Any]:
    """Remove the plugin file (only if it is ours); returns what was done."""
    dest = target_folder(project, global_) / "plugin" / "dynmem.js"
    if not dest.exists():
        return {"removed": None, "path": str(dest)}
    if not _is_ours(dest):
        raise InvalidInput(f"plugin: {dest} is not the dynmem plugin; not removed")
    dest.unlink()
    return {"removed": str(dest), "path": str(dest)}
