"""How an assistant sums up its edits (issue 11): a statement after the file it was written in, and a
command shown in a short block after the line that introduces it. Wording is our own; each negative
has a positive control in the same shape."""

from __future__ import annotations

from actors.llm.rules import RulesClient
from actors.llm.rules_procedures import answered_command
from actors.llm.rules_text import inline_commands
from engine.models import Unit

SCOPE = "project:p"
CLIENT = RulesClient()


def found(user: str, assistant: str = "") -> list[tuple[str, str]]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")
    return [(c.key, c.belief) for c in CLIENT.extract([unit], SCOPE)]


def test_a_statement_after_the_file_it_was_written_in_is_read_alone() -> None:
    edits = "Here is what changed.\n\n* `settings/limits.ini`: the upload ceiling is now 80 MB\n* `CHANGELOG.md`: one line"
    assert ("upload ceiling", "80 mb") in found("raise the upload ceiling a bit", edits)
    # The control: the same statement without the file.
    assert ("upload ceiling", "80 mb") in found("raise the upload ceiling a bit",
                                                "Here is what changed.\n\n* the upload ceiling is now 80 MB")
    # A framework's name before a colon is no file.
    assert not [k for k, _ in found("", "Svelte.js: the version is 5.1 now") if k == "version"]


def test_a_command_in_a_short_block_after_its_introduction_is_the_command() -> None:
    assert ("test command", "go test -race") in found("", "The tests run with:\n\n```\ngo test -race\n```")
    assert ("release command", "/tools/push-release.sh") in found(
        "", "Releases are cut with:\n\n```sh\n$ ./tools/push-release.sh\n```")


def test_a_block_that_is_not_a_few_commands_stays_a_block() -> None:
    four = "The tests run with:\n\n```\ngo vet ./...\ngo test -race\ngolangci-lint run\ngo build ./...\n```"
    assert inline_commands(four) == four and not found("", four)
    config = 'The tests run with:\n\n```json\n{"parallel": 4}\n```'
    assert inline_commands(config) == config
    # The control: one command line in the same frame is folded.
    assert inline_commands("The tests run with:\n\n```\ngo test -race\n```") == "The tests run with: `go test -race`."


def test_the_closing_fence_of_a_long_block_opens_no_short_one() -> None:
    text = ("Config:\n\n```yaml\nworkers: 4\nqueue: main\nretries: 3\nsteps:\n```\n\nsome prose here\n\n"
            "Then publish with:\n\n```\ntask publish\n```\n")
    folded = inline_commands(text)
    assert "some prose here" in folded and "Then publish with: `task publish`." in folded


def test_a_users_pasted_block_is_never_read() -> None:
    assert not found("releases are cut with:\n\n```\ntask publish\n```", "ok")


def test_a_bare_run_answering_a_how_to_question_is_that_tasks_command() -> None:
    reply = "Biome covers it now. Run:\n\n```\nnpx biome check src\n```\n\nIt finishes in seconds."
    assert ("lint command", "npx biome check src") in found("how can we lint the frontend, eslint keeps timing out", reply)
    assert ("build command", "mdbook build") in found("how do we build the docs?", "Run `mdbook build`, it writes to book/.")
    # Negatives: a question that asks no task, or two; a reply whose sentence names a task of its own;
    # a version-control command. The controls are above.
    assert not found("why is the build slow?", "Run `make profile`.")
    assert not [k for k, _ in found("how do i lint and test it?", "Run `make check`.") if k.endswith("command")]
    assert ("build command", "make lint") not in found("how do we build the docs?", "Run `make lint` to lint it first.")
    assert not found("how do we build the docs?", "Run `git pull` to get the latest sources.")


def test_a_bare_run_is_read_in_linear_time() -> None:
    assert answered_command("how do we build the docs?", ["Run `x`" + " " * 20_000 + "a" * 20_000 + "`"]) is None


def test_a_test_program_called_by_its_path_is_not_a_narrowed_run() -> None:
    assert ("test command", "/bin/run-specs") in found("", "run the tests with `./bin/run-specs`")
    assert not found("", "run the tests with `pytest tests/billing`")  # the control: a subset of the suite


def test_a_setting_named_by_its_identifier_takes_the_value_it_was_set_to() -> None:
    assert ("cache max entries", "800") in found("", "Bumped `cache.max_entries` to 800; restart the worker to pick it up.")
    assert ("reminder lead hours", "36 hours") in found("", "`reminder_lead_hours`: 24 -> 36 hours, per support.")
    assert ("jump grace", "0.08") in found("", "Set `jumpGrace = 0.08` in the input config.")
    assert ("retry backoff", "250ms") in found("", "`retryBackoff` is now 250ms.")


def test_what_is_not_an_identifiers_setting_is_left_to_other_readings() -> None:
    assert not [k for k, _ in found("", "moved `settings.toml` to 2 places") if "settings" in k]  # a file
    assert ("max retries env var", "5") in found("", "Set `MAX_RETRIES = 5`.")  # an environment variable
    assert not [k for k, _ in found("", "Set `max_limit = compute(5)` in the client.") if "limit" in k]  # code
    assert ("max limit", "5") in found("", "Set `max_limit = 5` in the client.")  # the control: a literal
    # A value for a test or for now is not the setting.
    assert not [k for k, _ in found("", "I set `user.id` to 42 for the test fixture.") if k == "user id"]
    assert not [k for k, _ in found("", "Set `timeout_ms` to 500 temporarily while we look.") if k == "timeout ms"]
