"""A clause that names a held setting with a new value (``engine.mentions``): it updates that setting, and
nothing else. Wording is our own; each negative has a positive control of the same shape."""

from __future__ import annotations

from hypothesis import given, settings as hsettings
from hypothesis import strategies as st

from engine.ingest import ingest
from engine.mentions import resolve_mention
from engine.models import Candidate, TrustState
from engine.state import MemoryTable
from factories import DAY, T0, cand, settings

S = settings()


def run(table: MemoryTable, c: Candidate, t: int = T0 + 100 * DAY):
    res = ingest(c, table, [], now_ms=t, step=1, settings=S)
    table.apply(res.effects)
    return res


def mention(text: str, value: str, t: int = T0 + DAY) -> Candidate:
    return cand(text, "", value, t=t, src=["u9"]).model_copy(update={"update_only": True})


def held(*facts: tuple[str, str, str]) -> MemoryTable:
    table = MemoryTable()
    for text, key, belief in facts:
        run(table, cand(text, key, belief, t=T0))
    return table


def servable(table: MemoryTable) -> list[str]:
    return sorted(m.text for m in table if m.servable)


def test_a_mention_of_a_held_setting_with_a_new_value_supersedes_it() -> None:
    table = held(("The image cache host is ic1.ber.example.org.", "image cache host", "ic1.ber.example.org"))
    res = run(table, mention("Since the migration the image cache sits on ic4.ber.example.org.", "ic4.ber.example.org"))
    assert res.outcome == "updated"
    assert servable(table) == ["Since the migration the image cache sits on ic4.ber.example.org."]
    [old] = [m for m in table if not m.servable]
    assert old.state == TrustState.SUPERSEDED and old.key == "image cache host"


def test_a_mention_of_no_held_setting_is_dropped_and_stores_nothing() -> None:
    table = held(("The image cache host is ic1.ber.example.org.", "image cache host", "ic1.ber.example.org"))
    res = run(table, mention("The thumbnail service sits on th2.ber.example.org.", "th2.ber.example.org"))
    assert res.outcome == "unmatched" and res.memory_id is None
    assert servable(table) == ["The image cache host is ic1.ber.example.org."]
    assert run(MemoryTable(), mention("The image cache sits on ic4.ber.example.org.", "ic4.ber.example.org")).outcome == "unmatched"


def test_a_port_mention_updates_a_port_and_never_another_kind_of_setting() -> None:
    table = held(("The metrics endpoint listens on port 9464.", "metrics endpoint port", "9464"),
                 ("The metrics endpoint scrape interval is 15 seconds.", "metrics endpoint interval", "15 seconds"))
    res = run(table, mention("The metrics endpoint was renumbered to 9470 by the platform team.", "9470"))
    assert res.outcome == "updated"
    assert "The metrics endpoint scrape interval is 15 seconds." in servable(table)
    assert "The metrics endpoint listens on port 9464." not in servable(table)


def test_the_subject_must_be_named_outside_the_value() -> None:
    table = held(("The exports live in /data/exports.", "exports location", "/data/exports"))
    assert resolve_mention(mention("Nightly runs write to /mnt/archive/exports now.", "/mnt/archive/exports"), table) is None
    assert resolve_mention(mention("The exports moved to /mnt/archive/dumps.", "/mnt/archive/dumps"), table) is not None


def test_a_version_is_never_updated_by_a_mention() -> None:
    table = held(("The project uses Erlang 26.2.", "erlang version", "26.2"))
    assert resolve_mention(mention("The release notes of Erlang name 27.1 as the fix.", "27.1"), table) is None


def test_the_subject_must_be_named_before_the_value() -> None:
    table = held(("The exports live in /data/exports.", "exports location", "/data/exports"))
    assert resolve_mention(mention("Everything under /mnt/archive/dumps is from the exports.", "/mnt/archive/dumps"), table) is None
    assert resolve_mention(mention("The exports now live under /mnt/archive/dumps.", "/mnt/archive/dumps"), table) is not None


def test_a_mention_that_restates_a_held_value_changes_nothing() -> None:
    table = held(("The image cache host is ic1.ber.example.org.", "image cache host", "ic1.ber.example.org"))
    again = mention("The image cache is on ic1.ber.example.org, ic4.ber.example.org is only its standby.", "ic4.ber.example.org")
    assert resolve_mention(again, table) is None


def test_the_most_specific_subject_wins() -> None:
    table = held(("The api listens on port 7000.", "api port", "7000"),
                 ("The admin api listens on port 7100.", "admin api port", "7100"))
    got = resolve_mention(mention("The admin api was moved to 7150.", "7150"), table)
    assert got is not None and got.key == "admin api port"


def test_the_subject_is_the_one_whose_value_follows() -> None:
    table = held(("The relay listens on port 7000.", "relay port", "7000"),
                 ("The proxy listens on port 7100.", "proxy port", "7100"),
                 ("The ledger db is at ldb1.corp.example.net.", "ledger db host", "ldb1.corp.example.net"))
    assert resolve_mention(mention("The relay in front of the proxy was moved to 7150.", "7150"), table) is None
    assert resolve_mention(mention("The relay hands traffic to the gateway on 7150.", "7150"), table) is None
    assert resolve_mention(mention("Priya's ledger db is at ldb9.corp.example.net.", "ldb9.corp.example.net"), table) is None
    assert resolve_mention(mention("In staging the ledger db is at ldb9.corp.example.net.", "ldb9.corp.example.net"), table) is None
    assert resolve_mention(mention("The relay was moved to 7150.", "7150"), table) is not None  # control
    assert resolve_mention(mention("The ledger db was rebuilt and is at ldb9.corp.example.net.", "ldb9.corp.example.net"), table) is None
    assert resolve_mention(mention("The ledger db now sits at ldb9.corp.example.net.", "ldb9.corp.example.net"), table) is not None


def test_a_key_named_without_a_kind_is_matched_by_the_shape_of_its_value() -> None:
    table = held(("The archive bucket is s3://ark-prod/raw.", "archive bucket", "s3://ark-prod/raw"))
    got = resolve_mention(mention("The archive bucket was renamed, it's s3://ark-eu/raw from today.", "s3://ark-eu/raw"), table)
    assert got is not None and got.key == "archive bucket"


def test_a_mention_only_reads_its_own_scope() -> None:
    table = held(("The image cache host is ic1.ber.example.org.", "image cache host", "ic1.ber.example.org"))
    other = mention("The image cache sits on ic4.ber.example.org.", "ic4.ber.example.org").model_copy(
        update={"scope": "project:q"})
    assert run(table, other).outcome == "unmatched"


_SUBJECTS = st.sampled_from(["ledger relay", "search proxy", "blob gateway", "session store", "audit sink"])


@hsettings(max_examples=60, deadline=None)
@given(held_subject=_SUBJECTS, said_subject=_SUBJECTS, old=st.integers(1024, 65535), new=st.integers(1024, 65535))
def test_a_mention_never_creates_a_memory_and_only_updates_the_setting_it_names(
        held_subject: str, said_subject: str, old: int, new: int) -> None:
    table = held((f"The {held_subject} listens on port {old}.", f"{held_subject} port", str(old)))
    before = len([m for m in table if m.servable])
    res = run(table, mention(f"The {said_subject} was renumbered to {new} this week.", str(new)))
    now = [m for m in table if m.servable]
    assert len(now) == before  # a mention replaces one memory or changes nothing; it never adds one
    if held_subject == said_subject and old != new:
        assert res.outcome == "updated" and now[0].belief == str(new)
    else:
        assert res.outcome in ("unmatched", "confirmed", "duplicate") and now[0].belief == str(old)
