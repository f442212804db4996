"""Readings of the configuration files an assistant shows as they stand (``actors.llm.rules_configs``).

Every file here is our own (made-up services, hosts and paths); none is taken from a benchmark history.
"""

from __future__ import annotations

import pytest

from actors.llm.rules import RulesClient
from actors.llm.rules_configs import config_findings
from actors.llm.rules_diffs import diff_findings
from engine.grounding import check_candidate
from engine.models import Unit

RELAY = ("I read through the repo. The relay's settings, `conf/relay.toml`:\n\n```toml\n[relay]\nlisten_port = 7311\n"
         "upstream = \"mq.yardline.lan\"\nverbose = true\n\n[store]\npath = \"/srv/relay/spool\"\nuser = \"${RELAY_USER}\"\n```\n")


def unit(assistant: str, user: str = "can you look at the relay first?") -> Unit:
    return Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")


def test_each_setting_of_a_shown_file_is_read_with_its_section_and_file() -> None:
    found = {f.key: f for f in config_findings(RELAY)}
    assert set(found) == {"relay listen_port", "relay upstream", "store path"}  # a plain word and a reference are not
    assert found["relay listen_port"].belief == "7311"
    assert found["relay listen_port"].text == "`listen_port = 7311` (under `[relay]` in conf/relay.toml)."
    assert found["store path"].belief == "/srv/relay/spool"


@pytest.mark.parametrize("intro", [
    "For the relay, `conf/relay.toml` could look something like this:",
    "An example `conf/relay.toml` from the vendor docs:",
    "I'd add this to `conf/relay.toml`:",
])
def test_a_file_offered_or_illustrated_is_not_read(intro: str) -> None:
    reply = f"{intro}\n\n```toml\n[relay]\nlisten_port = 7311\n```\n"
    assert config_findings(reply) == []


def test_a_block_that_names_no_file_or_is_no_configuration_is_not_read() -> None:
    assert config_findings("Here it is:\n\n```toml\n[relay]\nlisten_port = 7311\n```\n") == []
    assert config_findings("In `scripts/run.sh`:\n\n```bash\nPORT=7311 ./relay\n```\n") == []


def test_a_reply_that_asks_before_changing_reads_nothing() -> None:
    assert config_findings(RELAY + "\nWant me to raise the port?") == []


def test_a_file_the_user_pastes_is_not_read() -> None:
    pasted = "this is from the other team's box, `conf/relay.toml`:\n\n```toml\n[relay]\nlisten_port = 9001\n```\n"
    found = RulesClient().extract([unit("Noted.", user=pasted)], "project:p")
    assert not [c for c in found if c.belief == "9001"]


def test_a_list_item_is_read_under_the_block_it_belongs_to() -> None:
    reply = ("`deploy/compose.yaml` as it is now:\n\n```yaml\nservices:\n  cache:\n    image: valkey/valkey:8.0\n"
             "    ports:\n      - \"6390:6379\"\n```\n")
    found = {f.key: f.belief for f in config_findings(reply)}
    assert found == {"cache image": "valkey/valkey:8.0", "ports": "6390:6379"}


def test_a_later_diff_of_the_setting_lands_on_the_same_key() -> None:
    shown = config_findings(RELAY)
    changed = diff_findings("Done.\n\n```diff\n--- a/conf/relay.toml\n+++ b/conf/relay.toml\n [relay]\n-listen_port = 7311\n"
                            "+listen_port = 7420\n```\n")
    assert [f.key for f in changed] == ["relay listen_port"]
    assert "relay listen_port" in {f.key for f in shown}


def test_a_short_option_value_changed_by_a_diff_retires_its_option() -> None:
    (f,) = diff_findings("Done.\n\n```diff\n--- a/compose.yaml\n+++ b/compose.yaml\n   worker:\n"
                         "-    command: rq worker --burst --jobs=3\n+    command: rq worker --burst --jobs=5\n```\n")
    assert f.retires == ("--jobs=3",)  # "3" alone would identify nothing; the option it sets does


def test_every_reading_is_grounded_in_the_reply() -> None:
    u = unit(RELAY)
    found = RulesClient().extract([u], "project:p")
    assert {c.belief for c in found} >= {"7311", "mq.yardline.lan", "/srv/relay/spool"}
    assert all(check_candidate(c, {"u1": u}).ok for c in found)


@pytest.mark.parametrize("intro", [
    "Add this to `conf/relay.toml`:",
    "Put the following in your `.env`:",
    "The old `conf/relay.toml` (before the migration) had:",
    "I'll change the port in `conf/relay.toml`, currently:",
    "The upstream project's `conf/default.toml`:",
])
def test_a_file_to_write_or_as_it_was_is_not_read(intro: str) -> None:
    assert config_findings(f"{intro}\n\n```toml\n[relay]\nlisten_port = 7000\n```\n") == []


def test_a_test_fixture_and_a_credential_are_not_read() -> None:
    assert config_findings("`tests/fixtures/relay.toml`:\n\n```toml\nlisten_port = 9999\n```\n") == []
    shown = ("`conf/relay.toml` as it is:\n\n```toml\n[relay]\npassword = \"hunter-77x\"\napi_token = \"tok-1-2\"\n"
             "upstream = \"amqp://relay:pw-991@mq.lan:5672\"\nlisten_port = 7311\n```\n")
    assert [f.belief for f in config_findings(shown)] == ["7311"]


def test_a_value_keeps_its_comparison_and_a_key_its_name_only() -> None:
    shown = "`package.json` now:\n\n```json\n{\n  \"name\": \"relay-web\",\n  \"engines\": {\n    \"node\": \">=20.11\"\n  }\n}\n```\n"
    found = {f.key: f.belief for f in config_findings(shown)}
    assert found == {"name": "relay-web", "engines node": ">=20.11"}


def test_a_long_line_of_spaces_is_read_in_linear_time() -> None:
    import time
    t0 = time.perf_counter()
    config_findings("`conf/a.toml`:\n\n```toml\na = x" + " " * 5000 + "y\n```\n")
    assert time.perf_counter() - t0 < 2.0


def test_a_file_shown_as_it_now_reads_after_a_fix_is_read() -> None:
    reply = "Fixed the wrong port, `conf/relay.toml` now reads:\n\n```toml\n[relay]\nlisten_port = 7420\n```\n"
    assert [f.belief for f in config_findings(reply)] == ["7420"]
