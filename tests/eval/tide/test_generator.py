from __future__ import annotations

from eval.tide.generator import DIMENSIONS, generate, generate_stream
from eval.tide.score import has_token
from eval.tide.vocab import FAMILIES, RETRACT, SECRET_STATE


def test_same_seed_gives_the_same_streams() -> None:
    assert generate(3, 2, distractors=10) == generate(3, 2, distractors=10)
    # stream i does not depend on how many streams were asked for
    assert generate_stream(3, 1, distractors=10) == generate(3, 2, distractors=10)[1]


def test_different_seeds_give_different_streams() -> None:
    a, b = generate(1, 2, distractors=10), generate(2, 2, distractors=10)
    assert [e.user for s in a for e in s.events] != [e.user for s in b for e in s.events]
    assert [p.question for s in a for p in s.probes] != [p.question for s in b for p in s.probes]


def test_every_dimension_is_probed_in_every_stream() -> None:
    for s in generate(0, 3, distractors=10):
        assert sorted({p.dimension for p in s.probes}) == sorted(DIMENSIONS)


def test_revised_values_never_repeat_and_share_no_token() -> None:
    for s in generate(5, 6, distractors=5):
        for p in s.probes:
            values = list(p.gold) + list(p.harmful)
            if p.dimension == "revision":
                assert len(set(values)) == len(values)
                assert not any(has_token(g, h) or has_token(h, g) for g in p.gold for h in p.harmful)


def test_gold_and_harmful_tokens_only_occur_in_their_own_history() -> None:
    """Distractor turns never mention a probe's values by accident (positive control: the fact turns do)."""
    for s in generate(7, 4, distractors=30):
        chatter = " ".join(e.user + " " + e.assistant for e in s.events if e.kind == "turn" and not e.dimension)
        for p in s.probes:
            for tok in p.gold + p.harmful:
                assert not has_token(chatter, tok), (p, tok)
                assert any(has_token(e.user, tok) for e in s.events if e.dimension == p.dimension)


def test_each_statement_kind_has_at_least_five_wordings() -> None:
    for fam in FAMILIES.values():
        assert len(fam.state) >= 5 and len(fam.change) >= 5, fam.name
    assert len(RETRACT) >= 5 and len(SECRET_STATE) >= 5


def test_revision_changes_are_worded_differently() -> None:
    for s in generate(11, 4, distractors=5):
        rev = [e.user for e in s.events if e.dimension == "revision"]
        assert len(rev) == len(set(rev))
