"""Keys decided by meaning: a paraphrased key of the same kind is read as the known one."""

from __future__ import annotations

import numpy as np
import pytest

from engine.keys import key_kind, resolve_key


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


KNOWN = {"api port": unit(1, 0, 0), "frontend port": unit(0, 1, 0), "api host": unit(1, 0, 0.01)}


def test_a_close_key_of_the_same_kind_is_read_as_the_known_key() -> None:
    assert resolve_key("api server port", unit(1, 0.2, 0), KNOWN, 0.8) == "api port"


def test_a_key_of_another_kind_is_never_merged_however_close() -> None:
    assert resolve_key("api server host", unit(1, 0, 0), {"api port": KNOWN["api port"]}, 0.8) == "api server host"
    assert resolve_key("api server host", unit(1, 0, 0), KNOWN, 0.8) == "api host"  # positive control


def test_a_distant_key_stays_its_own() -> None:
    assert resolve_key("worker port", unit(0.5, 0.5, 0.7), KNOWN, 0.8) == "worker port"


def test_a_known_key_is_kept_and_the_threshold_above_one_turns_resolution_off() -> None:
    assert resolve_key("frontend port", unit(1, 0, 0), KNOWN, 0.8) == "frontend port"
    assert resolve_key("api server port", unit(1, 0, 0), KNOWN, 1.01) == "api server port"


def test_a_bare_head_is_the_scopes_only_key_of_its_kind() -> None:
    far = unit(0, 0, 1)  # no cosine says so: the head alone does
    assert resolve_key("interval", far, {"sync interval": unit(1, 0, 0), "api port": unit(0, 1, 0)}, 0.8) \
        == "sync interval"
    # Two keys of the kind: the head names neither.
    two = {"sync interval": unit(1, 0, 0), "backup interval": unit(0, 1, 0)}
    assert resolve_key("interval", far, two, 0.8) == "interval"
    # A key of two words is compared by meaning as before, and resolution turned off stays off.
    assert resolve_key("retry interval", far, {"sync interval": unit(1, 0, 0)}, 0.8) == "retry interval"
    assert resolve_key("interval", far, {"sync interval": unit(1, 0, 0)}, 1.01) == "interval"


def test_the_kind_is_the_last_word() -> None:
    assert key_kind("The API server port") == "port" and key_kind("") == ""


# Pairs written for this threshold (not taken from any benchmark): paraphrases of one subject and
# different subjects of one kind, embedded with the bundled MiniLM model.
PARAPHRASES = [("api port", "api server port"), ("database host", "db host"), ("deploy target", "deployment target"),
               ("session storage", "user session storage"), ("staging url", "staging environment url"),
               ("staging database host", "staging db host"), ("frontend package manager", "package manager")]
DIFFERENT = [("api port", "frontend port"), ("api port", "database port"), ("staging url", "production url"),
             ("staging db host", "prod db host"), ("unit test command", "integration test command"),
             ("admin port", "api port"), ("session storage", "cart storage"),
             ("frontend package manager", "backend package manager"), ("ios app linter", "android app linter"),
             ("log retention", "login retention"), ("web client retry", "webhook client retry")]


def test_siblings_stay_apart_however_close_and_a_key_near_two_siblings_names_neither() -> None:
    close = unit(1, 0.1, 0)  # as close to either as the embedder puts them (0.9 and more)
    parts = {"frontend package manager": unit(1, 0, 0), "backend package manager": unit(1, 0.05, 0)}
    assert resolve_key("backend package manager", close, {"frontend package manager": unit(1, 0, 0)}, 0.8) \
        == "backend package manager"
    assert resolve_key("package manager", close, parts, 0.8) == "package manager"
    # positive controls: near one part only, the key names it; a short form is the same word
    assert resolve_key("package manager", close, {"frontend package manager": unit(1, 0, 0)}, 0.8) \
        == "frontend package manager"
    assert resolve_key("prod db host", close, {"production database host": unit(1, 0, 0)}, 0.8) \
        == "production database host"


@pytest.fixture(scope="module")
def minilm():
    from actors.embedder import make_embedder

    return make_embedder("minilm")


def test_with_the_bundled_embedder_paraphrases_merge_and_other_subjects_do_not(minilm) -> None:
    from engine.settings import Settings

    tau = Settings().ingest.tau_key
    for a, b in PARAPHRASES:
        va, vb = (unit(*v) for v in minilm.embed([a, b]))
        assert resolve_key(b, vb, {a: va}, tau) == a, (a, b)
    for a, b in DIFFERENT:
        va, vb = (unit(*v) for v in minilm.embed([a, b]))
        assert resolve_key(b, vb, {a: va}, tau) == b, (a, b)


# ---- slots: a key of a shape kind against a key of a reading's own word (issue 11) ----

from engine.keys import key_subject, resolve_slot, slot_text, value_kind  # noqa: E402


def test_a_value_has_a_kind_by_its_shape() -> None:
    said = ["1.4.2", "20", "45 seconds", "02:15", "https://ci.example.org/x", "cache.prod.lan", "db.lan:6000",
            "var/spool/jobs", "~/.toolrc", "quince", "notes.md"]
    assert [value_kind(v) for v in said] == ["version", "number", "number", "time", "host", "host", "host",
                                             "location", "location", "name", "name"]
    assert value_kind("") == ""
    assert [value_kind(v) for v in ("wednesday", "Sundays", "sunday roast")] == ["day", "day", "name"]
    # an address is a host with or without its port (so a changed address can supersede); control: a version
    assert [value_kind(v) for v in ("10.4.7.19", "10.4.7.19:7000", "4.7.19")] == ["host", "host", "version"]


def test_a_slot_is_the_subject_with_the_kind_of_its_value() -> None:
    assert key_subject("upload window time") == "upload window"
    assert key_subject("upload window") == "upload window"  # no shape kind: all of it is subject
    assert slot_text("upload window", "02:15") == "upload window time"
    assert slot_text("upload window time", "03:40") == "upload window time"
    assert slot_text("upload window", "") == ""


SLOTS = {"retry budget": ("number", unit(1, 0, 0)), "report server": ("host", unit(1, 0, 0)),
         "retry owner": ("name", unit(0.9, 0.1, 0))}


def test_a_shape_keyed_value_lands_on_the_reading_key_of_the_same_slot() -> None:
    assert resolve_slot("retry budget number", "9", unit(1, 0.1, 0), SLOTS, 0.8) == "retry budget"


def test_a_slot_of_another_value_kind_is_never_taken() -> None:
    only_host = {"report server": SLOTS["report server"]}
    assert resolve_slot("report number", "9", unit(1, 0, 0), only_host, 0.8) == "report number"
    assert resolve_slot("report host", "quince.a.lan", unit(1, 0, 0), only_host, 0.8) == "report server"  # control


def test_two_shape_keys_or_two_reading_keys_are_left_to_resolve_key() -> None:
    shaped = {"retry budget number": ("number", unit(1, 0, 0))}
    assert resolve_slot("retry number", "9", unit(1, 0, 0), shaped, 0.8) == "retry number"
    assert resolve_slot("retry limit", "9", unit(1, 0, 0), {"retry budget": SLOTS["retry budget"]}, 0.8) == \
        "retry limit"
    assert resolve_slot("retry number", "9", unit(1, 0, 0), {"retry budget": SLOTS["retry budget"]}, 0.8) == \
        "retry budget"  # positive control: one shape key, one reading key


def test_siblings_of_one_family_never_share_a_slot_however_close() -> None:
    known = {"admin console port": ("number", unit(1, 0, 0))}
    assert resolve_slot("public console number", "4300", unit(1, 0, 0), known, 0.8) == "public console number"
    # positive control: a subject that only drops or adds words is the same thing
    assert resolve_slot("admin ui console number", "4300", unit(1, 0, 0), known, 0.8) == "admin console port"


def test_a_distant_slot_stays_its_own() -> None:
    assert resolve_slot("upload number", "9", unit(0, 1, 0), SLOTS, 0.8) == "upload number"


# Slot pairs invented for this test (subjects and values checked against the development
# histories and the TIDE vocabulary: none is taken from them): one subject said by a reading and
# by a speaker's clause, and different subjects of one kind.
SAME_SLOT = [("badge refresh interval", "9 minutes", "badge refresh interval number", "14"),
             ("weekly digest time", "06:45", "weekly digest", "07:30"),
             ("webhook timeout", "12s", "webhook timeout number", "25s"),
             ("sitemap crawl cadence", "90 minutes", "sitemap crawl cadence number", "40")]
OTHER_SLOT = [("metrics port", "9311", "cache number", "6390"),
              ("attachment limit", "25mb", "webhook timeout number", "12s"),
              ("qa broker host", "mq.qa.lan", "live broker host", "mq.live.lan"),
              ("token ttl", "45m", "thumbnail ttl number", "20m"),
              ("admin console port", "4210", "public console number", "4300")]


def test_with_the_bundled_embedder_one_slot_meets_itself_and_not_another(minilm) -> None:
    from engine.settings import Settings

    tau = Settings().ingest.tau_key
    for known, held, new, value in SAME_SLOT:
        vk, vn = (unit(*v) for v in minilm.embed([slot_text(known, held), slot_text(new, value)]))
        assert resolve_slot(new, value, vn, {known: (value_kind(held), vk)}, tau) == known, (known, new)
    for known, held, new, value in OTHER_SLOT:
        vk, vn = (unit(*v) for v in minilm.embed([slot_text(known, held), slot_text(new, value)]))
        assert resolve_slot(new, value, vn, {known: (value_kind(held), vk)}, tau) == new, (known, new)


@pytest.mark.parametrize(("a", "b", "same"), [
    ("db", "database", True), ("prod", "production", True), ("stg", "staging", True), ("counter", "counters", True),
    ("log", "login", False), ("web", "webhook", False), ("db", "dashboard", False), ("ui", "unit", False),
    ("stg", "storage", False), ("ts", "tests", False), ("ci", "client", False),
])
def test_a_short_form_is_the_same_word_only_when_it_is_one(a: str, b: str, same: bool) -> None:
    from engine.keys import same_word

    assert same_word(a, b) is same and same_word(b, a) is same
