"""How an assistant sums up its edits (issue 11): a statement after the file it was written in, and a
command shown in a short block after the line that introduces it. Wording is our own; each negative
has a positive control in the same shape."""

from __future__ import annotations

from actors.llm.rules import RulesClient
from actors.llm.rules_text import inline_commands
from engine.models import Unit

SCOPE = "project:p"
CLIENT = RulesClient()


def found(user: str, assistant: str = "") -> list[tuple[str, str]]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")
    return [(c.key, c.belief) for c in CLIENT.extract([unit], SCOPE)]


def test_a_statement_after_the_file_it_was_written_in_is_read_alone() -> None:
    edits = "Updated:\n\n- `conf/app.toml`: the session ttl is now 45 minutes\n- `README.md`: new setup steps"
    assert ("session ttl", "45 minutes") in found("please bump the session ttl", edits)
    # The control: the same statement without the file.
    assert ("session ttl", "45 minutes") in found("please bump the session ttl",
                                                  "Updated:\n\n- the session ttl is now 45 minutes")


def test_a_command_in_a_short_block_after_its_introduction_is_the_command() -> None:
    assert ("test command", "cargo nextest run") in found("", "Tests run with:\n\n```\ncargo nextest run\n```")
    assert ("deploy command", "/scripts/ship.sh prod") in found(
        "", "From now on you deploy with:\n\n```sh\n$ ./scripts/ship.sh prod\n```")


def test_a_block_that_is_not_a_few_commands_stays_a_block() -> None:
    four = "Tests run with:\n\n```\ncargo nextest run\ncargo test --doc\ncargo clippy\ncargo fmt --check\n```"
    assert inline_commands(four) == four and not found("", four)
    config = 'Tests run with:\n\n```json\n{"runner": "nextest"}\n```'
    assert inline_commands(config) == config
    # The control: one command line in the same frame is folded.
    assert inline_commands("Tests run with:\n\n```\ncargo nextest run\n```") == "Tests run with: `cargo nextest run`."


def test_a_users_pasted_block_is_never_read() -> None:
    assert not found("the deploy is now:\n\n```\nmake ship\n```", "ok")


def test_a_bare_run_answering_a_how_to_question_is_that_tasks_command() -> None:
    reply = "It's Vitest under the hood. Run:\n\n```\n./node_modules/.bin/vitest run\n```\n\nWatch mode is the default otherwise."
    assert ("test command", "/node_modules/.bin/vitest run") in found("how do i run the tests here, the readme is stale", reply)
    assert ("deploy command", "make ship") in found("how do we deploy this?", "Run `make ship` from main.")
    # Negatives: a question that asks no task, or two; the controls are above.
    assert not found("why is the build slow?", "Run `make ship`.")
    assert not [k for k, _ in found("how do i lint and test it?", "Run `make check`.") if k.endswith("command")]


def test_a_test_program_called_by_its_path_is_not_a_narrowed_run() -> None:
    assert ("test command", "/vendor/bin/phpunit") in found("", "run the tests with `./vendor/bin/phpunit`")
    assert not found("", "run the tests with `pytest tests/billing`")  # the control: a subset of the suite


def test_a_setting_named_by_its_identifier_takes_the_value_it_was_set_to() -> None:
    assert ("queue max depth", "500") in found("", "I've raised `queue.max_depth` from 200 to 500 in `config/prod.yaml`.")
    assert ("grace period minutes", "90 minutes") in found("", "`grace_period_minutes` -> 90 minutes (1.5h).")
    assert ("jump buffer", "0.12f") in found("", "Set `JumpBuffer = 0.12f` (was 0.2 in the scene).")
    assert ("retry backoff", "250ms") in found("", "`retryBackoff` is now 250ms.")


def test_what_is_not_an_identifiers_setting_is_left_to_other_readings() -> None:
    assert not [k for k, _ in found("", "moved `settings.toml` to 2 places") if "settings" in k]  # a file
    assert ("max retries env var", "5") in found("", "Set `MAX_RETRIES = 5`.")  # an environment variable
    assert not [k for k, _ in found("", "Set `limit = compute(5)` in the client.") if "limit" in k]  # code
