"""Project identity: a project is its repository, the same from every subfolder and checkout.

The opencode plugin (``bridge/opencode/dynmem.js``, function ``repositoryRoot``) applies the
same rule to opencode's worktree, so that the CLI run anywhere in a repository and opencode
run anywhere in it (or in a linked ``git worktree`` of it) name the same project.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.errors import NotFound

__all__ = ["default_project", "known_projects", "project_exists", "repository_root"]


def repository_root(start: Path) -> Path:
    """The main checkout of the git repository holding ``start``, else ``start`` itself.

    A linked worktree (``.git`` is a file naming ``.../.git/worktrees/NAME``, which holds a
    ``commondir`` file) maps to the main checkout; a submodule (no ``commondir``) is its
    own repository. No ``git`` process is started: this runs before every CLI command.
    """
    start = start.resolve()
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder
        if dot_git.is_file():
            try:
                line = dot_git.read_text(encoding="utf-8").strip()
            except OSError:
                return folder
            if not line.startswith("gitdir:"):
                return folder
            gitdir = (folder / line.removeprefix("gitdir:").strip()).resolve()
            try:
                common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
            except OSError:
                return folder  # a submodule, or a worktree whose main checkout is gone
            return common.parent if common.name == ".git" else folder
    return start


def default_project(cwd: Path | None = None, environ: dict[str, str] | None = None) -> str:
    """``$DYNMEM_PROJECT``, else the repository of the current directory (as the plugin names it)."""
    from actors.config import env

    if env("DYNMEM_PROJECT", environ):
        return env("DYNMEM_PROJECT", environ)
    return str(repository_root(Path.cwd() if cwd is None else cwd))


def _folder(data_dir: Path, project: str) -> Path:
    from actors.engine_actor import _slug

    return data_dir / "projects" / _slug(project)


def project_exists(data_dir: Path, project: str) -> bool:
    """Whether ``project`` has stores in ``data_dir`` (checked without opening or creating any)."""
    folder = _folder(data_dir, project)
    return (folder / "log.sqlite").exists() or (folder / "memory.sqlite").exists()


def known_projects(data_dir: Path) -> list[dict[str, str]]:
    """Every project with stores in ``data_dir``: ``{"project", "folder"}``, sorted by name."""
    out = []
    for folder in sorted((data_dir / "projects").glob("*/")):
        if not ((folder / "log.sqlite").exists() or (folder / "memory.sqlite").exists()):
            continue
        try:
            name = str(json.loads((folder / "project.json").read_text(encoding="utf-8"))["project"])
        except (OSError, ValueError, KeyError):
            name = f"(unnamed: {folder.name})"
        out.append({"project": name, "folder": str(folder)})
    return sorted(out, key=lambda p: p["project"])


def require_project(data_dir: Path, project: str) -> None:
    """Raise ``NotFound`` (and create nothing) when ``project`` has no stores in ``data_dir``.

    A malformed name is ``InvalidInput`` first (engine.scopes has the one naming rule)."""
    from engine.scopes import project_scope

    project_scope(project)
    if not project_exists(data_dir, project):
        names = [p["project"] for p in known_projects(data_dir)]
        hint = f"; known: {', '.join(names[:5])}{' ...' if len(names) > 5 else ''}" if names else "; there is none yet"
        raise NotFound(f"no project named {project!r} in {data_dir}{hint} (`dynmem projects` lists them)")
