"""Readings of the diffs an assistant shows (``actors.llm.rules_diffs``): structure, not wording.

Every diff here is our own (made-up services and files); none is taken from a benchmark history.
"""

from __future__ import annotations

import re

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from actors.llm.rules import RulesClient
from actors.llm.rules_diffs import diff_findings, hunks
from engine.grounding import check_candidate
from engine.models import Unit


def fenced(body: str, info: str = "diff") -> str:
    return f"Done.\n\n```{info}\n{body}\n```\n"


def unit(assistant: str, user: str = "please make the change") -> Unit:
    return Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")


def test_a_changed_setting_gives_the_added_line_and_retires_the_old_value() -> None:
    reply = fenced("--- a/conf/relay.toml\n+++ b/conf/relay.toml\n [relay]\n-listen_port = 7311\n+listen_port = 7420\n")
    (f,) = diff_findings(reply)
    assert f.belief == "7420"
    assert f.retires == ("7311",)
    assert f.text == "`listen_port = 7420` (under `[relay]` in conf/relay.toml)."  # the section names the setting
    assert "7311" not in f.text  # the stale value is never part of the memory that is served


def test_each_file_of_a_diff_keeps_its_own_path() -> None:
    reply = fenced("--- a/.nvmrc\n+++ b/.nvmrc\n-node 18.19.0\n+node 20.11.1\n"
                   "--- a/ops/Containerfile\n+++ b/ops/Containerfile\n-ARG NODE_IMAGE=node:18.19.0-slim\n"
                   "+ARG NODE_IMAGE=node:20.11.1-slim\n")
    found = diff_findings(reply)
    assert [(f.belief, f.text.rsplit("(in ", 1)[1]) for f in found] == [
        ("20.11.1", ".nvmrc)."), ("node:20.11.1-slim", "ops/Containerfile).")]


def test_a_field_of_a_list_item_is_read_with_the_item_it_belongs_to() -> None:
    for between in ("     remote: upstream\n", ""):  # the item's head right above the field, or a line further up
        reply = fenced(f"--- a/deps.yml\n+++ b/deps.yml\n sources:\n   - name: tilelib\n{between}"
                       "-    tag: r41\n+    tag: r44\n     path: vendor\n")
        (f,) = diff_findings(reply)
        assert (f.belief, f.text) == ("r44", "`tag: r44` (under `- name: tilelib` in deps.yml).")
        assert "tilelib" in f.key  # the item names the setting: another item's tag is another key
    # a blank line ends the block: nothing above it encloses the change
    (g,) = diff_findings(fenced("--- a/deps.yml\n+++ b/deps.yml\n sources:\n   - name: tilelib\n     remote: x\n"
                                " \n-    tag: r41\n+    tag: r44\n"))
    assert g.text == "`tag: r44` (in deps.yml)."
    # a section header encloses the keys below it, however many lines above the change it is
    (h,) = diff_findings(fenced('--- a/r.toml\n+++ b/r.toml\n [spooler]\n host = "0.0.0.0"\n-port = 7311\n+port = 7420\n'))
    assert h.text == "`port = 7420` (under `[spooler]` in r.toml)."


def test_a_list_item_is_read_with_the_block_it_is_in() -> None:
    reply = fenced("--- a/deploy/compose.yml\n+++ b/deploy/compose.yml\n   cache:\n     ports:\n-      - \"6390:6379\"\n"
                   "+      - \"6391:6379\"\n")
    (f,) = diff_findings(reply)
    assert f.belief == "6391:6379"
    assert "under `ports:`" in f.text


def test_a_value_named_by_another_added_line_is_not_retired() -> None:
    # the old host moves to another setting: it is still in use, so nothing naming it goes stale
    reply = fenced("-primary = db-a.internal.example\n+primary = db-b.internal.example\n"
                   "-replica = db-c.internal.example\n+replica = db-a.internal.example\n")
    found = {f.belief: f.retires for f in diff_findings(reply)}
    assert found["db-b.internal.example"] == ()
    assert found["db-a.internal.example"] == ("db-c.internal.example",)


def test_a_plain_word_is_retired_only_together_with_what_went_with_it() -> None:
    reply = fenced("--- a/requirements.txt\n+++ b/requirements.txt\n-celery==5.3.6\n+celery==5.4.0\n", info="")
    (f,) = diff_findings(reply)
    assert (f.belief, f.retires) == ("5.4.0", ("5.3.6",))  # distinctive: retired alone
    # another package in its place is not the same line changed: no pairing, nothing retired
    assert diff_findings(fenced("-celery==5.3.6\n+dramatiq==1.16.0\n")) == []
    reply = fenced("-queue_backend = \"rq\" # 1.15\n+queue_backend = \"huey\" # 2.5\n")
    (f,) = diff_findings(reply)
    assert f.retires == ('rq" # 1.15',)  # never "1.15" alone: another tool may have that version


def test_prose_proposals_tests_and_code_calls_are_not_settings() -> None:
    change = "--- a/svc/limits.py\n+++ b/svc/limits.py\n-MAX_UPLOAD_MB = 40\n+MAX_UPLOAD_MB = 64\n"
    assert diff_findings(fenced(change))  # positive control: the same change, shown as done
    assert diff_findings("Want me to apply this?\n" + fenced(change)) == []
    assert diff_findings(fenced(change.replace("svc/limits.py", "tests/test_limits.py"))) == []
    assert diff_findings(fenced("-# uploads are capped at 40 MB\n+# uploads are capped at 64 MB\n")) == []
    assert diff_findings(fenced("-    blob = storage.put_object(key, data)\n+    blob = storage.put_blob(key, data)\n")) == []
    assert diff_findings(fenced(change, info="python").replace("-", " ").replace("+", " ")) == []  # no diff


def test_a_line_changed_beyond_recognition_is_not_a_change_of_one_setting() -> None:
    assert diff_findings(fenced("-timeout_s = 30\n+retry_policy = exponential backoff with jitter\n")) == []


def test_hunks_split_at_unchanged_lines_and_file_headers() -> None:
    body = "--- a/a.ini\n+++ b/a.ini\n-x = 1\n+x = 2\n keep\n-y = 3\n+y = 4\n--- a/b.ini\n+++ b/b.ini\n-z = 5\n+z = 6\n"
    found = list(hunks(fenced(body)))
    assert [(h.path, h.removed, h.added) for h in found] == [
        ("a.ini", ("x = 1",), ("x = 2",)), ("a.ini", ("y = 3",), ("y = 4",)), ("b.ini", ("z = 5",), ("z = 6",))]


def test_the_rules_client_stores_the_change_and_its_retirement_grounded_in_the_turn() -> None:
    reply = fenced("--- a/fly.toml\n+++ b/fly.toml\n-primary_region = \"us-sea-1\"\n+primary_region = \"ca-yyz-1\"\n")
    u = unit(reply, user="move the app to Toronto")
    found = RulesClient().extract([u], "project:p")
    change = [c for c in found if not c.negated]
    retired = [c for c in found if c.negated]
    assert [c.belief for c in change] == ["ca-yyz-1"]
    assert [c.belief for c in retired] == ["us-sea-1"]
    assert all(check_candidate(c, {"u1": u}).ok for c in found)


_VALUE = st.from_regex(r"[a-z][a-z0-9]{1,6}(?:[.-][a-z0-9]{1,5}){0,2}", fullmatch=True)
_NAME = st.from_regex(r"[a-z][a-z_]{2,12}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_NAME, _VALUE, _VALUE), min_size=1, max_size=5), st.sampled_from(["=", ":", " "]))
def test_every_reading_is_grounded_in_the_reply(rows: list[tuple[str, str, str]], sep: str) -> None:
    body = "".join(f"-{n}{sep}{old}\n+{n}{sep}{new}\n" for n, old, new in rows)
    reply = fenced("--- a/x.conf\n+++ b/x.conf\n" + body)
    removed = "\n".join(line for line in body.splitlines() if line.startswith("-"))
    added = {line[1:].strip() for line in body.splitlines() if line.startswith("+")}
    for f in diff_findings(reply):
        assert f.belief in reply  # the value is said as written
        shown = re.match(r"`(.*)` \(in x\.conf\)\.$", f.text)
        assert shown and shown.group(1) in added  # the added line as written, never reworded
        for value in f.retires:
            assert value in removed  # only what a removed line said is retired
    u = unit(reply)
    assert all(check_candidate(c, {"u1": u}).ok for c in RulesClient().extract([u], "project:p"))


def test_a_value_with_a_bracket_keeps_it_closed() -> None:
    reply = fenced("--- a/docs/oncall.md\n+++ b/docs/oncall.md\n-Pager lead: Tomasz Wren (@twren). Escalate after 15 min.\n"
                   "+Pager lead: Ilse Okafor (@iokafor). Escalate after 15 min.\n")
    (f,) = diff_findings(reply)
    assert f.belief.count("(") == f.belief.count(")"), f.belief
    assert all(r.count("(") == r.count(")") for r in f.retires), f.retires
    assert "iokafor" in f.belief and any("twren" in r for r in f.retires)


@pytest.mark.parametrize("old,new", [
    ("    if (count > limit) {", "    if (count >= limit) {"),                  # control flow opening a block
    ("    slot = base * PAGE_WORDS;", "    slot = (uint16_t)base * PAGE_WORDS;"),  # arithmetic, a C cast
    ("        return total", "        return total_cents"),                    # a return statement
    ("from zoneinfo import ZoneInfo", "from zoneinfo import ZoneInfo, available_timezones"),
    ("use tokio::time::sleep;", "use tokio::time::{sleep, timeout};"),
    ("    assert retry(fetch, tries=3 + 1)", "    assert retry(fetch, tries=5 + 1)"),
    ("rows = store.scan(prefix, limit=limit)", "rows = store.scan(prefix, limit=limit) if ready else []"),
    ("left = total % 7", "left = total % 9"),
])
def test_a_changed_line_of_program_logic_is_no_setting(old: str, new: str) -> None:
    reply = fenced(f"--- a/src/core.x\n+++ b/src/core.x\n-{old}\n+{new}\n")
    assert diff_findings(reply) == []


@pytest.mark.parametrize("old,new,value", [
    ("celery==5.3.6", "celery==5.4.0", "5.4.0"),                                      # a pin is no comparison
    ('requires-python = ">=3.11"', 'requires-python = ">=3.12"', '">=3.12"'),       # quoted text is left out
    ('NIGHTLY_SCHEDULE = "0 3 * * *"', 'NIGHTLY_SCHEDULE = "30 4 * * *"', '"30 4 * * *"'),
    ("NIGHTLY_CRON=0 3 * * *", "NIGHTLY_CRON=30 4 * * *", "30 4"),                # an unquoted crontab
    ("django >= 4.2", "django >= 5.0", "5.0"),                                        # a pin with spaces
    ("const PORT = process.env.PORT || 3000;", "const PORT = process.env.PORT || 3100;", "3100"),  # a default
    ("include = [\"src/relay\"]", "include = [\"src/relay\", \"src/cli\"]", "src/cli"),  # a TOML key
    ("PAGE_SIZE = 50  # rows / page", "PAGE_SIZE = 80  # rows / page", "80"),             # a closing comment is left out
    ("require-node-version: 20.11", "require-node-version: 22.4", "22.4"),         # a key that starts like a keyword
    ("  devServer: { port: 5180 },", "  devServer: { port: 5190 },", "5190"),       # an inline object is no block
])
def test_a_changed_setting_that_looks_a_little_like_code_is_still_read(old: str, new: str, value: str) -> None:
    reply = fenced(f"--- a/conf/app.cfg\n+++ b/conf/app.cfg\n-{old}\n+{new}\n")
    (f,) = diff_findings(reply)
    assert value.strip('"') in f.belief or value in f.text


def test_a_kconfig_default_is_keyed_by_its_entry() -> None:
    reply = fenced(" config APP_UPLOAD_RETRIES\n     int \"Upload retries\"\n-    default 3\n+    default 5\n")
    (f,) = diff_findings(reply)
    assert f.key == "config app_upload_retries default" and f.belief == "5"
