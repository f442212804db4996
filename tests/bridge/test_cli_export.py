"""`dynmem export` carries each memory's vector with the id of its vector space; `dynmem import`
reuses them only in the same space (issue 15: 100k memories import without a forward pass each)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bridge.cli import main

FACTS = ["The billing API listens on port 8443.", "Deploys of the storefront go out on Thursdays.",
         "Use pnpm, not npm, in the web workspace."]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    rc = main([*argv, "--json"])
    out = capsys.readouterr().out
    return rc, json.loads(out) if out.strip() else None


@pytest.fixture
def exported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    src = tmp_path / "src"
    for text in FACTS:
        assert run(capsys, "remember", text, "--project", "p", "--data-dir", str(src))[0] == 0
    out = tmp_path / "mem.jsonl"
    rc, doc = run(capsys, "export", str(out), "--project", "p", "--data-dir", str(src))
    assert rc == 0 and doc["memories"] == 3 and doc["vectors"] == 3
    return out


def _recall(capsys: pytest.CaptureFixture[str], data: Path, query: str) -> str:
    rc, doc = run(capsys, "recall", query, "--project", "q", "--data-dir", str(data))
    assert rc == 0
    return str(doc["context"])


def test_an_import_in_the_same_vector_space_reuses_the_exported_vectors(
        exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [json.loads(x) for x in exported.read_text().splitlines()]
    assert all(set(x) == {"memory", "vector"} and x["vector"]["dim"] == 384 for x in lines)
    rc, doc = run(capsys, "import", str(exported), "--project", "q", "--data-dir", str(tmp_path / "a"))
    assert rc == 0 and doc == {"imported": 3, "reused_vectors": 3}
    assert "8443" in _recall(capsys, tmp_path / "a", "which port does the billing API listen on?")


def test_another_vector_space_or_no_vectors_embeds_every_memory_again(
        exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DYNMEM_EMBEDDER", "hash")  # another embedder: the exported vectors mean nothing here
    rc, doc = run(capsys, "import", str(exported), "--project", "q", "--data-dir", str(tmp_path / "b"))
    assert rc == 0 and doc == {"imported": 3, "reused_vectors": 0}
    assert "8443" in _recall(capsys, tmp_path / "b", "billing API port 8443")
    monkeypatch.delenv("DYNMEM_EMBEDDER")
    plain = tmp_path / "plain.jsonl"
    rc, doc = run(capsys, "export", str(plain), "--no-vectors", "--project", "q", "--data-dir", str(tmp_path / "b"))
    assert rc == 0 and doc["vectors"] == 0 and all("vector" not in json.loads(x) for x in plain.read_text().splitlines())
    rc, doc = run(capsys, "import", str(plain), "--project", "q", "--data-dir", str(tmp_path / "c"))
    assert rc == 0 and doc == {"imported": 3, "reused_vectors": 0}


@pytest.mark.parametrize("damage", ["dim", "f32", "mixed"])
def test_a_bad_vector_line_is_refused_and_nothing_is_imported(
        exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    lines = [json.loads(x) for x in exported.read_text().splitlines()]
    if damage == "dim":
        lines[1]["vector"]["dim"] = 12
    elif damage == "f32":
        lines[1]["vector"]["f32"] = "not base64!"
    else:
        lines[1]["vector"]["embedder"] = "other/384"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    rc = main(["import", str(bad), "--project", "q", "--data-dir", str(tmp_path / "d"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc["code"] == "invalid_input" and ("line 2" in doc["error"] or "mixes" in doc["error"])
    assert not (tmp_path / "d" / "projects").exists() or not any((tmp_path / "d" / "projects").iterdir())
