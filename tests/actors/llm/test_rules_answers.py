"""A question the user asked about the project and the reply that answers it (``actors.llm.rules_answers``).

The pair is kept as said, the answer first, when the user's last sentence is the turn's one question
about what holds and the reply opens by stating a value. Questions about events, faults, advice,
estimates, or questions that carry a value of their own, keep nothing; each negative has a positive
control. The wording is our own."""

from __future__ import annotations

import pytest

from actors.llm.rules import RulesClient
from engine.models import Unit
from engine.utterance import asks

SCOPE = "project:p"
CLIENT = RulesClient("extractive")  # the pairs are read in the extractive profile
MARK = "(answer to:"


def answers(user: str, assistant: str) -> list[str]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")
    return [c.text for c in CLIENT.extract([unit], SCOPE) if MARK in c.text]


@pytest.mark.parametrize(
    ("user", "assistant", "value"),
    [
        ("remind me, who maintains the tariff tables?",
         "`tariffs/` belongs to Halvard Kallio per CODEOWNERS, he wrote the import job too.", "Halvard"),
        ("ok merged. where do the nightly snapshots end up",
         "They are written to `gs://orchard-snap/nightly/` by the `snapshot` cron job.", "gs://orchard-snap/nightly/"),
        ("which formatter does the web app use",
         "It's quillfmt, configured in `quillfmt.json` at the repo root.", "quillfmt"),
    ],
)
def test_a_question_and_the_reply_that_answers_it_are_kept_as_said(user: str, assistant: str, value: str) -> None:
    got = answers(user, assistant)
    assert len(got) == 1 and value in got[0], got
    assert got[0].startswith(assistant.split()[0])  # the answer first, as the reply said it
    assert not asks(got[0])  # a memory states what holds: it is no question


POSITIVE = ("which formatter does the web app use", "It's quillfmt, configured in `quillfmt.json` at the repo root.")


@pytest.mark.parametrize(
    ("user", "assistant"),
    [
        # an event or a fault, not what holds
        ("what happened to the staging deploy", "It's quillfmt, configured in `quillfmt.json` at the repo root."),
        ("where does the thumbnail step fail", "`thumbs.py` raises before the retry."),
        # advice on a task
        ("what do we need to change for the new domain", "`config/hosts.yml` and the `CNAME` record."),
        ("what's the cleanest way to split the module", "`payments/core` and `payments/adapters`, with one facade."),
        # the question carries a value the user may have wrong
        ("is the cache still on 6380, which port is it", "It listens on `6381` since the move to the new box."),
        # a measurement or an estimate
        ("which share of visits ends on the old app", "About 12% of weekly actives, from the analytics dashboard."),
        ("which share of sessions is mobile", "Roughly 40% of sessions come from `ios` and `android`."),
        # the reply declines or points at the screen
        ("who owns the search indexer", "I can't tell from the repo, `CODEOWNERS` has no entry for `indexer/`."),
        ("what's that banner at the top of the page", "That's the `MaintenanceNotice` component from `layout.tsx`."),
        # two questions: which one the reply answers first is not known
        ("which formatter does the web app use? and who set it up?", "It's quillfmt, configured in `quillfmt.json`."),
        # the question is not the last thing said, so the reply may answer the request after it
        ("which formatter does the web app use. also please bump the lockfile",
         "Bumped `pnpm-lock.yaml`, `pnpm install` is clean."),
        # a bare instruction answers a how-to question: a command, read by its own reading
        ("how do we build the docs", "Run `git pull` to get the latest sources first."),
        # a reply that denies before it answers (an assistant-style statement, so only the denial stops it)
        ("which queue does the mailer use", "No dedicated queue, `mailer` jobs share `default` with the rest."),
        # a relative clause is no question, and neither is a statement that starts with "what"
        ("we moved the thumbnails to the new box, which is much faster", "The `thumbs` worker now runs on `box-2`."),
        ("so what we do is deploy from main every friday", "Deploys go out from `main` by the `ship` job."),
        # the reply opens with no value
        ("who approves the tariff imports", "Someone from the platform group, it changes every sprint."),
    ],
)
def test_no_answer_is_kept_for_other_questions_and_replies(user: str, assistant: str) -> None:
    assert answers(user, assistant) == []
    assert len(answers(*POSITIVE)) == 1  # positive control


def test_the_default_profile_keeps_no_pairs() -> None:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=POSITIVE[0], assistant=POSITIVE[1],
                request_id="r1")
    assert not [c for c in RulesClient().extract([unit], SCOPE) if MARK in c.text]
    assert len(answers(*POSITIVE)) == 1  # positive control: the extractive profile keeps it
