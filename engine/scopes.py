"""Scopes, enforced in one place: a project reads its own scope plus ``global``, nothing else."""

from __future__ import annotations

import re

from engine.errors import InvalidInput, ScopeViolation
from engine.models import GLOBAL_SCOPE

_PROJECT = re.compile(r"^[^\x00-\x1f]{1,512}$")


def project_scope(project: str) -> str:
    """The scope string of a project (``project:<name>``)."""
    if not project or not _PROJECT.match(project) or project.strip() != project:
        raise InvalidInput(f"invalid project name: {project!r}")
    return f"project:{project}"


def readable_scopes(project: str) -> frozenset[str]:
    """Every scope that a recall for ``project`` may read."""
    return frozenset({project_scope(project), GLOBAL_SCOPE})


def scope_for(project: str, hint: str) -> str:
    """Resolve a scope hint (``project``, ``global`` or a full scope) for a write from ``project``."""
    if hint in ("", "project"):
        return project_scope(project)
    if hint == GLOBAL_SCOPE:
        return GLOBAL_SCOPE
    if hint == project_scope(project):
        return hint
    raise ScopeViolation(f"project {project!r} cannot write to scope {hint!r}")


def check_readable(project: str, scope: str) -> None:
    """Raise ScopeViolation unless ``project`` may read ``scope``."""
    if scope not in readable_scopes(project):
        raise ScopeViolation(f"scope {scope!r} is not readable from project {project!r}")
