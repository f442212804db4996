"""Clocks: the only place that reads wall-clock time. Tests pass a FakeClock."""

from __future__ import annotations

import time


class Clock:
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class FakeClock(Clock):
    def __init__(self, start_ms: int = 1_767_225_600_000) -> None:  # 2026-01-01T00:00:00Z
        self.t = start_ms

    def now_ms(self) -> int:
        return self.t

    def advance(self, ms: int) -> None:
        self.t += ms
