"""The ``seeded`` fixture of the inspector's tests (see tests/inspector_seed.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.clock import FakeClock
from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from inspector_seed import Seeded, seed


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[Seeded]:
    clock = FakeClock(1_772_445_600_000)  # 2026-03-02T10:00Z
    data = tmp_path / "data"
    rt = Runtime(data, load_settings(), use_ray=False, clock=clock)
    pipe = Pipeline(rt)
    seed(pipe, clock)
    yield Seeded(pipe, rt, data, clock)
    rt.shutdown()
