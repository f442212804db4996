from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from engine.values import named_versions, other_values, other_version_of_a_name, value_shapes


@pytest.mark.parametrize(("text", "shape", "value"), [
    ("the broker answers on 5672", "number", "5672"),
    ("we pin node 20.11.1 in CI", "version", "20.11.1"),
    ("reports are mailed at 06:45", "time", "06:45"),
    ("metrics go to graf.internal.example.org", "host", "graf.internal.example.org"),
    ("exports land in /srv/exports/daily", "path", "/srv/exports/daily"),
    ("docs live at https://docs.example.dev/v2", "url", "https://docs.example.dev/v2"),
    ("docs live at https://docs.example.dev/v2", "host", "docs.example.dev"),  # a URL names its host too
    ("install with `pip install -e .[dev]` on 3.12", "version", "3.12"),
    ("the runner image is `ghcr.io/acme/runner:3.4`", "version", "3.4"),  # values inside code count
    ("payroll exports run on Fridays", "day", "friday"),  # a day of the week, one or many
])
def test_values_are_read_by_their_shape(text: str, shape: str, value: str) -> None:
    assert value in value_shapes(text).get(shape, frozenset())


def test_a_file_name_inside_a_path_is_no_host() -> None:
    assert "host" not in value_shapes("config is read from ~/.config/tool/config.toml")


def test_other_values_needs_a_shared_shape_with_different_values() -> None:
    assert other_values("the cache listens on 6379", "the cache listens on 6380")
    assert not other_values("the cache listens on 6379", "the cache is redis, port 6379")
    assert not other_values("the cache listens on 6379", "the cache host is cache.lan")  # no shape in common
    assert other_values("the audit report goes out every Monday", "audit reports now go out on Wednesdays")
    assert not other_values("the audit report goes out every Monday", "audit reports go out on Mondays")


@given(st.text(max_size=120))
def test_a_text_never_gives_other_values_than_itself(text: str) -> None:
    assert not other_values(text, text)


# One clock pattern for the project: value shapes, key kinds and the rules client's schedule reading.
@given(st.integers(0, 23), st.integers(0, 59), st.booleans())
def test_every_clock_time_is_read_as_a_time_everywhere(hour: int, minute: int, padded: bool) -> None:
    import re

    from engine.keys import value_kind
    from engine.values import CLOCK_TIME

    said = f"{hour:02d}:{minute:02d}" if padded else f"{hour}:{minute:02d}"
    assert re.fullmatch(CLOCK_TIME, said)
    assert value_shapes(f"the export runs at {said} every night")["time"] == {said}
    assert value_kind(said) == "time"


@pytest.mark.parametrize("text", [
    "the build took 25:61 minutes",   # no minute 61
    "rotate after 99:10 hours",       # no hour 99
    "bump the image to 1.2:30",       # part of a version-like name
    "ratio 3:30.5 in the report",     # part of a decimal
])
def test_a_number_that_only_looks_like_a_clock_is_no_time(text: str) -> None:
    assert "time" not in value_shapes(text)  # positive control: the property test above


def _read_every_shape(text: str) -> dict[str, set[str]]:
    """``values._read`` without its hints: every shape's pattern scanned (the reference)."""
    from engine import values

    out: dict[str, set[str]] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(values, "_may_hold", lambda name, text, first_digit: True)  # every shape scanned
        values._read(text, out)
    return out


# Characters and pieces of every shape (and the Kelvin sign, a letter to ``[a-z]`` under re.I).
_SHAPE_CHARS = st.sampled_from(list("ab.Zk:/`~@-_9071 v\n") + [
    " ", " ", "://", "http", "x.io", "cache.lan", "9:05", "12:30", "1.2", "v1.2.3", "ab/cd", "`x 1.2`", "\u212a"])


@given(st.lists(_SHAPE_CHARS, max_size=40).map("".join) | st.text(max_size=80))
@example("at 9:05, see x.io, go 1.2 or v3, ./a, `k`, s3://b")  # each shape at its shortest
def test_hints_skip_only_scans_that_cannot_match(text: str) -> None:
    from engine.values import _read

    hinted: dict[str, set[str]] = {}
    _read(text, hinted)
    assert hinted == _read_every_shape(text)


def test_the_reference_read_scans_what_hints_skip() -> None:
    # positive control: the reference really scans every shape (a hint that never matches would
    # make both reads empty), and the hinted read finds the same values
    from engine.values import _read

    text = "docs at https://docs.example.dev/v2 from 06:45, `uv 3.11`, port 8080, ~/x/y"
    hinted: dict[str, set[str]] = {}
    _read(text, hinted)
    assert set(hinted) == {"url", "host", "code", "version", "time", "number", "path"}
    assert hinted == _read_every_shape(text)


def test_a_version_belongs_to_the_name_before_it() -> None:
    assert named_versions("Zig 0.12, build with `zig build`.") == {"zig": {"0.12"}}
    assert other_version_of_a_name("Zig 0.12, build with `zig build`.", "The toolchain is Zig 0.13 now.")
    # Negatives: two names, or the same version said again; the control above is the same name.
    assert not other_version_of_a_name("Zig 0.12 for the compiler", "Python 3.12 for the scripts")
    assert not other_version_of_a_name("Zig 0.12 for the compiler", "we stay on Zig 0.12")
    assert other_version_of_a_name("Zig 0.12 and Python 3.11", "still Zig 0.12, Python 3.12 too")  # one of two moved


@given(st.text(max_size=120))
@example("from 3.11 to 3.12, the timeout is 2.5 and the ratio 0.75")
def test_a_function_word_or_a_measure_never_names_a_version(text: str) -> None:
    assert not set(named_versions(text)) & {"from", "to", "is", "the", "version", "timeout", "ratio"}
