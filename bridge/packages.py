"""Our top-level packages must be ours: another distribution of the same name must not shadow them.

dynamics-memory installs the top-level packages ``engine``, ``actors``, ``bridge``, ``eval``,
``configs`` and ``examples`` (the design fixes the folders). Generic names collide: ``actors``
and ``eval`` are also the names of other distributions on the package index. Installed into the
same environment, such a distribution overwrites our files or is imported in their place,
silently. :func:`shadowed` finds a package imported from somewhere else than ours (fast; the
CLI runs it before importing anything else); :func:`package_conflicts` also asks the installed
distributions' metadata (slower; ``dynmem doctor`` runs it). Only the standard library is used
here, since any of our own packages may be the one shadowed.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import sys
from pathlib import Path

OWN = ("engine", "actors", "bridge", "eval", "configs", "examples")
DISTRIBUTION = "dynamics-memory"
ADVICE = "install dynamics-memory in a virtual environment of its own (README: Package names)"


def _home() -> Path:
    """The folder that holds our ``bridge/`` package, hence every package of ours."""
    return Path(__file__).resolve().parent.parent


def shadowed() -> list[str]:
    """Our top-level packages that would be imported from somewhere else than ours, with where from."""
    home = _home()
    problems = []
    for name in OWN:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):  # a broken module of that name
            spec = None
        if spec is None:
            problems.append(f"'{name}' cannot be imported")
            continue
        places = [Path(p).resolve() for p in (spec.submodule_search_locations or [])]
        if not places:  # a module (name.py), not our package
            problems.append(f"'{name}' is the module {spec.origin}, not dynamics-memory's package")
        elif any(p.parent != home for p in places):
            problems.append(f"'{name}' is imported from {', '.join(map(str, places))}, not from {home / name}")
    return problems


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def package_conflicts() -> list[str]:
    """:func:`shadowed`, plus every other installed distribution that also installs one of our names."""
    problems = shadowed()
    owners = importlib.metadata.packages_distributions()
    for name in OWN:
        others = sorted({d for d in owners.get(name, []) if _canonical(d) != DISTRIBUTION})
        if others:
            problems.append(f"the distribution {', '.join(others)} also installs a top-level '{name}'")
    return problems


def exit_if_shadowed() -> None:
    """Stop the CLI with one clear line (``error[package_conflict]: ...``, exit 1) if a package of ours is shadowed."""
    problems = shadowed()
    if problems:
        print(f"error[package_conflict]: {'; '.join(problems)}; {ADVICE}", file=sys.stderr)
        raise SystemExit(1)
