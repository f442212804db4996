"""Tests for engine.miss_signals: corrections, memory questions and key terms read from user text."""

from __future__ import annotations

import pytest

from engine.miss_signals import is_correction, is_memory_question, key_terms, shared_terms

CORRECTIONS = [
    "no, it's 9090",
    "No — the staging host is staging2.example.com",
    "no it's 9090",
    "No the DB is Postgres",
    "nope, we use pnpm",
    "Nope — it lives in ops/rotations.yaml",
    "no: main, not master",
    "Hmm, no, the tests are in tests/unit",
    "I told you we use pnpm",
    "I've told you twice: pnpm",
    "I already said the API is on 9090",
    "I said pytest, not unittest",
    "as I said, deploys go through Argo",
    "like I said, pnpm",
    "that's wrong, it's in ops/",
    "That's not right. The port is 9090",
    "That is incorrect; staging is staging2",
    "that's outdated, we moved to 9091",
    "not 8080, 9090",
    "not npm — pnpm",
    "Not staging2 but staging3",
    "wrong, the branch is main",
    "Wrong port.",
    "incorrect. it's 3.12",
    "actually it's yarn",
    "Actually, we use Bun.",
    "we stopped using Redis last month",
    "we don't use Jest anymore",
    "we no longer use docker compose",
    "you forgot that we use uv",
    "\u201cno, it\u2019s the ops repo\u201d",
]

NOT_CORRECTIONS = [
    "no problem",
    "no, thanks",
    "No thanks!",
    "no worries",
    "No, that's fine.",
    "No, it's fine.",
    "No need, just run it",
    "nope",
    "no",
    "nothing",
    "nothing to add",
    "Node 20 is installed",
    "now run the tests",
    "now, add a test",
    "notes: fix lint",
    "Notice the failing test",
    "north region is fine",
    "normal mode please",
    "not yet, first fix lint",
    "not now",
    "not sure, check the docs",
    "we use pnpm",
    "we don't use tabs",
    "actually, can you also run lint?",
    "the answer is wrong in the test",
    "Can you add a test?",
    "What port does the API use?",
    "It's working now",
]


@pytest.mark.parametrize("text", CORRECTIONS)
def test_a_correction_at_the_start_of_a_turn_is_detected(text: str) -> None:
    assert is_correction(text)


@pytest.mark.parametrize("text", NOT_CORRECTIONS)
def test_chit_chat_and_look_alike_words_are_not_corrections(text: str) -> None:
    assert not is_correction(text)


def test_only_the_start_of_the_turn_counts() -> None:
    assert is_correction("no, it's 9090. Please restart the server.")  # positive control
    assert not is_correction("Please restart the server. No, it's 9090 now, I think.")
    assert not is_correction("")


def test_an_injected_memory_block_before_the_correction_is_ignored() -> None:
    text = '<dynmem-memory version="1">- The API port is 8080.</dynmem-memory>\nno, it\'s 9090'
    assert is_correction(text)


MEMORY_QUESTIONS = [
    "what port does the API use?",
    "which package manager do we use",
    "where do the fixtures live?",
    "how do I run the tests",
    "how do we deploy to prod?",
    "remind me who owns billing",
    "Remind me, what's the staging host?",
    "where is the pager rotation kept?",
    "what did we decide for the cache?",
    "do we use pnpm or npm?",
    "ok, and what's the deploy command?",
    "Who maintains the pager rotation?",
    "what is the staging URL?",
    "do you remember the db name?",
]

NOT_MEMORY_QUESTIONS = [
    "what do you think?",
    "how are you?",
    "why does this fail?",
    "what does this function do?",
    "what's wrong with the test?",
    "run the tests",
    "what I want is the port changed",
    "can you fix the lint?",
    "what's next?",
    "ok thanks",
    "which one?",
    "What happened?",
    "is it working?",
    "we use pnpm.",
]


@pytest.mark.parametrize("text", MEMORY_QUESTIONS)
def test_a_question_about_a_project_fact_is_a_memory_question(text: str) -> None:
    assert is_memory_question(text)


@pytest.mark.parametrize("text", NOT_MEMORY_QUESTIONS)
def test_questions_about_the_code_at_hand_are_not_memory_questions(text: str) -> None:
    assert not is_memory_question(text)


def test_a_memory_question_later_in_the_turn_counts() -> None:
    assert is_memory_question("Thanks for the fix. Where do the fixtures live?")
    assert not is_memory_question("Thanks for the fix. Looks good.")  # positive control above


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("where is the pager rotation kept?", ["pager", "rotation"]),
        ("what port does the API use?", ["port", "api"]),
        ("how do I run the tests", ["run", "tests"]),
        ("what's the staging host again?", ["staging", "host"]),
        ("where is src/payments/stripe.py?", ["src/payments/stripe.py", "src", "payments", "stripe.py", "stripe", "py"]),
        ("what is it?", []),
    ],
)
def test_key_terms_drop_stopwords_and_question_words(text: str, terms: list[str]) -> None:
    assert key_terms(text) == terms


def test_shared_terms_match_plural_forms() -> None:
    assert shared_terms(["pager", "rotation"], "the rotations live in ops/") == ["rotation"]
    assert shared_terms(["pager", "rotation"], "the build is green") == []
