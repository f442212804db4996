"""A wrong global memory can be listed, shown, patched and forgotten, through the CLI
(``--scope global``) and HTTP (``/v1/global/memories``), with audit (issue 17, failure 7)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from actors.launch import Runtime
from actors.pipeline import Pipeline
from bridge.app import create_app
from bridge.auth import TOKEN_FILE
from bridge.cli import main
from engine.settings import EmbedderSettings, Settings

WRONG = "Releases are cut on Fridays."


@pytest.fixture
def http(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    settings = Settings().model_copy(update={"embedder": EmbedderSettings(name="hash")})
    rt = Runtime(tmp_path, settings, use_ray=False)
    with TestClient(create_app(Pipeline(rt), tmp_path), raise_server_exceptions=False) as client:
        yield client, {"Authorization": f"Bearer {(tmp_path / TOKEN_FILE).read_text().strip()}"}
    rt.shutdown()


def test_http_global_memory_is_shown_patched_and_forgotten_with_audit(http: tuple[TestClient, dict[str, str]]) -> None:
    c, h = http
    r = c.post("/v1/memories", json={"project": "a", "text": WRONG, "scope": "global"}, headers=h)
    assert r.status_code == 200, r.text
    mid = r.json()["memory_ids"][0]
    assert c.get(f"/v1/memories/{mid}", params={"project": "a"}, headers=h).status_code == 404  # not a project's
    assert [m["id"] for m in c.get("/v1/global/memories", headers=h).json()["memories"]] == [mid]
    r = c.patch(f"/v1/global/memories/{mid}", json={"tier": "core"}, headers=h)
    assert r.status_code == 200 and r.json()["tier"] == "core", r.text
    assert WRONG in c.post("/v1/recall", json={"project": "b", "query": "when are releases cut?", "passive": True},
                           headers=h).json()["context"]  # positive control: every project reads it
    r = c.delete(f"/v1/global/memories/{mid}", headers=h)
    assert r.status_code == 200 and r.json()["retired"] == [mid], r.text
    assert WRONG not in c.post("/v1/recall", json={"project": "b", "query": "when are releases cut?", "passive": True},
                               headers=h).json()["context"]
    shown = c.get(f"/v1/global/memories/{mid}", headers=h).json()
    assert shown["memory"]["state"] == "retracted"
    actions = [e["action"] for e in shown["history"]]
    assert "retract" in " ".join(actions) and len(actions) >= 3, actions  # created, patched, retracted
    assert c.delete("/v1/global/memories/m_nope", headers=h).status_code == 404


def test_cli_scope_global_lists_shows_patches_and_forgets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = ["--data-dir", str(tmp_path / "d"), "--json"]
    assert main(["remember", WRONG, "--project", "a", "--scope", "global", *d]) == 0
    capsys.readouterr()
    assert main(["memories", "list", "--scope", "global", *d]) == 0
    rows = json.loads(capsys.readouterr().out)["memories"]
    assert [m["text"] for m in rows] == [WRONG]
    mid = rows[0]["id"]
    assert main(["memories", "show", mid, "--project", "a", *d]) != 0  # not a project's memory
    capsys.readouterr()
    assert main(["memories", "patch", mid, "--scope", "global", "--tier", "core", *d]) == 0
    assert json.loads(capsys.readouterr().out)["memory"]["tier"] == "core"
    assert main(["forget", mid, "--scope", "global", *d]) == 0
    assert json.loads(capsys.readouterr().out)["retired"] == [mid]
    assert main(["memories", "show", mid, "--scope", "global", *d]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["memory"]["state"] == "retracted" and len(doc["history"]) >= 3
