"""Benchmarks write reports only where asked: --out DIR, or eval/results with --canonical."""

from __future__ import annotations

import argparse
from pathlib import Path

from eval.cli import CANONICAL_RESULTS, report_dir


def test_a_benchmark_writes_no_report_unless_asked(tmp_path: Path) -> None:
    assert report_dir(argparse.Namespace(out=None, canonical=False)) is None
    assert report_dir(argparse.Namespace(out=None)) is None  # namespaces built by tests have no flag
    assert report_dir(argparse.Namespace(out=str(tmp_path / "r"), canonical=False)) == tmp_path / "r"
    assert (tmp_path / "r").is_dir()
    assert report_dir(argparse.Namespace(out=None, canonical=True)) == CANONICAL_RESULTS
    assert CANONICAL_RESULTS.name == "results" and CANONICAL_RESULTS.parent.name == "eval"
