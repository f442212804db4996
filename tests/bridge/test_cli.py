"""The ``dynmem`` command in-process: help text, one-line errors, --json documents, replay.

``replay``/``observe``/``demo`` default to Ray, so they get ``--in-process`` here; the read
and write commands (recall, memories, remember, forget) run in-process by default.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from bridge.cli import build_parser, main

GOOD_1 = {"project": "shop", "session": "s1", "user": "from now on we use pnpm, not npm",
          "assistant": "Understood, switching to pnpm."}
GOOD_2 = {"project": "shop", "session": "s1", "user": "the dev server runs on port 8080", "assistant": "ok"}


class Cli:
    def __init__(self, capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
        self.capsys = capsys
        self.data_dir = data_dir

    def __call__(self, *argv: str, data_dir: Path | None = None) -> tuple[int, str, str]:
        self.capsys.readouterr()  # drop anything printed before
        rc = main([*argv, "--data-dir", str(data_dir or self.data_dir)])
        out, err = self.capsys.readouterr()
        return rc, out, err

    def json(self, *argv: str) -> Any:
        rc, out, err = self(*argv, "--json")
        assert rc == 0, err
        return one_json_document(out)


def one_json_document(out: str) -> Any:
    """Exactly one JSON document on stdout (and nothing else)."""
    doc, end = json.JSONDecoder().raw_decode(out.strip())
    assert end == len(out.strip()), f"more than one document on stdout: {out!r}"
    return doc


def assert_one_line_error(rc: int, out: str, err: str, code: str) -> None:
    assert rc != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error[{code}]: "), err
    assert "Traceback" not in err
    assert out == ""


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """Hash embedder (fast) unless a test asks for MiniLM."""
    monkeypatch.setenv("DYNMEM_EMBEDDER", "hash")
    return Cli(capsys, data_dir)


@pytest.fixture
def sem_cli(capsys: pytest.CaptureFixture[str], data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    monkeypatch.setenv("DYNMEM_EMBEDDER", "minilm")
    return Cli(capsys, data_dir)


def write_history(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ---- help ---------------------------------------------------------------------------------
def _walk(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, argparse.ArgumentParser, str | None]]:
    found: list[tuple[str, argparse.ArgumentParser, str | None]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for sub_name, sub in action.choices.items():
                found.append((f"{name} {sub_name}", sub, helps.get(sub_name)))
                found.extend(_walk(sub, f"{name} {sub_name}"))
    return found


def test_every_subcommand_and_argument_has_help() -> None:
    commands = _walk(build_parser(), "dynmem")
    names = {c for c, _, _ in commands}
    for expected in ("replay", "demo", "observe", "recall", "memories", "remember", "forget", "serve", "stop"):
        assert f"dynmem {expected}" in names
    for command, parser, help_text in commands:
        assert help_text and help_text.strip(), f"{command} has no help"
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            assert action.help and action.help.strip(), f"{command} {action.option_strings or action.dest} has no help"
        assert parser.format_help()  # renders


def test_help_exits_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["recall", "--help"])
    assert done.value.code == 0
    assert "--budget-tokens" in capsys.readouterr().out


# ---- replay ---------------------------------------------------------------------------------
def test_replay_reports_a_malformed_line_skips_it_and_keeps_the_others(cli: Cli, tmp_path: Path) -> None:
    history = write_history(tmp_path / "h.jsonl", [json.dumps(GOOD_1), '{"project": "shop", "user": "oops', json.dumps(GOOD_2)])
    rc, out, err = cli("replay", str(history), "--in-process")
    assert rc == 0, err
    assert "line 2" in err
    assert "line 1" not in err and "line 3" not in err
    memories = cli.json("memories", "list", "--project", "shop")["memories"]
    texts = " ".join(m["text"] for m in memories)
    assert "pnpm" in texts and "8080" in texts  # lines 1 and 3 went through the whole pipeline


def test_replay_json_lists_the_problem_and_prints_one_document(cli: Cli, tmp_path: Path) -> None:
    history = write_history(tmp_path / "h.jsonl", [json.dumps(GOOD_1), "[1, 2]", json.dumps(GOOD_2)])
    rc, out, err = cli("replay", str(history), "--in-process", "--json")
    assert rc == 0, err
    doc = one_json_document(out)
    assert doc["turns"] == 2 and doc["new_turns"] == 2
    assert [p["line"] for p in doc["problems"]] == [2]
    assert "line 2" in err


def test_strict_replay_fails_and_loses_nothing_accepted_before(cli: Cli, tmp_path: Path) -> None:
    first = write_history(tmp_path / "first.jsonl", [json.dumps(GOOD_1)])
    assert cli("replay", str(first), "--in-process")[0] == 0
    before = cli.json("memories", "list", "--project", "shop")["memories"]
    assert before  # positive control: the first replay stored something
    bad = write_history(tmp_path / "bad.jsonl", [json.dumps(GOOD_2), "not json at all", json.dumps(GOOD_2)])
    rc, out, err = cli("replay", str(bad), "--in-process", "--strict")
    assert rc != 0
    assert "line 2" in err and "Traceback" not in err
    after = cli.json("memories", "list", "--project", "shop")["memories"]
    assert {m["id"] for m in before} <= {m["id"] for m in after}
    # the same file without --strict still goes through
    rc, _, err = cli("replay", str(bad), "--in-process")
    assert rc == 0 and "line 2" in err


def test_replaying_the_same_file_twice_stores_each_turn_once(cli: Cli, tmp_path: Path) -> None:
    history = write_history(tmp_path / "h.jsonl", [json.dumps({**GOOD_1, "request_id": "t1"}),
                                                    json.dumps({**GOOD_2, "request_id": "t2"})])
    first = one_json_document(cli("replay", str(history), "--in-process", "--json")[1])
    second = one_json_document(cli("replay", str(history), "--in-process", "--json")[1])
    assert (first["new_turns"], first["already_logged"]) == (2, 0)
    assert (second["new_turns"], second["already_logged"]) == (0, 2)


def test_replay_of_a_missing_file_is_a_one_line_error(cli: Cli, tmp_path: Path) -> None:
    assert_one_line_error(*cli("replay", str(tmp_path / "nope.jsonl"), "--in-process"), code="invalid_input")


# ---- errors ---------------------------------------------------------------------------------
def test_recall_with_an_empty_query_is_a_one_line_error(cli: Cli) -> None:
    for query in ("", "   "):
        assert_one_line_error(*cli("recall", query, "--project", "shop"), code="empty_query")
    assert_one_line_error(*cli("recall", "which package manager?", "--project", "shop"), code="not_found")  # unknown
    assert cli("remember", "We use pnpm.", "--project", "shop")[0] == 0
    rc, out, err = cli("recall", "which package manager?", "--project", "shop")
    assert rc == 0, err  # positive control


def test_uncreatable_data_dir_is_a_one_line_error(cli: Cli, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for argv in (["recall", "anything", "--project", "shop"], ["memories", "list", "--project", "shop"],
                 ["remember", "The API uses port 7000.", "--project", "shop"]):
        assert_one_line_error(*cli(*argv, data_dir=blocker / "data"), code="data_dir")
    rc, _, err = cli("remember", "The API uses port 7000.", "--project", "shop", data_dir=tmp_path / "fine")
    assert rc == 0, err  # positive control (a read of a data directory that does not exist is not_found: DESIGN §11)
    rc, _, err = cli("recall", "anything", "--project", "shop", data_dir=tmp_path / "fine")
    assert rc == 0, err


def test_unknown_memory_is_not_found(cli: Cli) -> None:
    for action in ("show", "why"):
        assert_one_line_error(*cli("memories", action, "m_missing", "--project", "shop"), code="not_found")
    assert_one_line_error(*cli("forget", "m_missing", "--project", "shop"), code="not_found")
    made = cli.json("remember", "The API listens on port 7000.", "--project", "shop")["memory_ids"][0]
    assert cli("memories", "show", made, "--project", "shop")[0] == 0  # positive control


def test_invalid_input_is_a_one_line_error(cli: Cli) -> None:
    assert_one_line_error(*cli("recall", "x", "--project", "shop", "--k", "0"), code="invalid_input")
    assert_one_line_error(*cli("recall", "x", "--project", "a\x01b"), code="invalid_input")
    assert_one_line_error(*cli("recall", "x", "--project", "shop", "--as-of", "tuesday"), code="invalid_input")
    assert_one_line_error(*cli("forget", "--project", "shop"), code="invalid_input")
    assert_one_line_error(*cli("observe", "--project", "shop", "--user", "  ", "--in-process"), code="invalid_input")


# ---- --json documents -------------------------------------------------------------------------
def test_recall_json_is_one_document_of_the_documented_shape(cli: Cli) -> None:
    cli.json("remember", "The project uses pnpm as its package manager.", "--project", "shop")
    doc = cli.json("recall", "which package manager do we use?", "--project", "shop")
    assert {"retrieval_id", "abstained", "context", "memories", "conflicts"} <= set(doc)
    assert isinstance(doc["retrieval_id"], str) and isinstance(doc["abstained"], bool)
    assert isinstance(doc["context"], str) and isinstance(doc["conflicts"], list)
    assert doc["memories"], doc
    for m in doc["memories"]:
        assert {"id", "text", "score", "state", "scope", "kind"} <= set(m)
        assert m["text"] in doc["context"]


def test_why_json_has_every_score_term(cli: Cli) -> None:
    mid = cli.json("remember", "The project uses pnpm as its package manager.", "--project", "shop")["memory_ids"][0]
    doc = cli.json("memories", "why", mid, "--project", "shop")
    assert doc["memory"]["id"] == mid
    why = doc["why"]
    assert why is not None
    for term in ("cos", "lex", "pool_prior", "freshness", "tier_bonus", "score"):
        assert isinstance(why[term], (int, float)), term
    assert doc["history"] and doc["history"][0]["memory_id"] == mid


def test_observe_json_is_one_document(cli: Cli) -> None:
    doc = cli.json("observe", "--project", "shop", "--user", "we deploy with helm", "--assistant", "ok",
                   "--request-id", "r1", "--in-process")
    assert doc["created"] is True and doc["unit_id"]
    again = cli.json("observe", "--project", "shop", "--user", "we deploy with helm", "--assistant", "ok",
                     "--request-id", "r1", "--in-process")
    assert again["created"] is False and again["unit_id"] == doc["unit_id"]


# ---- remember / forget ------------------------------------------------------------------------
def test_remember_then_recall_finds_it(sem_cli: Cli) -> None:
    made = sem_cli.json("remember", "The staging database is called shop_staging.", "--project", "shop")
    mid = made["memory_ids"][0]
    doc = sem_cli.json("recall", "what is the staging database called?", "--project", "shop")
    assert any(m["id"] == mid for m in doc["memories"]) and "shop_staging" in doc["context"]
    sem_cli.json("remember", "Releases are cut on Tuesdays.", "--project", "elsewhere")
    other = sem_cli.json("recall", "what is the staging database called?", "--project", "elsewhere")
    assert all(m["id"] != mid for m in other["memories"])  # and not from another project


def test_forgotten_memory_is_never_recalled(sem_cli: Cli) -> None:
    mid = sem_cli.json("remember", "The staging database is called shop_staging.", "--project", "shop")["memory_ids"][0]
    query = "what is the staging database called?"
    assert any(m["id"] == mid for m in sem_cli.json("recall", query, "--project", "shop")["memories"])
    rc, out, err = sem_cli("forget", mid, "--project", "shop")
    assert rc == 0, err
    assert mid in out
    for q in (query, "shop_staging", "The staging database is called shop_staging."):
        doc = sem_cli.json("recall", q, "--project", "shop")
        assert all(m["id"] != mid for m in doc["memories"]) and "shop_staging" not in doc["context"]
    shown = sem_cli.json("memories", "show", mid, "--project", "shop")
    assert shown["memory"]["state"] != "active"


def test_forget_by_match_retracts_every_matching_memory(cli: Cli) -> None:
    a = cli.json("remember", "The staging host is staging.example.internal.", "--project", "shop")["memory_ids"][0]
    b = cli.json("remember", "The API listens on port 7000.", "--project", "shop")["memory_ids"][0]
    doc = cli.json("forget", "--match", "staging.example", "--project", "shop")
    assert a in doc["retired"] and b not in doc["retired"]
    states = {m["id"]: m["state"] for m in cli.json("memories", "list", "--project", "shop")["memories"]}
    assert states[b] == "active" and states.get(a) != "active"
