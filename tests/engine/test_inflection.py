"""The inflection stems: each inflected form and its plain word share one stem, other words do not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.inflection import stem

# Each row: forms that must fold together (plural, third person, past, -ing, a doubled consonant, y/ie).
FAMILIES = [
    ["migration", "migrations"],
    ["deploy", "deploys", "deployed", "deploying"],
    ["merge", "merges", "merged", "merging"],
    ["ship", "ships", "shipped", "shipping"],
    ["patch", "patches", "patched", "patching"],
    ["index", "indexes"],
    ["query", "queries", "queried", "querying"],
    ["rotate", "rotates", "rotated", "rotating"],
    ["schedule", "schedules", "scheduled", "scheduling"],
    ["bless", "blesses", "blessed"],
    ["owner", "owners"],
    ["key", "keys"],
]


@pytest.mark.parametrize("forms", FAMILIES, ids=lambda forms: forms[0])
def test_the_forms_of_one_word_share_a_stem(forms: list[str]) -> None:
    assert len({stem(f) for f in forms}) == 1, {f: stem(f) for f in forms}


def test_different_words_keep_different_stems() -> None:
    # Inflection only: the derivational steps of Porter2 (steps 2-4) are left out.
    assert stem("organization") != stem("organ")
    assert stem("generated") != stem("general")
    assert stem("hoping") != stem("hopping")  # the e comes back after a short syllable: hope, hop
    assert stem("status") == "status" and stem("class") == "class" and stem("gas") == "gas"  # not plurals
    assert stem("migrations") == stem("migration")  # positive control


def test_short_words_and_non_words_are_returned_as_they_are() -> None:
    for word in ["is", "go", "v1", "Users", "users.py", "src/api", "naïve", ""]:
        assert stem(word) == word
    assert stem("users") == "user"  # positive control


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=0, max_size=14))
def test_a_stem_is_lower_case_letters_and_never_longer_than_its_word(word: str) -> None:
    """A stem is letters a-z, no longer than its word (an e put back, "hoping" -> "hope",
    replaces a longer ending)."""
    s = stem(word)
    assert s == stem(word)  # deterministic (and cached)
    assert (s.isascii() and s.isalpha() and s.islower()) or s == word
    assert len(s) <= len(word)
