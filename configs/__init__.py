"""Bundled settings and model prompts (``default.toml``, ``prompts/<task>.md``), shipped as package data.

Read through :func:`bundled` (``importlib.resources``), never through a path relative to the
source tree, so that a wheel installed outside the repository finds them.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def bundled(*parts: str) -> Path:
    """The file or folder ``parts`` inside this package, as a filesystem path.

    Raises:
        FileNotFoundError: the package was installed without its data (a packaging bug).
    """
    ref = files(__name__).joinpath(*parts)
    path = Path(str(ref))
    if not path.exists():
        raise FileNotFoundError(f"package data {__name__}/{'/'.join(parts)} is missing from this installation")
    return path
