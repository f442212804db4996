"""eval.perf.http_hop: the sidecar's part is read from Server-Timing, and the report has a row per path timed."""

from __future__ import annotations

from eval.perf.http_hop import _server_ms, render


def test_server_timing_is_the_sum_of_its_durations() -> None:
    assert _server_ms("admit;dur=0.1, serve;dur=2.4") == 2.5
    assert _server_ms(None) == 0.0 and _server_ms("") == 0.0  # control: no header, nothing counted


def test_the_report_has_a_row_per_path_timed_and_skips_empty_ones() -> None:
    row = {"n": 3, "p50_ms": 2.5, "p95_ms": 4.0, "mean_ms": 2.75}
    doc = {"machine": {"nproc": 2, "cpu": "cpu", "loadavg_start": [0.5]}, "n": 3, "loadavg_end": [0.6],
           "rows": {"ray": row, "http": {**row, "p50_ms": 3.0}, "http, in the sidecar": {"n": 0}}}
    text = render(doc, "python -m eval.perf.http_hop")
    assert "| ray | 2.50 | 4.00 | 2.75 |" in text
    assert "| http | 3.00 | 4.00 | 2.75 |" in text
    assert "in the sidecar" not in text
