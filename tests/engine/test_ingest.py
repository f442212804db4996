from __future__ import annotations

from engine.ingest import ingest
from engine.models import TrustState
from engine.state import MemoryTable
from factories import DAY, T0, cand, settings

S = settings()


def run(table: MemoryTable, c, neighbours=(), now=T0 + 100 * DAY, step=1):
    res = ingest(c, table, list(neighbours), now_ms=now, step=step, settings=S)
    table.apply(res.effects)
    return res


def servable(table: MemoryTable) -> list[str]:
    return sorted(m.text for m in table if m.servable)


def test_exact_duplicate_adds_evidence_without_a_new_row() -> None:
    table = MemoryTable()
    first = run(table, cand("The API listens on port 9090.", "api port", "9090", src=["u1"]))
    again = run(table, cand("API port is 9090.", "api port", "9090", src=["u2"], t=T0 + DAY))
    assert first.outcome == "created" and again.outcome == "confirmed"
    assert len(table) == 1
    m = table.get(first.memory_id)
    assert m.evidence == 2 and m.source_unit_ids == ("u1", "u2")


def test_same_key_new_value_supersedes_by_valid_time() -> None:
    table = MemoryTable()
    old = run(table, cand("The API listens on port 8080.", "api port", "8080", t=T0, src=["u1"]))
    new = run(table, cand("The API listens on port 9090.", "api port", "9090", t=T0 + DAY, src=["u5"]))
    assert new.outcome == "updated"
    assert table.get(old.memory_id).state == TrustState.SUPERSEDED
    assert table.get(old.memory_id).valid_to_ms == T0 + DAY
    assert servable(table) == ["The API listens on port 9090."]


def test_older_evidence_arriving_late_is_kept_as_history_not_served() -> None:
    table = MemoryTable()
    run(table, cand("The API listens on port 7070.", "api port", "7070", t=T0 + 9 * DAY, src=["u9"]))
    late = run(table, cand("The API listens on port 8080.", "api port", "8080", t=T0, src=["u1"]))
    mid = run(table, cand("The API listens on port 9090.", "api port", "9090", t=T0 + 5 * DAY, src=["u5"]))
    assert late.outcome == mid.outcome == "historical"
    assert servable(table) == ["The API listens on port 7070."]
    # The validity intervals chain without overlap: 8080 until day 5, 9090 until day 9.
    assert table.get(late.memory_id).valid_to_ms == T0 + 5 * DAY
    assert table.get(mid.memory_id).valid_to_ms == T0 + 9 * DAY


def test_retired_value_from_older_evidence_stays_retired() -> None:
    table = MemoryTable()
    old = run(table, cand("We use npm.", "package manager", "npm", t=T0, src=["u1"]))
    run(table, cand("We use pnpm.", "package manager", "pnpm", t=T0 + DAY, src=["u4"]))
    # The same old turn is extracted again (a retried job): nothing changes.
    assert run(table, cand("We use npm.", "package manager", "npm", t=T0, src=["u1"])).outcome == "duplicate"
    # Another old turn (e.g. an older export of the log) says it again: absorbed by the tombstone.
    replayed = run(table, cand("We use npm.", "package manager", "npm", t=T0, src=["u0"]))
    assert replayed.outcome == "absorbed"
    assert table.get(old.memory_id).state == TrustState.SUPERSEDED
    assert servable(table) == ["We use pnpm."]
    # Positive control: newer evidence asserting npm again is a genuine new version.
    back = run(table, cand("We use npm again.", "package manager", "npm", t=T0 + 3 * DAY, src=["u9"]))
    assert back.outcome == "updated"
    assert servable(table) == ["We use npm again."]


def test_negation_retires_the_dropped_value() -> None:
    table = MemoryTable()
    run(table, cand("Carts are stored in Redis.", "cart storage", "redis", t=T0))
    res = run(table, cand("The project no longer uses Redis.", "", "redis", t=T0 + DAY, negated=True, src=["u2"]))
    assert res.outcome == "updated"
    assert servable(table) == ["The project no longer uses Redis."]


def test_near_duplicate_with_other_value_is_contested_and_queued() -> None:
    table = MemoryTable()
    a = run(table, cand("Deploys go through the blue cluster.", t=T0))
    res = run(table, cand("Deploys go through the green cluster.", t=T0 + DAY, src=["u2"]),
              neighbours=[(table.get(a.memory_id), 0.93)])
    assert res.outcome == "contested"
    assert {m.state for m in table} == {TrustState.CONTESTED}
    assert [j.kind for j in res.effects.jobs] == ["adjudicate"]
    # Positive control: below tau_dup it is simply a new memory.
    other = run(table, cand("Logs are shipped to Loki.", t=T0 + DAY, src=["u3"]), neighbours=[(table.get(a.memory_id), 0.5)])
    assert other.outcome == "created"


def test_scopes_never_interact_in_ingest() -> None:
    table = MemoryTable()
    run(table, cand("The API listens on port 8080.", "api port", "8080", scope="project:a"))
    res = run(table, cand("The API listens on port 9090.", "api port", "9090", scope="project:b", t=T0 + DAY))
    assert res.outcome == "created"
    assert len(servable(table)) == 2


def test_a_keyed_removal_retires_only_the_value_it_names() -> None:
    table = MemoryTable()
    run(table, cand("Lint with `ruff check`.", "lint command", "ruff check", t=T0, src=["u1"]))
    res = run(table, cand("We no longer run `make lint`.", "lint command", "make lint", t=T0 + DAY, src=["u2"], negated=True))
    assert "Lint with `ruff check`." in servable(table)
    run(table, cand("We no longer run `ruff check`.", "lint command", "ruff check", t=T0 + 2 * DAY, src=["u3"], negated=True))
    assert "Lint with `ruff check`." not in servable(table)  # positive control: the named value is retired
    assert res.outcome == "created"


def test_facts_stated_with_a_retired_value_go_stale_with_it() -> None:
    table = MemoryTable()
    run(table, cand("The API listens on port 8080.", "api port", "8080", t=T0, src=["u1"]))
    dep = run(table, cand("Staging is reached at http://staging.internal:8080/api.", "staging url",
                          "http://staging.internal:8080/api", t=T0 + DAY, src=["u2"]))
    other = run(table, cand("The frontend dev server runs on port 5173.", "frontend port", "5173", t=T0 + DAY, src=["u3"]))
    run(table, cand("The API listens on port 9090.", "api port", "9090", t=T0 + 2 * DAY, src=["u4"]))
    assert table.get(dep.memory_id).state == TrustState.SUPERSEDED
    assert table.get(other.memory_id).state == TrustState.ACTIVE  # positive control: unrelated facts stay
    # A plain word is not distinctive enough to retire anything by itself.
    run(table, cand("We use npm.", "package manager", "npm", t=T0, src=["u5"]))
    note = run(table, cand("The npm registry mirror is slow on Mondays.", t=T0 + DAY, src=["u6"]))
    run(table, cand("We use pnpm.", "package manager", "pnpm", t=T0 + 3 * DAY, src=["u7"]))
    assert table.get(note.memory_id).state == TrustState.ACTIVE


def test_a_retired_number_never_reaches_a_model_name_that_ends_in_it() -> None:
    table = MemoryTable()
    run(table, cand("The watchdog timeout is 2000 ms.", "watchdog timeout", "2000", t=T0, src=["u1"]))
    part = run(table, cand("The probe is a PT2000.", "probe", "pt2000", t=T0 + DAY, src=["u2"]))
    url = run(table, cand("The relay answers on localhost:2000.", "relay url", "localhost:2000", t=T0 + DAY, src=["u3"]))
    run(table, cand("The watchdog timeout is 1500 ms.", "watchdog timeout", "1500", t=T0 + 2 * DAY, src=["u4"]))
    assert table.get(part.memory_id).state == TrustState.ACTIVE  # "2000" is the tail of a part's name, not the value
    assert table.get(url.memory_id).state == TrustState.SUPERSEDED  # positive control: set off by punctuation


def test_a_retired_version_still_reaches_a_tool_name_written_before_it() -> None:
    table = MemoryTable()
    run(table, cand("The runtime is 3.11.", "runtime version", "3.11", t=T0, src=["u1"]))
    glued = run(table, cand("CI builds with python3.11 images.", t=T0 + DAY, src=["u2"]))
    run(table, cand("The runtime is 3.12.", "runtime version", "3.12", t=T0 + 2 * DAY, src=["u3"]))
    assert table.get(glued.memory_id).state == TrustState.SUPERSEDED


def test_a_retired_name_with_a_version_in_it_still_reaches_where_it_is_written() -> None:
    table = MemoryTable()
    run(table, cand("The runner image is node20.", "runner image", "node20", t=T0, src=["u1"]))
    uses = run(table, cand("The e2e job also runs on node20 runners.", t=T0 + DAY, src=["u2"]))
    run(table, cand("The runner image is node22.", "runner image", "node22", t=T0 + 2 * DAY, src=["u3"]))
    assert table.get(uses.memory_id).state == TrustState.SUPERSEDED


def test_a_retired_whole_number_never_reaches_a_name_glued_to_it() -> None:
    table = MemoryTable()
    run(table, cand("The key size is 256 bits.", "key size", "256", t=T0, src=["u1"]))
    glued = run(table, cand("Artifacts are hashed with sha256.", t=T0 + DAY, src=["u2"]))
    run(table, cand("The key size is 384 bits.", "key size", "384", t=T0 + 2 * DAY, src=["u3"]))
    assert table.get(glued.memory_id).state == TrustState.ACTIVE


def test_a_retired_option_reaches_only_where_the_option_is_written() -> None:
    table = MemoryTable()
    run(table, cand("The worker runs `rq worker --jobs=3`.", "worker command", "--jobs=3", t=T0, src=["u1"]))
    count = run(table, cand("The nightly export runs 3 jobs in parallel.", t=T0 + DAY, src=["u2"]))
    run(table, cand("The worker runs `rq worker --jobs=5`.", "worker command", "--jobs=5", t=T0 + 2 * DAY, src=["u3"]))
    assert table.get(count.memory_id).state == TrustState.ACTIVE


def test_a_plain_retired_value_propagates_only_where_its_key_is_named() -> None:
    table = MemoryTable()
    run(table, cand("The default branch is master.", "default branch", "master", t=T0, src=["u1"]))
    dep = run(table, cand("Production deploys from the default branch, master.", t=T0 + DAY, src=["u2"]))
    other = run(table, cand("The master bedroom joke is in the README.", t=T0 + DAY, src=["u3"]))
    run(table, cand("The default branch is main.", "default branch", "main", t=T0 + 2 * DAY, src=["u4"]))
    assert table.get(dep.memory_id).state == TrustState.SUPERSEDED
    assert table.get(other.memory_id).state == TrustState.ACTIVE  # positive control


def test_a_removal_for_one_subject_leaves_other_keys_with_that_value() -> None:
    table = MemoryTable()
    run(table, cand("User sessions are stored in Redis.", "session storage", "redis", t=T0, src=["u1"]))
    run(table, cand("Rate limit counters are stored in Redis.", "counter storage", "redis", t=T0 + DAY, src=["u2"]))
    run(table, cand("Rate limit counters are no longer stored in Redis.", "counter storage", "redis",
                    t=T0 + 2 * DAY, src=["u3"], negated=True))
    assert "User sessions are stored in Redis." in servable(table)
    assert "Rate limit counters are stored in Redis." not in servable(table)  # positive control


def test_a_removal_without_a_subject_retires_every_use_of_the_value() -> None:
    table = MemoryTable()
    run(table, cand("User sessions are stored in Redis.", "session storage", "redis", t=T0, src=["u1"]))
    run(table, cand("The project no longer uses Redis.", "", "redis", t=T0 + DAY, src=["u2"], negated=True))
    assert servable(table) == ["The project no longer uses Redis."]


def test_a_removal_without_a_subject_retires_facts_that_only_name_the_value() -> None:
    table = MemoryTable()
    run(table, cand("The anti-cheat SDK lives in third_party/eac, built with EasyAntiCheat.", "", "third_party/eac",
                    t=T0, src=["u1"]))
    run(table, cand("Match logs are kept for 30 days.", "", "30", t=T0, src=["u2"]))
    later = run(table, cand("EasyAntiCheat must be linked statically.", "", "", t=T0 + 3 * DAY, src=["u4"]))
    res = run(table, cand("The project no longer uses EasyAntiCheat.", "", "easyanticheat", t=T0 + 2 * DAY,
                          src=["u3"], negated=True))
    assert res.outcome == "updated"
    assert "The anti-cheat SDK lives in third_party/eac, built with EasyAntiCheat." not in servable(table)
    assert "Match logs are kept for 30 days." in servable(table)  # names something else
    assert table.get(later.memory_id).servable  # stated after the removal: a new assertion, kept
    audit = [e for e in res.effects.audit if e.action == "supersede"]
    assert audit and "removed value" in audit[0].reason


def test_a_removal_of_a_short_plain_word_names_nothing() -> None:
    table = MemoryTable()
    run(table, cand("The go module is used by the CLI.", "", "", t=T0, src=["u1"]))
    run(table, cand("No longer current: go.", "", "go", t=T0 + DAY, src=["u2"], negated=True))
    assert "The go module is used by the CLI." in servable(table)


def test_a_removal_reaches_a_value_inside_a_dotted_host_name() -> None:
    table = MemoryTable()
    run(table, cand("Uploads go to `thumbs-old.objects.sa-inland-4.example.org` with signed URLs.", "", "", t=T0, src=["u1"]))
    run(table, cand("Reports are rendered in sa-inland-40.", "", "", t=T0, src=["u2"]))
    res = run(table, cand("No longer current: sa-inland-4.", "", "sa-inland-4", t=T0 + DAY, src=["u3"], negated=True))
    assert res.outcome == "updated"
    assert "Uploads go to `thumbs-old.objects.sa-inland-4.example.org` with signed URLs." not in servable(table)
    assert "Reports are rendered in sa-inland-40." in servable(table)  # another value that shares a prefix
