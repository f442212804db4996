"""The bundled example history and its questions (``dynmem demo``), shipped as package data."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def bundled(name: str) -> Path:
    """The example file ``name`` as a filesystem path.

    Raises:
        FileNotFoundError: the package was installed without its data (a packaging bug).
    """
    path = Path(str(files(__name__).joinpath(name)))
    if not path.exists():
        raise FileNotFoundError(f"package data {__name__}/{name} is missing from this installation")
    return path
