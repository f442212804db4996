"""Typed JSON Lines rows: blank lines skipped, a bad line named by file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from eval.jsonl import rows


class _Row(BaseModel):
    a: int


def test_rows_are_numbered_by_their_line_and_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n', encoding="utf-8")
    assert [(n, r.a) for n, r in rows(path, _Row)] == [(1, 1), (3, 2)]


@pytest.mark.parametrize("bad", ['{"a": "one"}', '{"a": 1', '[1]', '{}'])
def test_a_bad_line_names_the_file_and_the_line(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n' + bad + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^x\.jsonl line 2: "):
        list(rows(path, _Row))
