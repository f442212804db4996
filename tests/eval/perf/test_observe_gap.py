"""eval.perf.observe_gap: its report shows every pause measured, and the timing helper pauses."""

from __future__ import annotations

import time

from eval.perf.observe_gap import _timed, render


def _row(gap: float, obs: float, rt: float) -> dict[str, object]:
    return {"gap_s": gap, "observe": {"p50_ms": obs, "p95_ms": obs * 2}, "round_trip": {"p50_ms": rt, "p95_ms": rt * 2}}


def test_the_report_has_one_row_per_pause() -> None:
    doc = {"machine": {"nproc": 2, "cpu": "cpu", "simd": "avx2"}, "n": 3,
           "rows": [_row(0.0, 3.25, 1.5), _row(0.3, 6.5, 2.0)]}
    text = render(doc, "python -m eval.perf.observe_gap")
    assert "| 0 | 3.25 | 6.50 | 1.50 | 3.00 |" in text
    assert "| 0.3 | 6.50 | 13.00 | 2.00 | 4.00 |" in text


def test_timed_calls_each_item_once_and_pauses_between() -> None:
    seen: list[int] = []
    t = time.perf_counter()
    out = _timed(seen.append, 3, 0.02, 5)
    assert seen == [5, 6, 7] and len(out) == 3
    assert time.perf_counter() - t >= 0.06
    assert _timed(seen.append, 2, 0.0, 0) and seen[-2:] == [0, 1]  # control: no pause still calls each once
