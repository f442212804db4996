"""Questions and requests are never facts, whatever their shape (issue 13).

A corpus of questions and requests in the shapes agents and users send them (quoted by a
shell, bracketed, prefixed, multi-line, with code, ending in "pls", with the "?" inside
the quotes) goes through the rules extractor and the repair investigator: nothing is
stored. Positive controls: statements in the same shapes are still extracted, so the
filter is not simply refusing everything wrapped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.investigator_actor import InvestigatorService, RepairSignal
from actors.llm.rules import RulesClient
from actors.store.log_store import LogStore
from engine.models import TurnIn, Unit
from engine.utterance import asks, statements, unwrap

CLIENT = RulesClient()
SCOPE = "project:p"
NEUTRAL_REPLY = "Let me check."

QUESTIONS = [
    # quoted by a shell: `opencode run "..."` delivers the quotes (the two cases of the issue)
    '"Does the API run on port 3000?"',
    '"What AWS secret key does the deploy script use?"',
    "'Is the staging database on host db-staging.internal?'",
    "“Which package manager do we use, pnpm or npm?”",
    '"Does the API run on port 3000"?',
    '"Is the default branch main?" ',
    '"what port does the api listen on"',
    "«Is Redis 7.2 the cache for sessions?»",
    '"\\"Does the API run on port 3000?\\""',  # a quoted argument, as opencode delivers it (JSON-escaped)
    # bracketed
    "(is the API on port 8080?)",
    "[Does the worker read REDIS_URL from the environment?]",
    "{which node version do we pin in .nvmrc?}",
    "<does CI deploy to fly.io on every push?>",
    # prefixed
    "Q: does the API use port 3000?",
    "Question: is the deploy target fly.io",
    "> Does the frontend build with Vite 5?",
    "User: what branch do releases go out from?",
    "[question] is the test command `pnpm test`",
    "@build-agent: is the API on 7070 now?",
    "quick question: is staging on postgres 15 or 16",
    "**Q:** is the auth service on port 4000?",
    "/ask which port does the admin panel use",
    '> "(is it port 3000?)"',
    # multi-line
    "Does the API\nrun on port 3000?",
    '"Is the deploy target\nstill fly.io?"',
    "hey\nwhich port does the API use these days?",
    "So the API port,\nis it 3000 or 7070?",
    "Which Python version\ndoes the CI image use",
    # with code
    "Why does `pnpm test` fail on port 3000?",
    "Does `DATABASE_URL` point at db-main:5432?",
    "is the build command `npm run build` or `vite build`?",
    "What does this do?\n```\nexport API_PORT=3000\nnode server.js\n```",
    "Should `src/config/api.ts` read the port from `API_PORT`?",
    # ending in "pls" and other politeness
    "what port does the API use pls",
    "which package manager are we on? pls",
    "is the default branch main or master pls",
    "tell me the API port pls",
    "can you check whether the API is on 3000 pls 🙏",
    "Does deploy go out on Tuesdays? thanks!",
    # tag questions and confirmations
    "the API runs on port 3000, right",
    "we deploy to fly.io, correct?",
    "the test command is pnpm test, isn't it",
    "staging uses Postgres 16, yes or no",
    # requests for information
    "Tell me which port the API listens on.",
    "Check whether the worker reads REDIS_URL.",
    "Find out if we still use Yarn 1.22 in the monorepo.",
    "Can you confirm the API is on port 7070",
    "Could you look up the node version in .nvmrc",
    "I want to know if the deploy target is fly.io.",
    "Let me know which branch CI deploys from.",
    "Please verify that the cache is Redis 7.",
    "Remind me what port the admin panel uses.",
    "Do you know whether staging runs Postgres 15?",
    "I wonder if the API still listens on 9090.",
    "Any idea which port the API uses?",
    "Explain why the API moved to port 7070",
    # questions that start with a statement-like head
    "When do deploys go out?",
    "Where does the API read its port from?",
    "How do we run the tests, `make test`?",
    "What day do deploys go out?",
]

# The same shapes stating facts: extracted, with the value they state.
STATEMENTS = [
    ('"we moved the API to port 7070."', "7070"),
    ('"the API listens on port 9090"', "9090"),
    ("(we use pnpm, not npm)", "pnpm"),
    ("> the default branch is main.", "main"),
    ("Q: the deploy target is fly.io", "fly"),
    ("the API listens on port 9090 pls remember", "9090"),
    ("Does the API run on port 3000? No: we moved it to port 7070 last week.", "7070"),
    ("When you deploy, run `make release`.", "make release"),
]


def extract(user: str, assistant: str = NEUTRAL_REPLY) -> list[str]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1_000, user=user, assistant=assistant,
                request_id="r1")
    return [c.text for c in CLIENT.extract([unit], SCOPE)]


def test_the_corpus_is_large_and_varied() -> None:
    assert len(QUESTIONS) >= 50
    assert len(set(QUESTIONS)) == len(QUESTIONS)
    assert sum(q.lstrip().startswith(('"', "'", "“", "«")) for q in QUESTIONS) >= 8
    assert sum("\n" in q for q in QUESTIONS) >= 5
    assert sum("pls" in q for q in QUESTIONS) >= 4
    assert sum("`" in q for q in QUESTIONS) >= 5


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_question_or_request_is_never_extracted(question: str) -> None:
    assert extract(question) == []
    assert asks(question) or not statements([unwrap(question)]), question


@pytest.mark.parametrize(("statement", "value"), STATEMENTS)
def test_a_statement_in_the_same_shape_is_extracted(statement: str, value: str) -> None:
    found = extract(statement, "OK.")
    assert any(value in text for text in found), (statement, found)
    assert not any(text.startswith(('"', "(", ">", "Q:")) for text in found), found


def test_the_question_half_of_a_message_is_dropped_and_the_statement_half_kept() -> None:
    found = extract("Does the API run on port 3000? No: we moved it to port 7070 last week.")
    assert found and all("3000" not in t for t in found) and any("7070" in t for t in found)


@pytest.mark.parametrize("directive", ["use pnpm from now on pls", "don't use npm", "Do the release on Tuesdays",
                                       "When you deploy, run make release", "we use port 3000"])
def test_directives_and_statements_do_not_ask(directive: str) -> None:
    assert not asks(directive)


def test_unwrap_removes_wrapping_only() -> None:
    assert unwrap('"we use pnpm"') == "we use pnpm"
    assert unwrap('"Does X"?') == "Does X?"
    assert unwrap('> "(is it 3000?)"') == "is it 3000?"
    assert unwrap('we use "pnpm" now') == 'we use "pnpm" now'  # a quote inside stays
    assert unwrap("(a) first, (b) second") == "(a) first, (b) second"  # not one wrapping pair


# ---- repair: an investigation never proposes the user's own question --------------------------
T0 = 1_767_225_600_000


@pytest.mark.parametrize("question", [
    '"What day do deploys go out?"',
    '"Does the API run on port 3000?"',
    "Q: which port does the admin panel use pls",
    "Remind me what port the admin panel uses.",
])
def test_repair_never_stores_a_question(tmp_path: Path, question: str) -> None:
    store = LogStore(tmp_path / "log.sqlite")
    turns = [
        (question, "I do not know yet."),  # u1: the same question asked in an earlier session
        ("deploys go out on Thursdays; the admin panel uses port 8081 and the API server listens on port 7070", "Noted."),  # u2
        (question, "Let me check."),  # u3: the recall that abstained
    ]
    store.append([TurnIn(project="p", user=u, assistant=a, ts_ms=T0 + i) for i, (u, a) in enumerate(turns)], T0)
    try:
        signal = RepairSignal(query=question, kind="abstained", bound_turn=3, scope=SCOPE)
        inv = InvestigatorService.with_client(RulesClient()).investigate(signal, store)
    finally:
        store.close()
    accepted = [p.text for p in inv.accepted]
    assert not any(asks(text) for text in accepted), accepted
    assert all("u1" not in p.source_unit_ids or not asks(p.text) for p in inv.accepted)
    # positive control: the statement turn does answer the question, and repair finds it
    assert accepted and all(p.source_unit_ids == ("u2",) for p in inv.accepted), inv


def test_the_extraction_service_drops_a_question_from_any_client() -> None:
    from actors.extraction_actor import ExtractionService
    from engine.models import Candidate

    class Parrot:  # a model client that proposes whatever it is told (an LLM that quotes the question)
        name = "parrot"

        def extract(self, units: list[Unit], scope: str) -> list[Candidate]:
            return [Candidate(text=t, scope=scope, source_unit_ids=(units[0].id,), valid_from_ms=1)
                    for t in ('"Does the API run on port 3000?"', "The API listens on port 7070.")]

    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1, user='"Does the API run on port 3000?"',
                assistant="The API listens on port 7070.", request_id="r")
    got = ExtractionService.with_client(Parrot()).extract([unit], SCOPE)  # type: ignore[arg-type]
    assert [c.text for c in got.candidates] == ["The API listens on port 7070."]  # the statement stays
