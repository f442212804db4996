"""Hand-written data files of the benchmarks: JSON Lines, one typed row a line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

RowT = TypeVar("RowT", bound=BaseModel)


def rows(path: Path, model: type[RowT]) -> Iterator[tuple[int, RowT]]:
    """``(line number, row)`` for each non-blank line of ``path``; a line that is no valid ``model``
    raises ``ValueError`` naming the file, the line and the first problem."""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield n, model.model_validate_json(line)
        except ValidationError as e:
            first = e.errors()[0]
            raise ValueError(f"{path.name} line {n}: {first['loc']} {first['msg']}") from None
