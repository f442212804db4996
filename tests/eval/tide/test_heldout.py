"""The held-out TIDE variant: valid streams, fresh wordings and values, shipped output untouched."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re

import pytest

from eval.tide import chatter, heldout_vocab, vocab
from eval.tide.generator import DIMENSIONS, PAIR, generate, generate_stream, vocab_for
from eval.tide.run import evaluate, run_streams
from eval.tide.score import has_token

SEEDS = (0, 7, 13)
# sha256 of the shipped generator's output (12 streams, default sizes), recorded on main at
# 8521b4b before the variant existed: the shipped variant must stay byte-identical.
SHIPPED_SHA256 = {
    0: "7a9f017aff0ff94b25b82a4f95779b0975a41b6c09c522b1c596016b3bec916f",
    7: "5a787b94591b2976630fac230c858ee509dacfe5c4579b8c104ec9a555c844d8",
    13: "93486413f210f75374e92a78a0c37336615a7079bd9f0349b3edba21040cc1a3",
}


def _sha(streams: list) -> str:
    blob = json.dumps([dataclasses.asdict(s) for s in streams], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


@pytest.mark.parametrize("seed", SEEDS)
def test_shipped_output_is_unchanged(seed: int) -> None:
    assert _sha(generate(seed, 12)) == SHIPPED_SHA256[seed]
    assert _sha(generate(seed, 12, variant="shipped")) == SHIPPED_SHA256[seed]


def _wordings(module: object) -> dict[str, list[str]]:
    """Every template string of a vocabulary module, by kind."""
    fams = module.FAMILIES.values()  # type: ignore[attr-defined]
    derived = module.DERIVED.values()  # type: ignore[attr-defined]
    return {
        "state": [t for f in fams for t in f.state],
        "change": [t for f in fams for t in f.change],
        "question": [t for f in fams for t in f.question],
        "canonical": [f.canonical for f in fams],
        "retract": list(module.RETRACT),  # type: ignore[attr-defined]
        "derived": [t for d in derived for t in d["state"]],
        "derived question": [t for d in derived for t in d["question"]],
        "oracle": [str(d["oracle"]) for d in derived],
        "secret": [*module.SECRET_STATE, *module.SECRET_QUESTION, module.SECRET_CANONICAL],  # type: ignore[attr-defined]
        "ack": list(module.ACKS),  # type: ignore[attr-defined]
    }


def _norm(t: str) -> str:
    t = re.sub(r"\{[A-Za-z]+\}", "", t.lower())
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", t).split())


def test_no_heldout_wording_equals_a_shipped_one() -> None:
    shipped = {t for ts in _wordings(vocab).values() for t in ts}
    held = [t for ts in _wordings(heldout_vocab).values() for t in ts]
    assert not [t for t in held if t in shipped]
    shipped_norm = {_norm(t) for t in shipped}
    assert not [t for t in held if _norm(t) in shipped_norm]
    assert len(held) == len(set(held)), "a held-out wording is listed twice"


def test_heldout_value_pools_share_no_named_value_with_the_shipped_ones() -> None:
    def named(m: object) -> set[str]:
        out: set[str] = set(m.PEOPLE) | set(m._TESTCMD) | set(m._STORES) | set(m._CI)  # type: ignore[attr-defined]
        for table in (m._PKG, m._LINT, m._VERSIONS):  # type: ignore[attr-defined]
            out |= {v for vs in table.values() for v in vs}
        return {v.lower() for v in out}

    shipped_branches = {"main", "master", "trunk", "develop", "mainline", "integration"}
    assert not named(vocab) & named(heldout_vocab)
    assert not shipped_branches & set(heldout_vocab._BRANCHES)
    shipped_svcs = {s for s, _, _ in vocab.SECRET_SERVICES}
    assert not shipped_svcs & {s for s, _, _ in heldout_vocab.SECRET_SERVICES}
    assert not set(vocab.PROJECTS) & set(heldout_vocab.PROJECTS)
    assert not set(vocab.DOMAINS) & set(heldout_vocab.DOMAINS)


def test_heldout_keeps_the_shipped_facts() -> None:
    """Same families, subjects and retractable families; same propagation subjects."""
    for name, f in vocab.FAMILIES.items():
        h = heldout_vocab.FAMILIES[name]
        assert h.instances == f.instances and h.retractable == f.retractable
        assert all(s in heldout_vocab.ALIASES for s in h.instances), name
    assert set(heldout_vocab.FAMILIES) == set(vocab.FAMILIES)
    assert {k: d["subject"] for k, d in heldout_vocab.DERIVED.items()} == {k: d["subject"] for k, d in vocab.DERIVED.items()}


def _all_values() -> set[str]:
    """Every value the held-out pools can produce (random shapes sampled widely)."""
    rng = random.Random(0)
    out: set[str] = set()
    for f in heldout_vocab.FAMILIES.values():
        for s in f.instances:
            out |= {f.values(rng, s) for _ in range(400)}
    return out


def test_no_wording_contains_a_value_by_accident() -> None:
    """A value may only appear where a template puts it: no wording, alias, ack or chatter line holds one."""
    texts = [t for ts in _wordings(heldout_vocab).values() for t in ts]
    texts += [a for names in heldout_vocab.ALIASES.values() for a in names]
    texts += [*heldout_vocab.RETRACT_ACKS, *heldout_vocab.SECRET_ACKS, *chatter.USER, *chatter.ASSISTANT,
              *chatter.FILES, *chatter.FUNCS, *chatter.TOPICS]
    texts = [re.sub(r"\{[A-Za-z]+\}", " ", t) for t in texts]
    values = _all_values() | {env for _, env, _ in heldout_vocab.SECRET_SERVICES}
    hits = [(v, t) for v in values for t in texts if has_token(t, v)]
    assert not hits, hits[:10]


def test_pools_are_large_and_seeds_draw_different_wordings() -> None:
    for f in heldout_vocab.FAMILIES.values():
        assert len(f.state) >= 8 and len(f.change) >= 8 and len(f.question) >= 4, f.name
        assert any(PAIR in t for t in f.state) and any(PAIR in t for t in f.change), f.name
    draws = [vocab_for("heldout", s) for s in SEEDS]
    for v in draws:
        for f in v.families.values():
            assert len(f.state) >= 5 and len(f.change) >= 5, f.name
    sigs = [tuple((f.state, f.change, f.question) for f in v.families.values()) for v in draws]
    assert len(set(sigs)) == len(SEEDS)
    assert vocab_for("heldout", 7) == vocab_for("heldout", 7)


@pytest.mark.parametrize("seed", SEEDS)
def test_heldout_streams_are_valid(seed: int) -> None:
    streams = generate(seed, 12, variant="heldout")
    assert streams == generate(seed, 12, variant="heldout")
    assert generate_stream(seed, 3, variant="heldout") == streams[3]
    shipped_words = {t for ts in _wordings(vocab).values() for t in ts}
    for s in streams:
        assert sorted({p.dimension for p in s.probes}) == sorted(DIMENSIONS)
        assert len(s.probes) == 2 * len(DIMENSIONS)
        history = [e for e in s.events if e.kind == "turn"]
        said = " ".join(e.user + " " + e.assistant for e in history)
        chat = " ".join(e.user + " " + e.assistant for e in history if not e.dimension)
        assert not any(PAIR in e.user or PAIR in e.assistant for e in history)
        assert not any(e.user in shipped_words for e in history if e.dimension)
        for p in s.probes:
            for tok in p.gold:  # every gold token is said somewhere in the history
                assert has_token(said, tok), (p, tok)
                assert has_token(p.oracle, tok), p
            for tok in p.gold + p.harmful:
                assert not has_token(chat, tok), (p, tok)
                own = " ".join(e.user + " " + e.assistant for e in history if e.dimension == p.dimension)
                assert has_token(own, tok), (p, tok)
            if p.dimension == "revision":
                values = list(p.gold) + list(p.harmful)
                assert len(set(values)) == len(values)
                rev = [e.user for e in history if e.dimension == "revision"]
                assert len(rev) == len(set(rev))


def test_heldout_differs_from_shipped_and_between_seeds() -> None:
    users = {seed: [e.user for s in generate(seed, 2, distractors=5, variant="heldout") for e in s.events
                    if e.dimension and e.kind == "turn"] for seed in SEEDS}
    assert len({tuple(u) for u in users.values()}) == len(SEEDS)
    shipped = [e.user for e in generate(0, 2, distractors=5)[0].events if e.dimension and e.kind == "turn"]
    assert not set(shipped) & set(users[0])


def test_some_values_are_only_said_by_the_assistant() -> None:
    """Pairs where the user asks and only the assistant's reply carries the value do occur."""
    n = 0
    for seed in SEEDS:
        for s in generate(seed, 12, distractors=0, variant="heldout"):
            for p in s.probes:
                evs = [e for e in s.events if e.kind == "turn" and e.dimension == p.dimension]
                for tok in p.gold:
                    n += any(has_token(e.assistant, tok) for e in evs) and not any(has_token(e.user, tok) for e in evs)
    assert n >= 10


def test_references_score_zero_and_one_on_heldout() -> None:
    streams = generate(13, 2, distractors=6, variant="heldout")
    assert evaluate(streams, run_streams(streams, "oracle", "engine"), seed=13, n_boot=20)["ntu"]["64"] == 1.0
    assert evaluate(streams, run_streams(streams, "none", "engine"), seed=13, n_boot=20)["ntu"]["64"] == 0.0


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError):
        generate(0, 1, variant="nope")


def test_cli_accepts_the_variant_flag() -> None:
    import argparse

    from eval.cli import add_bench_parser

    parser = argparse.ArgumentParser()
    add_bench_parser(parser.add_subparsers(dest="cmd"), argparse.ArgumentParser(add_help=False))
    assert parser.parse_args(["bench", "tide", "--variant", "heldout", "--seed", "7"]).variant == "heldout"
    assert parser.parse_args(["bench", "tide"]).variant == "shipped"


def test_ablations_build_valid_streams() -> None:
    from eval.tide.heldout_ablation import ABLATIONS, ablate

    base = vocab_for("heldout", 0)
    for name in ABLATIONS:
        s = generate(0, 1, distractors=0, vocab=ablate(base, name))[0]
        assert sorted({p.dimension for p in s.probes}) == sorted(DIMENSIONS), name
    assert not ablate(base, "wording-only").aliases
