from __future__ import annotations

import pytest

from eval.tide.score import ProbeScore, has_token, harmful_rate, ntu, score_block


@pytest.mark.parametrize(("text", "token", "found"), [
    ("the default branch is main", "main", True),
    ("see example.domain for details", "main", False),
    ("the API listens on 8080.", "8080", True),
    ("the API listens on 18080", "8080", False),
    ("port 8080-alt", "8080", False),
    ("python:3.11-slim", "3.11", False),
    ("python:3.11-slim", "python:3.11-slim", True),
    ("run `make test` first", "make test", True),
    ("Uses PNPM", "pnpm", True),
])
def test_tokens_count_only_when_nothing_touches_them(text: str, token: str, found: bool) -> None:
    assert has_token(text, token) is found


def test_none_block_scores_zero_and_oracle_block_scores_one() -> None:
    gold, harmful = ("9131",), ("8080",)
    assert score_block("", gold, harmful) == (0.0, 0)
    s, h = score_block("The API listens on port 9131.", gold, harmful)
    assert s - h == 1.0
    # stale value next to the gold one: S = 1 but H = 1, so u = 0
    assert score_block("API on 9131. API on 8080.", gold, harmful) == (1.0, 1)


def test_partial_gold_and_empty_gold() -> None:
    assert score_block("use pnpm", ("pnpm", "make test"), ()) == (0.5, 0)
    assert score_block("we use Redis", (), ("Redis",)) == (0.0, 1)


def test_ntu_is_normalised_between_references() -> None:
    none = [ProbeScore(0, "d", 0.0, 0), ProbeScore(1, "d", 0.0, 0)]
    oracle = [ProbeScore(0, "d", 1.0, 0), ProbeScore(1, "d", 1.0, 0)]
    half = [ProbeScore(0, "d", 1.0, 0), ProbeScore(1, "d", 0.0, 0)]
    assert ntu(oracle, none, oracle) == 1.0
    assert ntu(none, none, oracle) == 0.0
    assert ntu(half, none, oracle) == 0.5
    assert ntu([ProbeScore(0, "d", 1.0, 1), ProbeScore(1, "d", 0.0, 1)], none, oracle) == -0.5
    assert harmful_rate([ProbeScore(0, "d", 1.0, 1), ProbeScore(1, "d", 0.0, 0)]) == 0.5
    # no gold anywhere: both references tie and NTU is undefined
    assert ntu(none, none, none) is None
