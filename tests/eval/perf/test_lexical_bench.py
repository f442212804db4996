from __future__ import annotations

from eval.perf import fts5_probe, lexical


def test_lexical_bench_reports_both_indexes_and_that_they_agree() -> None:
    rows = lexical.measure(300, 8)
    assert [r["index"] for r in rows] == ["per-document loop (before)", "compact (after)"]
    assert rows[-1]["same_answers"] is True
    assert all(float(r["p50_ms"]) >= 0 and float(r["heap_mib"]) > 0 for r in rows)  # type: ignore[arg-type]


def test_fts5_probe_measures_every_variant() -> None:
    out = fts5_probe.probe(300, 5)
    assert out["size"] == 300
    assert set(out) == {"size", "compact_ms", "fts5_top30_ms", "fts5_top120_ms", "fts5_count_ms"}
