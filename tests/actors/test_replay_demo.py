"""`dynmem demo` is the README's first command: on the default settings (bundled MiniLM, rules client)
the bundled shop-api history must answer every bundled question with its current values and no stale
one. Session 16 broke one answer for an hour without any test noticing (an assistant's bulleted setup
summary read as labelled facts pushed the payments owner under the gate); this pins it, in process."""

from __future__ import annotations

from pathlib import Path

from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.replay import run_demo


def test_the_demo_answers_every_question_with_current_values(tmp_path: Path) -> None:
    rt = Runtime(tmp_path / "data", load_settings(), use_ray=False)
    try:
        report = run_demo(Pipeline(rt))
    finally:
        rt.shutdown()
    missed = [(a.question, a.expect, a.found, a.stale_found) for a in report.answers if not a.correct]
    assert report.answers and not missed, missed
