"""Project identity, `dynmem projects`, reads of unknown projects, `plugin install|uninstall` (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bridge.cli import main
from bridge.plugin_install import MARKER, SOURCE
from bridge.project import repository_root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    rc = main([*argv, "--json"])
    cap = capsys.readouterr()
    doc = json.loads(cap.out) if cap.out.strip() else None
    if rc != 0 and isinstance(doc, dict) and set(doc) == {"error", "code"}:
        return rc, None, doc["error"]  # with --json, an error is the one JSON document on stdout
    return rc, doc, cap.err


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop-api"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "api").mkdir(parents=True)
    return root


def test_repository_root_from_subfolders_worktrees_and_submodules(repo: Path, tmp_path: Path) -> None:
    assert repository_root(repo / "src" / "api") == repo.resolve()
    # a linked worktree names the main checkout
    (repo / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (repo / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    wt = tmp_path / "wt"
    (wt / "docs").mkdir(parents=True)
    (wt / ".git").write_text(f"gitdir: {repo / '.git' / 'worktrees' / 'wt'}\n")
    assert repository_root(wt / "docs") == repo.resolve()
    # a submodule (no commondir) is its own repository
    (repo / ".git" / "modules" / "lib").mkdir(parents=True)
    sub = repo / "lib"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/lib\n")
    assert repository_root(sub) == sub.resolve()
    # no repository: the directory itself
    plain = tmp_path / "plain" / "x"
    plain.mkdir(parents=True)
    assert repository_root(plain) == plain.resolve()


def test_commands_default_to_the_repository_and_unknown_projects_fail_without_creating(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("DYNMEM_HOME", str(data))
    monkeypatch.delenv("DYNMEM_PROJECT", raising=False)
    monkeypatch.chdir(repo / "src" / "api")
    rc, doc, err = run(capsys, "projects")
    assert rc == 0 and doc["projects"] == [] and doc["current"] == str(repo.resolve())

    # a read of a project that does not exist: exit 1, a clear message, nothing created
    rc, doc, err = run(capsys, "memories", "list")
    assert rc == 1 and doc is None and "no project named" in err and "dynmem projects" in err
    rc, _, err = run(capsys, "recall", "which port?", "--project", "typo")
    assert rc == 1 and "'typo'" in err
    assert not (data / "projects").exists() or list((data / "projects").iterdir()) == []

    rc, doc, err = run(capsys, "remember", "The API server listens on port 7070.")
    assert rc == 0, err
    monkeypatch.chdir(repo)  # the same project from the root
    rc, doc, err = run(capsys, "memories", "list")
    assert rc == 0 and [m["text"] for m in doc["memories"]] == ["The API server listens on port 7070."]
    rc, doc, _ = run(capsys, "projects")
    assert doc["projects"] == [{"project": str(repo.resolve()), "folder": doc["projects"][0]["folder"], "current": True}]
    monkeypatch.setenv("DYNMEM_PROJECT", "elsewhere")  # the override wins
    rc, doc, err = run(capsys, "memories", "list")
    assert rc == 1 and "'elsewhere'" in err


def test_a_cli_recall_is_passive_unless_live() -> None:
    from bridge.cli import build_parser

    args = build_parser().parse_args(["recall", "q", "--project", "p"])
    assert args.live is False
    assert build_parser().parse_args(["recall", "q", "--project", "p", "--live"]).live is True


def test_plugin_install_validates_records_and_is_idempotent(repo: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    data = tmp_path / "data"
    # a mistyped target: error, nothing created
    rc, _, err = run(capsys, "plugin", "install", "--project", str(tmp_path / "typo"))
    assert rc == 1 and "not an existing directory" in err and not (tmp_path / "typo").exists()

    # from a subfolder: installed at the repository root, with the executable and data dir recorded
    rc, doc, err = run(capsys, "plugin", "install", "--project", str(repo / "src"), "--data-dir", str(data))
    assert rc == 0, err
    dest = repo.resolve() / ".opencode" / "plugin" / "dynmem.js"
    assert doc["installed"] == str(dest) and doc["changed"] is True
    text = dest.read_text()
    line = next(x for x in text.splitlines() if MARKER in x and x.startswith("const INSTALLED"))
    recorded = json.loads(line.removeprefix("const INSTALLED = ").split("; //")[0])
    assert Path(recorded["bin"]).name == "dynmem" and Path(recorded["bin"]).exists()
    assert recorded["dataDir"] == str(data)
    assert text.replace(line, "") == SOURCE.read_text().replace(
        next(x for x in SOURCE.read_text().splitlines() if x.startswith("const INSTALLED")), "")
    # opencode will skip its runtime npm install there
    lock = json.loads((repo / ".opencode" / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == json.loads((repo / ".opencode" / "package.json").read_text())["dependencies"]
    assert (repo / ".opencode" / "node_modules").is_dir()

    # again: same bytes, reported unchanged
    rc, doc, _ = run(capsys, "plugin", "install", "--project", str(repo), "--data-dir", str(data))
    assert rc == 0 and doc["changed"] is False and dest.read_text() == text
    # global too: the project install reports it (the plugin registers once per directory)
    rc, doc, _ = run(capsys, "plugin", "install", "--global", "--data-dir", str(data))
    assert rc == 0 and Path(doc["installed"]) == tmp_path / "config" / "opencode" / "plugin" / "dynmem.js"
    rc, doc, _ = run(capsys, "plugin", "install", "--project", str(repo), "--data-dir", str(data))
    assert doc["also_installed_globally"] is True

    # uninstall removes ours only
    rc, doc, _ = run(capsys, "plugin", "uninstall", "--project", str(repo))
    assert rc == 0 and doc["removed"] == str(dest) and not dest.exists()
    rc, doc, _ = run(capsys, "plugin", "uninstall", "--project", str(repo))
    assert rc == 0 and doc["removed"] is None
    dest.write_text("export default async () => ({});\n")  # someone else's file with that name
    rc, _, err = run(capsys, "plugin", "uninstall", "--project", str(repo))
    assert rc == 1 and "not the dynmem plugin" in err and dest.exists()
    rc, _, err = run(capsys, "plugin", "install", "--project", str(repo))
    assert rc == 1 and "not overwritten" in err
