"""The installed version, read from package metadata (pyproject.toml is the one place it is written)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DIST_NAME = "dynamics-memory"


def installed_version() -> str:
    """The version of the installed ``dynamics-memory`` distribution (editable or wheel)."""
    try:
        return version(DIST_NAME)
    except PackageNotFoundError:  # source tree on sys.path without `pip install`: say so, do not guess
        return "0+unknown"


__version__ = installed_version()
