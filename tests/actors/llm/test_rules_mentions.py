"""Mentions (``rules_extract._mention``): a durable clause that no reading keys and that holds one value of a
setting's shape is proposed as update-only, for the engine to apply to a held setting (``engine.mentions``).
Wording is our own; each negative has a positive control of the same shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from actors.config import load_settings
from actors.launch import Runtime
from actors.llm.rules import RulesClient
from actors.pipeline import Pipeline
from actors.replay import replay_file
from engine.models import Unit

SCOPE = "project:p"
CLIENT = RulesClient()


def mentions(user: str, assistant: str = "") -> list[str]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")
    return [c.belief for c in CLIENT.extract([unit], SCOPE) if c.update_only]


@pytest.mark.parametrize("said,value", [
    ("the image cache now sits on ic4.ber.example.org", "ic4.ber.example.org"),
    ("the metrics endpoint was renumbered to 9470 by the platform team", "9470"),
])
def test_a_change_no_reading_keys_is_proposed_as_update_only(said: str, value: str) -> None:
    assert mentions(said) == [value]


@pytest.mark.parametrize("said", [
    "the metrics endpoint was renumbered to 9470 and 9471",  # two values: which one is the setting's?
    "the metrics endpoint times out after 9470 ms",  # a quantity
    "the metrics endpoint returns status 503 when the disk fills",  # a number of the noun before it
    'the metrics endpoint logs "listening on 9470" at start',  # a value inside a quotation
    "should the metrics endpoint move to 9470?",  # a question
    "maybe we could move the metrics endpoint to 9470 next quarter",  # a plan
    "point the metrics endpoint at 9470",  # a request: no subject before the value
    "I moved the metrics endpoint to 9470 on my laptop",  # what a person did
    "the release notes name 9.47.0 as the fixed version",  # a version is no mention
    "don't renumber the metrics endpoint to 9470",  # denied
    "the metrics endpoint is slower than the one on 9470",  # compared
    "the metrics endpoint could be overridden with 9470 for a demo",  # supposed
])
def test_what_is_no_new_value_of_a_setting_is_not_proposed(said: str) -> None:
    assert mentions(said) == []
    assert mentions("the metrics endpoint was renumbered to 9470 by the platform team") == ["9470"]  # control


def _replay(tmp_path: Path, turns: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    with open(tmp_path / "h.jsonl", "w", encoding="utf-8") as f:
        for i, (user, assistant) in enumerate(turns):
            f.write(json.dumps({"project": "p", "session": "s", "turn": i + 1, "ts_ms": 1000 * (i + 1),
                                "user": user, "assistant": assistant}) + "\n")
    rt = Runtime(tmp_path / "data", load_settings(None), use_ray=False)
    try:
        pipe = Pipeline(rt)
        replay_file(pipe, tmp_path / "h.jsonl")
        return sorted((m.state.value, m.key, m.text) for m in pipe.memories("p"))
    finally:
        rt.shutdown()


def test_a_mention_supersedes_the_setting_it_names_and_alone_stores_nothing(tmp_path: Path) -> None:
    got = _replay(tmp_path, [
        ("the image cache is at ic1.ber.example.org", "Noted."),
        ("the image cache now sits on ic4.ber.example.org", "Thanks."),
        ("the preview renderer now sits on th2.ber.example.org", "ok"),  # names no held setting
    ])
    servable = [(key, text) for state, key, text in got if state == "active"]
    assert servable == [("image cache host", "The image cache now sits on ic4.ber.example.org.")]
    assert ("superseded", "image cache host", "The image cache host is ic1.ber.example.org.") in got
