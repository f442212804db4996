"""The assistant reporting what it just changed (issue 11): when the user asked for a change in their own
words ("make it later in the evening", "halve the timeout") and only the reply names the value, the reply's
opening report is the memory. Only the opening sentence of the reply is read this way (its first clause,
and a later clause of it that says what holds now); explanations later in the reply and openings that
report nothing done are not. Each negative has a positive control."""

from __future__ import annotations

import pytest

from actors.llm.rules import RulesClient
from engine.models import Kind, Unit

SCOPE = "project:p"
CLIENT = RulesClient()


def found(user: str, assistant: str) -> list[tuple[str, str, Kind]]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")
    return [(c.belief, c.text, c.kind) for c in CLIENT.extract([unit], SCOPE)]


@pytest.mark.parametrize(
    ("user", "assistant", "value"),
    [
        ("the nightly digest goes out too early, make it after everyone logs off, like 9pm",
         "Done, the digest mail now goes out at 21:00 Europe/Lisbon:\n\n```python\nsend_at = '21:00'\n```", "21:00"),
        ("halve the session timeout, security review asked",
         "Done: session timeout now 15 minutes (`SESSION_TTL_MIN = 15` in `auth/settings.py`).", "15"),
        ("the printer service hangs forever when the VPN drops",
         "Lowered the connect timeout to 4s so a dropped tunnel gives up quickly.", "4s"),
        ("ok stop writing thumbnails next to the originals",
         "Moved the thumbnail output to `media/thumbs/` and left the originals where they were.", "media/thumbs/"),
    ],
)
def test_the_opening_report_of_a_change_is_kept(user: str, assistant: str, value: str) -> None:
    got = found(user, assistant)
    assert any(b == value and k is Kind.DECISION for b, _, k in got), got


def test_an_aside_after_the_value_is_not_part_of_the_memory() -> None:
    got = found("drop retries to three", "Done, the retry cap is now 3 (`MAX_RETRIES = 3` in `net/retry.py`).")
    texts = [t for b, t, _ in got if b == "3"]
    assert texts and all("(" not in t and "MAX_RETRIES" not in t for t in texts), got


def test_only_the_opening_clause_is_a_report() -> None:
    # The control: the same clause opening the reply is kept.
    assert any(b == "6 workers" or "6" in b for b, _, _ in found("more workers", "Raised the pool to 6 workers."))
    # Later in the reply, an explanation that names values is not a report of a change.
    later = found("why is the importer slow?",
                  "Profiled it. The parser spends 80 percent of its time in regex compiles, and the pool has 6 workers.")
    assert not any("6" in b for b, _, _ in later), later


def test_a_later_clause_of_the_opening_report_that_says_what_holds_now_is_a_report() -> None:
    got = found("bump the kiln controller to the new board and the newer toolchain",
                "Done, the controller builds for the RevC board now, and the firmware toolchain is 13.2 now.")
    assert any(b == "13.2" and k is Kind.DECISION for b, _, k in got), got
    # Without "now" the later clause explains; it is no report.
    plain = found("bump the kiln controller to the new board",
                  "Done, the controller builds for the RevC board now, and the old firmware toolchain was 11.3.")
    assert not any(b == "11.3" for b, _, _ in plain), plain


def test_an_opening_that_reports_nothing_done_is_not_read_as_a_report() -> None:
    # Present tense explanation, no "done", no past-tense verb, no "now": not a report.
    got = found("does the cache expire?", "The cache keeps entries for 600 seconds unless the key is touched.")
    assert not any(b == "600 seconds" or b == "600" for b, _, _ in got), got
    # The control: the same value reported as changed is kept.
    changed = found("keep cache entries longer", "Done, cache entries now expire after 900 seconds.")
    assert any("900" in b for b, _, _ in changed), changed


def test_a_setting_dropped_to_a_new_value_is_not_a_removal() -> None:
    got = found("drop the worker pool to four, the box is small", "")
    assert not any(t.startswith("The project no longer uses") for _, t, _ in got), got
    # The control: dropping a thing with no new value is a removal.
    assert any(t.startswith("The project no longer uses") for _, t, _ in found("drop memcached, nothing reads it", ""))


def test_a_reason_after_the_new_value_is_not_part_of_it() -> None:
    got = found("", "Raised the upload limit to 40 MB so a phone video fits.")
    assert any(b.startswith("40") for b, _, _ in got) and all("phone" not in b for b, _, _ in got), got
